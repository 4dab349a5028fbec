package host_test

import (
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The on_timeout retry policy with a real guest through a real broker:
// the first attempt hangs until its execution timeout closes the module,
// the retry runs on a fresh instance and answers; the events say so.
func TestRetryOnTimeoutRunsOnAFreshInstance(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		var mu sync.Mutex
		var got []string
		sink := events.SinkFunc(func(ev events.Event) {
			mu.Lock()
			defer mu.Unlock()
			if ev.Kind == events.KindTimeout {
				got = append(got, fmt.Sprintf("%s/%s/%d", ev.Type, ev.Policy, ev.Attempt))
			}
		})
		// The execution timeout also bounds making the retry's fresh
		// instance: it is the host's default (2 s, sized for -race on a
		// busy machine), so that only the hanging attempts are cut.
		e := newEnvConfig(t, u, func(c *rpc.Config, cmds []rpc.Command) {
			c.Events = sink
			for i := range cmds {
				if cmds[i].Name == "probe-retry" {
					cmds[i].TimeoutRetries = 2
				}
			}
		}, "probe")
		// Warm the pool so that an idle, used instance is there to avoid.
		e.mustCall("probe-status", "")
		res, err := e.call("probe-retry", "2", 20*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Payload) != "attempt 2, call 1 on its instance" {
			t.Fatalf("%d %q, want attempt 2 on a fresh instance", res.Status, res.Payload)
		}
		res, err = e.call("probe-retry", "9", 20*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != 408 {
			t.Fatalf("%d %q, want 408 after the retries", res.Status, res.Payload)
		}
		// The last cut instance is discarded once its module has closed,
		// which may come just after the 408.
		testkit.WaitFor(t, "four probe instances to be replaced", func() bool { return e.plugins["probe"].Stats().Replaced == 4 })
		mu.Lock()
		defer mu.Unlock()
		if want := "[execution/retry/1 execution/retry/1 execution/retry/2 execution/fail/3]"; fmt.Sprint(got) != want {
			t.Fatalf("timeout events %v, want %s", got, want)
		}
	})
}
