package devcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// cmdhost dev builds a project, checks and installs its module into a
// running host's folder, and does it again at every change; a build that
// fails prints the compiler's output and leaves the served version alone.
func TestDev(t *testing.T) {
	testkit.Needs(t, testkit.Toolchains)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH")
	}
	tmp, pluginsDir := t.TempDir(), t.TempDir()
	if out, errOut, code := clitest.Run(t, "new", "devc", "--lang", "c", "--dir", tmp); code != 0 {
		t.Fatalf("new: %q %q %d", out, errOut, code)
	}
	proj := filepath.Join(tmp, "devc")
	addr, _ := clitest.StartServeIn(t, pluginsDir, nil)
	broker := "mqtt://" + addr

	dev := clitest.StartLines(t, "--cache-dir", clitest.CLICache(), "dev", proj, "--plugins", pluginsDir, "--debounce", "100ms",
		"--broker", broker, "--executor", "cli-host")
	until := func(want string) {
		t.Helper()
		dev.UntilContains(t, want)
	}
	edit := func(old, new string) {
		t.Helper()
		file := filepath.Join(proj, "handler.c")
		src, err := os.ReadFile(file)
		if err != nil || !strings.Contains(string(src), old) {
			t.Fatalf("handler.c lacks %q (%v)", old, err)
		}
		if err := os.WriteFile(file, []byte(strings.Replace(string(src), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	until("installed as " + filepath.Join(pluginsDir, "devc.wasm"))
	until("watching " + proj)
	clitest.UntilAnswer(t, broker, "devc", "hi", time.Minute)

	edit("cmdhost_reply(resp, req->payload, req->payload_len);", `cmdhost_reply_text(resp, "v2");`)
	until("changed: " + filepath.Join(proj, "handler.c"))
	until("valid: 4 command(s) (devc, devc-count, devc-event, devc-fetch)")
	until("installed as")
	clitest.UntilAnswer(t, broker, "devc", "v2", time.Minute)

	edit(`cmdhost_reply_text(resp, "v2");`, `cmdhost_reply_text(resp, "v3")`) // no semicolon
	until("build failed")
	until("error:") // the compiler's own words
	if out, _, code := clitest.Run(t, "invoke", "devc", "-d", "hi", "--broker", broker, "--executor", "cli-host"); out != "v2" || code != 0 {
		t.Fatalf("after a failed build the host answers %q (exit %d); want the last good version's v2", out, code)
	}

	_ = dev.Cmd.Process.Signal(syscall.SIGINT)
	if err := dev.Cmd.Wait(); err != nil {
		t.Fatalf("dev after Ctrl-C: %v", err)
	}

	// --once: one round, its outcome in the exit status.
	out, _, code := clitest.Run(t, "dev", proj, "--plugins", pluginsDir, "--once")
	if code != base.ExitFailed || !strings.Contains(out, "build failed") {
		t.Fatalf("dev --once on a broken project: %q, exit %d", out, code)
	}
	edit(`cmdhost_reply_text(resp, "v3")`, `cmdhost_reply_text(resp, "v3");`)
	if out, _, code := clitest.Run(t, "dev", proj, "--plugins", pluginsDir, "--once"); code != 0 || !strings.Contains(out, "installed as") {
		t.Fatalf("dev --once: %q, exit %d", out, code)
	}
	clitest.UntilAnswer(t, broker, "devc", "v3", time.Minute)
	if _, errOut, code := clitest.Run(t, "dev", t.TempDir(), "--plugins", pluginsDir); code != base.ExitUsage || !strings.Contains(errOut, "has no cmdhost.json: cmdhost new NAME writes one") || !strings.Contains(errOut, "or give it a Makefile") {
		t.Fatalf("dev in a folder without a manifest or a Makefile: %q, exit %d", errOut, code)
	}
}
