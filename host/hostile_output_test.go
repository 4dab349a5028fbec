package host_test

import (
	"net/url"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
)

// A guest that floods its output (100 times its line budget on stdout,
// 10 MiB of stderr, a flood of log calls) gets its answer, and the host
// answers echo afterwards: the flood went to the output
// limit, not to the log. (The floods are sized to finish well within the
// test host's 2 s execution timeout under -race; the engine's
// TestGuestOutputLimited floods 100 MiB and a million lines.)
func TestHostileOutputThroughBroker(t *testing.T) {
	forEachBroker(t, func(t *testing.T, u *url.URL) {
		e := newEnv(t, u, "../plugins-alt/chatty", "echo")
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
