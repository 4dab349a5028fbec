package nested_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// triggerKitLanguages are the kit's languages whose SDK declares triggers
// (kit.device.any.all).
var triggerKitLanguages = []string{"go", "rust", "c", "as"}

// TestGuestKitTrigger runs the kit's trigger in each language as the
// trigger receiver runs it: the description declares it on its filter,
// named after it; the handler reads the message's topic and its {token}
// level's value; a handled message is a 204 and a failed attempt an
// application error.
func TestGuestKitTrigger(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	const name, filter = "kit.device.any.all", "kit/{device}/+/#"
	for _, lang := range triggerKitLanguages {
		t.Run(lang, func(t *testing.T) {
			var log testkit.LogBuffer
			file := "../plugins-kit/kit-" + lang
			h := newNestHostWith(t, "kit-host", wasm.Config{Logger: slog.New(slog.NewTextHandler(&log, nil))}, wasm.PluginConfig{PoolSize: 1}, file)
			p := h.plugins[file]
			if c := p.Description().Command(name); c == nil || c.Trigger != filter || c.Topic != "" {
				t.Fatalf("the trigger %s: %+v", name, c)
			}
			message := func(payload string) *abi.Response {
				t.Helper()
				ctx, cancel := context.WithTimeout(ctxT(t), 10*time.Second)
				defer cancel()
				resp, err := p.Invoke(ctx, &abi.Request{Command: name, Topic: "kit/d1/temp/x", TopicTokens: map[string]string{"device": "d1"},
					Payload: []byte(payload), ContentType: "text/plain", ExecutorID: "kit-host", CorrelationID: parentCorrelation})
				if err != nil {
					t.Fatalf("%s %q: %v", name, payload, err)
				}
				return resp
			}
			if resp := message("21.5"); resp.Code() != abi.StatusNoContent || len(resp.Payload) != 0 {
				t.Errorf("handled: %+v", resp)
			}
			if !log.Contains(`msg="kit-trigger topic=kit/d1/temp/x device=d1 payload=21.5"`) {
				t.Errorf("the host log lacks the trigger's line:\n%s", log.String())
			}
			if resp := message("fail"); resp.Code() != abi.StatusInternalError || !resp.AppError ||
				resp.Message != "kit: deliberate failure on kit/d1/temp/x (device d1)" {
				t.Errorf("failed: %+v", resp)
			}
		})
	}
}
