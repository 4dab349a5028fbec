package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// TestRollout (issue 28's acceptance, through the binary, on mosquitto
// with three hosts): a rollout of a module whose calls fail, over
// --max-error-rate while it is called in its watch window, stops after
// the first batch and rolls that batch back (a plugin new there is
// removed), the other hosts not reached, exit 1; a good module reaches
// all three, batch by batch, each outcome in the table.
func TestRollout(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	broker := brokertest.StartMosquitto(t).String()
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, []byte("rollout-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"roll-a", "roll-b", "roll-c"} {
		startServeIn(t, t.TempDir(), nil, "--broker", broker, "--id", id, "--admin-token-file", tokFile)
	}
	rollout := func(file string, extra ...string) (string, string, int) {
		return run(t, append([]string{"plugin", "rollout", file, "--executor", "roll-*", "--broker", broker, "--token-file", tokFile}, extra...)...)
	}

	// fail's every call fails; it is called on roll-a (the first batch)
	// for as long as the rollout runs.
	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code := rollout(filepath.Join(plugins, "fail.wasm"), "--batch", "1", "--watch", "4s", "--max-error-rate", "0.2", "--json")
		done <- result{out, errOut, code}
	}()
	var res result
	for calls := 0; ; calls++ {
		select {
		case res = <-done:
		default:
			run(t, "invoke", "fail", "--broker", broker, "--executor", "roll-a", "--timeout", "2s")
			continue
		}
		break
	}
	var rows []rolloutRow
	if res.code != 1 || json.Unmarshal([]byte(res.out), &rows) != nil || len(rows) != 3 || !strings.Contains(res.errOut, "over --max-error-rate") {
		t.Fatalf("rollout of a failing module: %q %q %d", res.out, res.errOut, res.code)
	}
	if r := rows[0]; r.Executor != "roll-a" || r.Outcome != outcomeRolledBack || r.Calls == 0 || r.Errors != r.Calls {
		t.Errorf("first batch: %+v, want rolled back after its calls failed", r)
	}
	for _, r := range rows[1:] {
		if r.Outcome != outcomeNotReached {
			t.Errorf("%s: %+v, want not reached", r.Executor, r)
		}
	}
	out, errOut, code := run(t, "hosts", "--broker", broker, "--executor", "roll-*")
	if code != 0 || strings.Contains(out, "fail@") {
		t.Errorf("after the rollback a host still serves fail: %q %q %d", out, errOut, code)
	}

	out, errOut, code = rollout(filepath.Join(plugins, "wat-echo.wasm"), "--batch", "2", "--watch", "1s")
	if code != 0 || strings.Count(out, " served ") != 3 || !strings.Contains(out, "roll-c  2") {
		t.Fatalf("rollout of a good module: %q %q %d", out, errOut, code)
	}
	out, _, _ = run(t, "hosts", "--broker", broker, "--executor", "roll-*")
	if strings.Count(out, "wat-echo@") != 3 {
		t.Errorf("not every host serves wat-echo after the rollout:\n%s", out)
	}
}

// TestRolloutP99: a batch whose new version answers slower than
// --max-p99 in its watch window is rolled back, though none of its calls
// failed.
func TestRolloutP99(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, []byte("p99-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, _ := startServeIn(t, t.TempDir(), nil, "--admin-token-file", tokFile)
	broker := "mqtt://" + addr
	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code := run(t, "plugin", "rollout", filepath.Join(plugins, "sleep.wasm"), "--executor", "cli-host", "--broker", broker,
			"--token-file", tokFile, "--watch", "3s", "--max-p99", "20ms", "--max-error-rate", "1", "--json")
		done <- result{out, errOut, code}
	}()
	var res result
	for {
		select {
		case res = <-done:
		default:
			run(t, "invoke", "sleep", "-d", "60", "--broker", broker, "--executor", "cli-host", "--timeout", "5s")
			continue
		}
		break
	}
	var rows []rolloutRow
	if res.code != 1 || json.Unmarshal([]byte(res.out), &rows) != nil || len(rows) != 1 || !strings.Contains(res.errOut, "over --max-p99 20ms") {
		t.Fatalf("rollout of a slow module: %q %q %d", res.out, res.errOut, res.code)
	}
	if r := rows[0]; r.Outcome != outcomeRolledBack || r.Errors != 0 || r.P99Ms < 20 {
		t.Errorf("the batch: %+v, want rolled back for its p99", r)
	}
}
