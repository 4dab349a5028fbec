package host_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
)

// A guest that floods its output (100 times its line budget on stdout,
// 10 MiB of stderr, a flood of log calls) gets its answer, and the host
// answers echo afterwards: the flood went to the output
// limit, not to the log. (The test gives the floods a minute; the engine's
// TestGuestOutputLimited floods 100 MiB and a million lines.)
func TestHostileOutputThroughBroker(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		e := newEnvConfig(t, u, func(_ *rpc.Config, cmds []rpc.Command) {
			for i := range cmds {
				cmds[i].Timeout = time.Minute // the floods take ~1 s under -race on an idle machine
			}
		}, "../plugins-alt/chatty", "echo")
		for _, payload := range []string{"stdout 100000 1", "stderr 2560 4095", "log 20000 100"} {
			if r := e.mustCall("chatty", payload); r.Status != abi.StatusOK || string(r.Payload) != "done" {
				t.Fatalf("chatty %q: %+v", payload, r)
			}
		}
		if r := e.mustCall("echo", "still here"); r.Status != abi.StatusOK || string(r.Payload) != "still here" {
			t.Fatalf("echo after the floods: %+v", r)
		}
	})
}
