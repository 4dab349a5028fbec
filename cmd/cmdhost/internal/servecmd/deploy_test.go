package servecmd

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The systemd unit in deploy/ passes systemd-analyze verify (with this
// binary for /usr/local/bin/cmdhost), with no warning either, and runs
// serve with the config file beside it, which serve reads.
func TestSystemdUnit(t *testing.T) {
	unit, err := os.ReadFile(filepath.Join(clitest.RepoRoot(t), "deploy", "cmdhost.service"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ExecStart=/usr/local/bin/cmdhost serve --config /etc/cmdhost/cmdhost.yaml$`).Find(unit)
	if m == nil {
		t.Fatal("deploy/cmdhost.service: want ExecStart=/usr/local/bin/cmdhost serve --config /etc/cmdhost/cmdhost.yaml")
	}
	// The example config file is one serve reads (the --plugins flag,
	// which wins, stops serve before it starts).
	_, errOut, code := clitest.Run(t, "serve", "--config", filepath.Join(clitest.RepoRoot(t), "deploy", "cmdhost.yaml"), "--plugins", "/no/such/folder")
	if code != base.ExitUsage || !strings.Contains(errOut, "--plugins /no/such/folder: no such folder") {
		t.Fatalf("deploy/cmdhost.yaml: %q, exit %d", errOut, code)
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("no systemd-analyze: the unit is not verified")
	}
	path := filepath.Join(t.TempDir(), "cmdhost.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/cmdhost", clitest.Binary)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || strings.Contains(string(out), "cmdhost.service") {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// serve tells systemd (NOTIFY_SOCKET, Type=notify) READY=1 once it serves
// and STOPPING=1 when its graceful stop begins.
func TestServeNotifiesSystemd(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cmd := exec.Command(clitest.Binary, "--cache-dir", clitest.CLICache(), "serve", "--plugins", clitest.Plugins, "--listen", clitest.FreeAddr(t), "--id", "cli-host",
		"--state-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	next := func() string {
		t.Helper()
		_ = conn.SetReadDeadline(time.Now().Add(time.Minute)) // hang guard
		buf := make([]byte, 256)
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("no notification: %v", err)
		}
		return string(buf[:n])
	}
	if got := next(); got != "READY=1" {
		t.Fatalf("first notification %q; want READY=1", got)
	}
	// Ready means serving: a call is answered at once.
	addr := cmd.Args[slices.Index(cmd.Args, "--listen")+1]
	if out, errOut, code := clitest.Run(t, "invoke", "echo", "-d", "hi", "--broker", "mqtt://"+addr, "--executor", "cli-host"); out != "hi" || code != 0 {
		t.Fatalf("invoke after READY=1: %q %q %d", out, errOut, code)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if got := next(); got != "STOPPING=1" {
		t.Fatalf("notification at SIGTERM %q; want STOPPING=1", got)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
}
