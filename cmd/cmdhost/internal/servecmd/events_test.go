package servecmd

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// serve --events publishes each timeout as JSON telemetry on
// cmdhost/{id}/events, naming the plugin and its module digest; the log
// has it too.
func TestServePublishesTimeoutEvents(t *testing.T) {
	addr, stop := clitest.StartServe(t, nil, "--events", "--exec-timeout", "500ms")
	broker := "mqtt://" + addr
	evs := clitest.Subscribe(t, broker, "cmdhost/cli-host/events")
	_, errOut, code := clitest.Run(t, "invoke", "spin", "--timeout", "5s", "--broker", broker, "--executor", "cli-host")
	if code == 0 || !strings.Contains(errOut, "408") {
		t.Fatalf("invoke spin: %q %d, want a 408", errOut, code)
	}
	type event struct {
		Kind, Command, Plugin, Digest, Correlation, Type, Policy string
		BudgetMS                                                 int64 `json:"budget_ms"`
		ElapsedMS                                                int64 `json:"elapsed_ms"`
	}
	next := func() (event, *paho.Publish) {
		t.Helper()
		select {
		case msg := <-evs:
			var ev event
			if err := json.Unmarshal(msg.Payload, &ev); err != nil {
				t.Fatalf("%v: %s", err, msg.Payload)
			}
			return ev, msg
		case <-time.After(60 * time.Second):
			t.Fatal("no event published")
		}
		return event{}, nil
	}
	// First the warning at 80 % of the 500 ms, then the timeout.
	if w, msg := next(); w.Kind != "budget_warning" || w.Command != "spin" || w.ElapsedMS < 400 || w.ElapsedMS >= 500 {
		t.Fatalf("first event %s, want the budget warning", msg.Payload)
	}
	ev, msg := next()
	bin, err := os.ReadFile(filepath.Join(clitest.Plugins, "spin.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bin)
	if ev.Kind != "timeout" || ev.Command != "spin" || ev.Plugin != "spin" || ev.Digest != hex.EncodeToString(sum[:]) ||
		ev.Type != "execution" || ev.Policy != "fail" || ev.BudgetMS != 500 || ev.ElapsedMS < 500 || len(ev.Correlation) != 36 {
		t.Fatalf("event %s", msg.Payload)
	}
	if msg.Properties.ContentType != "application/json" {
		t.Errorf("content type %q", msg.Properties.ContentType)
	}
	log, _ := stop()
	if !strings.Contains(log, "msg=timeout command=spin type=execution") || !strings.Contains(log, "msg=budget_warning command=spin") {
		t.Errorf("serve's log lacks the timeout and the warning:\n%s", log)
	}
}

// The operator file's on_timeout retry reaches the executor: the first
// attempt of probe-retry hangs past its 300 ms, the retry answers on a
// fresh instance, and the events say retry then nothing more.
func TestServeRetryPolicyFromOperatorFile(t *testing.T) {
	dir := t.TempDir()
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "probe.wasm"), dir, "probe.wasm")
	op := `{"commands": {"probe-retry": {"timeout": "300ms", "onTimeout": "retry", "retries": 1}}}`
	if err := os.WriteFile(filepath.Join(dir, "probe.json"), []byte(op), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, stop := clitest.StartServeIn(t, dir, nil, "--events")
	broker := "mqtt://" + addr
	evs := clitest.Subscribe(t, broker, "cmdhost/cli-host/events")
	out, errOut, code := clitest.Run(t, "invoke", "probe-retry", "-d", "2", "--broker", broker, "--executor", "cli-host")
	if code != 0 || out != "attempt 2, call 1 on its instance" {
		t.Fatalf("invoke: %q %q %d", out, errOut, code)
	}
	var kinds []string
	for len(kinds) < 2 {
		select {
		case msg := <-evs:
			var ev struct{ Kind, Policy string }
			if err := json.Unmarshal(msg.Payload, &ev); err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, ev.Kind+"/"+ev.Policy)
		case <-time.After(60 * time.Second):
			t.Fatalf("events %v, want a warning and a retry", kinds)
		}
	}
	if strings.Join(kinds, " ") != "budget_warning/ timeout/retry" {
		t.Fatalf("events %v", kinds)
	}
	// Exhausted: 408 after the one retry.
	_, errOut, code = clitest.Run(t, "invoke", "probe-retry", "-d", "5", "--broker", broker, "--executor", "cli-host")
	if code == 0 || !strings.Contains(errOut, "408") {
		t.Fatalf("invoke: %q %d, want 408", errOut, code)
	}
	stop()
}
