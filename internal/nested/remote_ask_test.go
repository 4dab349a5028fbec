package nested_test

import (
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/nested"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// With RemoteAck, a remote branch cut by its nested deadline is cancelled
// on the remote executor (which would otherwise spin until the request's
// expiry), and a branch to an executor that is not there fails fast as
// unavailable.
func TestNestedRemoteAsk(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		a := newNestHost(t, "host-a", "nest")
		b := newNestHost(t, "host-b", "spin")
		ask := func(_ *rpc.Config, n *nested.Config) { n.RemoteAck = true }
		serveNestHost(t, u, a, ask)
		var blog testkit.LogBuffer
		serveNestHost(t, u, b, func(c *rpc.Config, _ *nested.Config) {
			c.Logger = slog.New(slog.NewTextHandler(&blog, nil))
		})
		call := nestCaller(t, u, "host-a")

		v := call(callSpec{Command: "spin", Executor: "host-b", TimeoutMs: 300})
		if v.Outcome != "timed_out" {
			t.Fatalf("%+v, want timed_out at the nested deadline", v)
		}
		testkit.WaitFor(t, "the call to spin to be cancelled", func() bool { return blog.Contains("msg=\"call cancelled\" command=spin") })
		testkit.WaitFor(t, "the spin instance to be replaced", func() bool { return b.plugins["spin"].Stats().Replaced == 1 })

		start := time.Now()
		// Unavailable is the ack window's answer (~1.5 s): the call's own
		// timeout, far longer, would end it as timed_out.
		v = call(callSpec{Command: "echo", Executor: "host-z", TimeoutMs: 30000})
		if took := time.Since(start); v.Outcome != "error" || v.Reason != "unavailable" || took >= 30*time.Second ||
			!strings.Contains(v.Message, "no executor answered") {
			t.Fatalf("%+v after %v, want unavailable before the call's 30 s timeout", v, took)
		}
	})
}
