package servecmd

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// serve --max-response-bytes bounds every plugin's replies, and an
// operator file's maxResponseBytes one plugin's: a reply over its bound
// is answered 500 naming the bound and where it is set, and the Go
// guest's log says so too.
func TestServeMaxResponseBytes(t *testing.T) {
	dir := t.TempDir()
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "echo.wasm"), dir, "echo.wasm")
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "wat-echo.wasm"), dir, "wat-echo.wasm")
	if err := os.WriteFile(filepath.Join(dir, "wat-echo.json"), []byte(`{"maxResponseBytes": 100000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var guestLog []string
	addr, stop := clitest.StartServeIn(t, dir, func(line string) {
		if strings.Contains(line, "source=guest") {
			mu.Lock()
			guestLog = append(guestLog, line)
			mu.Unlock()
		}
	}, "--max-response-bytes", "2000")
	big := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 3000)), 0o644); err != nil {
		t.Fatal(err)
	}
	host := []string{"--broker", "mqtt://" + addr, "--executor", "cli-host"}

	out, errOut, code := clitest.Run(t, append([]string{"invoke", "echo", "-f", big}, host...)...)
	if code != base.ExitFailed || out != "" || !strings.Contains(errOut, "status 500") ||
		!strings.Contains(errOut, "exceeds the limit of 2000 (serve --max-response-bytes, or the plugin's operator maxResponseBytes)") {
		t.Fatalf("a 3000-byte echo over a 2000-byte bound: %q %q %d", out, errOut, code)
	}
	if out, errOut, code := clitest.Run(t, append([]string{"invoke", "echo", "-d", "small"}, host...)...); out != "small" || code != 0 {
		t.Fatalf("a small echo: %q %q %d", out, errOut, code)
	}
	if out, errOut, code := clitest.Run(t, append([]string{"invoke", "wat-echo", "-f", big}, host...)...); len(out) != 3000 || code != 0 {
		t.Fatalf("wat-echo, whose operator file allows 100000 bytes: %d bytes, %q, exit %d", len(out), errOut, code)
	}
	stop() // the log is complete
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(guestLog, "\n"), "is over the host's response size bound (serve --max-response-bytes, operator maxResponseBytes)") {
		t.Errorf("the Go guest's log does not say its response was too large: %q", guestLog)
	}
}

// --max-response-bytes out of its range is a usage error.
func TestServeMaxResponseBytesRange(t *testing.T) {
	for _, v := range []string{"0", "300000000"} {
		_, errOut, code := clitest.Run(t, "serve", "--plugins", t.TempDir(), "--listen", clitest.FreeAddr(t), "--max-response-bytes", v)
		if code == 0 || !strings.Contains(errOut, "--max-response-bytes must be between 1 and 267386880") {
			t.Errorf("--max-response-bytes %s: %q, exit %d", v, errOut, code)
		}
	}
}
