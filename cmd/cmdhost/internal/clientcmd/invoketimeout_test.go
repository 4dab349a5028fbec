package clientcmd

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// With the defaults on both sides, a command that runs longer than the
// host's execution timeout ends with the host's 408, which names the
// command and its timeout, not with invoke's exit 6: invoke's default
// --timeout (15s) is longer than serve's --exec-timeout (10s). Both were
// 10 s, and the client gave up first.
func TestInvokeDefaultTimeoutOutlastsTheHosts(t *testing.T) {
	dir := t.TempDir()
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "sleep.wasm"), dir, "sleep.wasm")
	addr, _ := clitest.StartServeIn(t, dir, nil)
	start := time.Now()
	// sleep sleeps, no CPU spent; 12 s is past the host's 10 s and within invoke's 15 s.
	out, errOut, code := clitest.RunWithin(t, 2*time.Minute, "invoke", "sleep", "-d", "12000", "--broker", "mqtt://"+addr, "--executor", "cli-host")
	took := time.Since(start)
	t.Logf("invoke ended after %v, status %d: %s", took.Round(time.Millisecond), code, strings.TrimSpace(errOut))
	if code != base.ExitFailed || out != "" || !strings.Contains(errOut, "408") {
		t.Errorf("invoke sleep past the host's timeout: stdout %q, stderr %q, status %d; want the host's 408, status 1", out, errOut, code)
	}
}
