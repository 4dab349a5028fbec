package plugincmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clientcmd"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
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
		clitest.StartServeIn(t, t.TempDir(), nil, "--broker", broker, "--id", id, "--admin-token-file", tokFile)
	}
	rollout := func(file string, extra ...string) (string, string, int) {
		return clitest.Run(t, append([]string{"plugin", "rollout", file, "--executor", "roll-*", "--broker", broker, "--token-file", tokFile}, extra...)...)
	}

	// fail's every call fails; it is called on roll-a (the first batch)
	// for as long as the rollout runs.
	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code := rollout(filepath.Join(clitest.Plugins, "fail.wasm"), "--batch", "1", "--watch", "4s", "--max-error-rate", "0.2", "--json")
		done <- result{out, errOut, code}
	}()
	var res result
	for calls := 0; ; calls++ {
		select {
		case res = <-done:
		default:
			clitest.Run(t, "invoke", "fail", "--broker", broker, "--executor", "roll-a", "--timeout", "2s")
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
	out, errOut, code := clitest.Run(t, "hosts", "--broker", broker, "--executor", "roll-*")
	if code != 0 || strings.Contains(out, "fail@") {
		t.Errorf("after the rollback a host still serves fail: %q %q %d", out, errOut, code)
	}

	out, errOut, code = rollout(filepath.Join(clitest.Plugins, "wat-echo.wasm"), "--batch", "2", "--watch", "1s")
	if code != 0 || strings.Count(out, " served ") != 3 || !strings.Contains(out, "roll-c  2") {
		t.Fatalf("rollout of a good module: %q %q %d", out, errOut, code)
	}
	out, _, _ = clitest.Run(t, "hosts", "--broker", broker, "--executor", "roll-*")
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
	addr, _ := clitest.StartServeIn(t, t.TempDir(), nil, "--admin-token-file", tokFile)
	broker := "mqtt://" + addr
	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code := clitest.Run(t, "plugin", "rollout", filepath.Join(clitest.Plugins, "sleep.wasm"), "--executor", "cli-host", "--broker", broker,
			"--token-file", tokFile, "--watch", "3s", "--max-p99", "20ms", "--max-error-rate", "1", "--json")
		done <- result{out, errOut, code}
	}()
	var res result
	for {
		select {
		case res = <-done:
		default:
			clitest.Run(t, "invoke", "sleep", "-d", "60", "--broker", broker, "--executor", "cli-host", "--timeout", "5s")
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

// TestRollbackAfterRejectedRollout (issue 39): two hosts serve v1 of a
// plugin with v0 kept for a rollback; a rollout of v2 is rolled back on
// its first host on its own. v2 is not what that host keeps for a
// rollback, so a later `plugin rollback` of both serves v0 on both (it
// used to put the first on v2 and the second on v0). An install the
// host refuses for a plugin new there, listed as NAME(failed), is
// cleared by `plugin remove` (which used to answer "not being served").
func TestRollbackAfterRejectedRollout(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	broker := brokertest.StartMosquitto(t).String()
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, []byte("reject-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"rej-a", "rej-b"} {
		clitest.StartServeIn(t, t.TempDir(), nil, "--broker", broker, "--id", id, "--admin-token-file", tokFile)
	}
	admin := func(args ...string) (string, string, int) {
		return clitest.Run(t, append(args, "--broker", broker, "--executor", "rej-*", "--token-file", tokFile)...)
	}
	// v0 and v1: wat-echo, v1 with a custom section (another digest); v2
	// fails every call.
	v0, v1, v2 := filepath.Join(clitest.Plugins, "wat-echo.wasm"), filepath.Join(t.TempDir(), "v1.wasm"), filepath.Join(clitest.Plugins, "fail.wasm")
	bin, err := os.ReadFile(v0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v1, append(bin, 0, 4, 2, 'v', '1', 'x'), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{v0, v1} {
		if out, errOut, code := admin("plugin", "install", v, "--name", "app"); code != 0 {
			t.Fatalf("install %s: %q %q %d", v, out, errOut, code)
		}
	}

	done := make(chan int, 1)
	go func() {
		// A module of 3 MB compiles for a while on a loaded machine.
		_, _, code := admin("plugin", "rollout", v2, "--name", "app", "--batch", "1", "--watch", "3s", "--max-error-rate", "0.2", "--timeout", "60s")
		done <- code
	}()
	code := -1
	for code < 0 {
		select {
		case code = <-done:
		default:
			clitest.Run(t, "invoke", "fail", "--broker", broker, "--executor", "rej-a", "--timeout", "2s")
		}
	}
	if code != 1 {
		t.Fatalf("rollout of a failing module: exit %d, want 1 (rolled back)", code)
	}

	if out, errOut, code := admin("plugin", "rollback", "app"); code != 0 {
		t.Fatalf("rollback after the rollout: %q %q %d", out, errOut, code)
	}
	want := fileDigest(t, v0)
	for _, h := range fleetHosts(t, broker) {
		if len(h.Plugins) != 1 || h.Plugins[0].Digest != want {
			t.Errorf("%s after the rollback: %+v, want app at v0 %s", h.Executor, h.Plugins, base.Short(want))
		}
	}

	// A plugin dup declaring wat-echo, app's command, is refused on
	// every host.
	if out, errOut, code := admin("plugin", "install", v1, "--name", "dup"); code != 1 || !strings.Contains(out, "already served by plugin app") {
		t.Fatalf("install of a clashing plugin: %q %q %d, want refused", out, errOut, code)
	}
	if out, _, _ := clitest.Run(t, "hosts", "--broker", broker, "--executor", "rej-*"); strings.Count(out, "dup(failed)") != 2 {
		t.Fatalf("hosts after the refused install:\n%s", out)
	}
	if out, errOut, code := admin("plugin", "remove", "dup"); code != 0 {
		t.Fatalf("remove of a failed plugin: %q %q %d", out, errOut, code)
	}
	for _, h := range fleetHosts(t, broker) {
		if len(h.Plugins) != 1 || h.Plugins[0].Name != "app" {
			t.Errorf("%s after removing dup: %+v, want app alone", h.Executor, h.Plugins)
		}
	}
}

// fleetHosts is `cmdhost hosts --json` of the hosts named rej-*.
func fleetHosts(t *testing.T, broker string) []clientcmd.HostRow {
	t.Helper()
	out, errOut, code := clitest.Run(t, "hosts", "--broker", broker, "--executor", "rej-*", "--json")
	var hosts []clientcmd.HostRow
	if code != 0 || json.Unmarshal([]byte(out), &hosts) != nil || len(hosts) != 2 {
		t.Fatalf("hosts --json: %q %q %d", out, errOut, code)
	}
	return hosts
}
