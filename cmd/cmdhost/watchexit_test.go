package main

import (
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ctrl-C (SIGINT) or SIGTERM ends watch with status 130, as the table of
// docs/cli.md says; it exited 0, as if it had done its --count.
func TestWatchInterruptedExits130(t *testing.T) {
	addr, _ := startServeIn(t, t.TempDir(), nil)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		w := startLines(t, "--cache-dir", cliCache(), "watch", "--json", "--interval", "1h",
			"--broker", "mqtt://"+addr, "--executor", "cli-host")
		w.untilContains(t, `"executor":"cli-host"`) // watch runs: its first refresh is out
		if err := w.cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- w.cmd.Wait() }()
		select {
		case err := <-exited:
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
				t.Errorf("watch after %v: %v; want exit status 130\n%s", sig, err, strings.Join(w.seen, "\n"))
			}
		case <-time.After(time.Minute): // hang guard
			t.Fatalf("watch did not exit within a minute of %v", sig)
		}
	}
}
