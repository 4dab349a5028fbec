package clientcmd

import (
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

// Ctrl-C (SIGINT) or SIGTERM ends watch with status 130, as the table of
// docs/cli.md says; it exited 0, as if it had done its --count.
func TestWatchInterruptedExits130(t *testing.T) {
	addr, _ := clitest.StartServeIn(t, t.TempDir(), nil)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		w := clitest.StartLines(t, "--cache-dir", clitest.CLICache(), "watch", "--json", "--interval", "1h",
			"--broker", "mqtt://"+addr, "--executor", "cli-host")
		w.UntilContains(t, `"executor":"cli-host"`) // watch runs: its first refresh is out
		if err := w.Cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- w.Cmd.Wait() }()
		select {
		case err := <-exited:
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != base.ExitInterrupted {
				t.Errorf("watch after %v: %v; want exit status 130\n%s", sig, err, strings.Join(w.Seen, "\n"))
			}
		case <-time.After(time.Minute): // hang guard
			t.Fatalf("watch did not exit within a minute of %v", sig)
		}
	}
}
