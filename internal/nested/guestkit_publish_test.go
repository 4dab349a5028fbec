package nested_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/topic"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// publishKitLanguages are the kit's languages whose SDK publishes
// (kit-publish).
var publishKitLanguages = []string{"go", "rust", "c", "as"}

// recorder is a wasm.Publisher that keeps what it is given.
type recorder struct {
	mu   sync.Mutex
	msgs []*abi.Message
	from []wasm.Caller
}

func (r *recorder) Publish(_ context.Context, c wasm.Caller, m *abi.Message) abi.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs, r.from = append(r.msgs, m), append(r.from, c)
	return abi.ResultOK
}

// TestGuestKitPublish runs kit-publish in each language: a message to a
// granted topic (with the request's tokens) reaches the host's publisher
// as the guest made it; one to another topic, to the host's own topics,
// over the call's bound or over the plugin's rate is refused with its
// typed error; one that breaks the rules is invalid.
func TestGuestKitPublish(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	grants := func(s ...string) []topic.Grant {
		var out []topic.Grant
		for _, g := range s {
			pg, err := topic.ParseGrant(g)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, pg)
		}
		return out
	}
	for _, lang := range publishKitLanguages {
		t.Run(lang, func(t *testing.T) {
			file := "../plugins-kit/kit-" + lang
			grant := wasm.PublishGrant{Topics: grants("events/{executorId}/#", "+/x"), MaxMessages: 1, MaxBytes: 8, Rate: 1, Burst: 4}
			h := newNestHostWith(t, "kit-host", wasm.Config{}, wasm.PluginConfig{PoolSize: 1, Grants: wasm.Grants{Publish: grant}}, file)
			rec := &recorder{}
			h.engine.SetPublisher(rec)
			p := h.plugins[file]
			call := func(payload string) string {
				t.Helper()
				ctx, cancel := context.WithTimeout(ctxT(t), 10*time.Second)
				defer cancel()
				resp, err := p.Invoke(ctx, &abi.Request{Command: "kit-publish", Payload: []byte(payload), ContentType: "text/plain",
					ExecutorID: "kit-host", CorrelationID: parentCorrelation})
				if err != nil || resp.Code() != 200 {
					t.Fatalf("kit-publish %q: %+v %v", payload, resp, err)
				}
				return string(resp.Payload)
			}
			for payload, want := range map[string]string{
				"events/kit-host/door open event": "ok",
				"events/other-host/door x":        "denied",
				"rpc/x x":                         "denied", // the host's, though +/x would match
				"elsewhere/y x":                   "denied",
				"events/kit-host/a 123456789":     "too-large",
				"events/kit-host/a x reserved":    "invalid",
				"events/+/a x":                    "invalid",
			} {
				if got := call(payload); got != want {
					t.Errorf("kit-publish %q: %s, want %s", payload, got, want)
				}
			}
			rec.mu.Lock()
			if len(rec.msgs) != 1 || rec.msgs[0].Topic != "events/kit-host/door" || string(rec.msgs[0].Payload) != "open" ||
				rec.msgs[0].Event == nil || rec.msgs[0].Event.Type != "kit.event" || rec.from[0].Plugin != "kit-"+lang {
				t.Fatalf("published: %+v from %+v", rec.msgs, rec.from)
			}
			rec.mu.Unlock()
			// The rate: a burst of 4, one a second; the call above and
			// the refused ones took none but the first.
			limited := 0
			for range 6 {
				if call("events/kit-host/r x") == "limit" {
					limited++
				}
			}
			if limited < 2 {
				t.Fatalf("%d of 6 publishes over a burst of 4 limited", limited)
			}
		})
	}
}
