package clientcmd

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// watch, not on a terminal, prints one JSON frame per refresh: the
// plugins with their counters and rates, and the timeouts (from --events)
// and reloads since the frame before.
func TestWatch(t *testing.T) {
	dir := t.TempDir()
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "echo.wasm"), dir, "echo.wasm")
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "spin.wasm"), dir, "spin.wasm")
	// spin is cut by its execution timeout: a timeout event, whatever the
	// machine's load (a call cut by the invoker's own timeout is a cancel).
	addr, _ := clitest.StartServeIn(t, dir, nil, "--events", "--exec-timeout", "500ms")
	host := []string{"--broker", "mqtt://" + addr, "--executor", "cli-host"}

	watch := clitest.StartLines(t, append([]string{"watch", "--interval", "100ms"}, host...)...)
	// until reads frames until one satisfies ok.
	until := func(what string, ok func(WatchFrame) bool) {
		t.Helper()
		watch.Until(t, "frame with "+what, func(line string) bool {
			var f WatchFrame
			if err := json.Unmarshal([]byte(line), &f); err != nil {
				t.Fatalf("a line that is not a frame: %q", line)
			}
			clitest.CheckJSONShape(t, "watch", line)
			return ok(f)
		})
	}
	plugin := func(f WatchFrame, name string) watchPlugin {
		for _, p := range f.Plugins {
			if p.Name == name {
				return p
			}
		}
		return watchPlugin{}
	}
	until("echo and spin serving", func(f WatchFrame) bool {
		return f.Executor == "cli-host" && plugin(f, "echo").State == "serving" && plugin(f, "spin").State == "serving"
	})
	for range 3 {
		if out, errOut, code := clitest.Run(t, append([]string{"invoke", "echo", "-d", "hi"}, host...)...); out != "hi" || code != 0 {
			t.Fatalf("invoke echo: %q %q %d", out, errOut, code)
		}
	}
	until("echo's 3 calls, at a rate", func(f WatchFrame) bool {
		p := plugin(f, "echo")
		return p.Calls == 3 && p.CallsPerSec > 0 && p.P99Ms > 0
	})
	if _, errOut, code := clitest.Run(t, append([]string{"invoke", "spin", "--timeout", "1m"}, host...)...); code != base.ExitFailed || !strings.Contains(errOut, "status 408") {
		t.Fatalf("invoke spin: %q, exit %d; want 408 from the execution timeout", errOut, code)
	}
	until("spin's timeout", func(f WatchFrame) bool {
		for _, h := range f.Happenings {
			if h.Kind == "timeout" && h.Plugin == "spin" && h.Command == "spin" && strings.HasPrefix(h.Detail, "execution ") {
				return true
			}
		}
		return false
	})
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "../plugins-alt/echo-v2.wasm"), dir, "echo.wasm")
	until("echo's reload", func(f WatchFrame) bool {
		for _, h := range f.Happenings {
			if h.Kind == "reload" && h.Plugin == "echo" && strings.Contains(h.Detail, "→") {
				return true
			}
		}
		return false
	})
	_ = watch.Cmd.Process.Signal(syscall.SIGINT)
	var exit *exec.ExitError
	if err := watch.Cmd.Wait(); !errors.As(err, &exit) || exit.ExitCode() != base.ExitInterrupted {
		t.Fatalf("watch after Ctrl-C: %v; want exit status 130", err)
	}
}

// On a terminal, watch draws its view in place; --count stops it; with no
// host it fails as the other client subcommands do.
func TestWatchTerminal(t *testing.T) {
	addr, _ := clitest.StartServe(t, nil)
	host := []string{"--broker", "mqtt://" + addr, "--executor", "cli-host"}
	out, errOut, code := clitest.Run(t, append([]string{"watch", "--count", "2", "--interval", "100ms"}, host...)...)
	if code != 0 || strings.Count(out, "\n") != 2 {
		t.Fatalf("watch --count 2 into a pipe: %q %q %d; want 2 JSON lines", out, errOut, code)
	}
	if _, errOut, code := clitest.Run(t, "watch", "--broker", "mqtt://"+addr, "--executor", "nobody"); code != base.ExitNoExecutor || !strings.Contains(errOut, `no answer from host "nobody"`) {
		t.Fatalf("watch with no host: %q %d", errOut, code)
	}
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1): the terminal view is not checked")
	}
	line := strings.Join(append([]string{clitest.Binary, "watch", "--count", "1"}, host...), " ")
	tty, err := exec.Command(script, "-qec", line, "/dev/null").Output()
	for _, want := range []string{"\x1b[H\x1b[2J", "cmdhost watch: host cli-host on mqtt://" + addr, "NAME", "BUSY", "CALLS/S", "DATA", "echo", "recent timeouts and reloads:"} {
		if err != nil || !strings.Contains(string(tty), want) {
			t.Errorf("watch on a terminal: %v, %q lacks %q", err, tty, want)
		}
	}
}
