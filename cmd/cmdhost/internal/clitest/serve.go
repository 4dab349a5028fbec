package clitest

import (
	"bufio"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// FreeAddr returns a 127.0.0.1 address with a free port.
func FreeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// StartServe runs `cmdhost serve` with the embedded broker on a free port
// and returns once it logs that it serves; stop sends SIGTERM and returns
// the log and the exit error.
func StartServe(t *testing.T, onLine func(string), extra ...string) (addr string, stop func() (string, error)) {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	return StartServeIn(t, Plugins, onLine, extra...)
}

// StartServeIn is startServe on another plugins folder.
func StartServeIn(t *testing.T, dir string, onLine func(string), extra ...string) (addr string, stop func() (string, error)) {
	t.Helper()
	addr, _, stop = LaunchServe(t, dir, onLine, extra...)
	return addr, stop
}

// LaunchServe is startServeIn that also returns the process, for tests
// that kill it.
func LaunchServe(t *testing.T, dir string, onLine func(string), extra ...string) (addr string, cmd *exec.Cmd, stop func() (string, error)) {
	t.Helper()
	addr = FreeAddr(t)
	args := append([]string{"--cache-dir", CLICache(), "serve", "--plugins", dir, "--listen", addr, "--id", "cli-host"}, extra...)
	cmd = exec.Command(Binary, withStateDir(t, args)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	serving := make(chan struct{})
	var servingOnce sync.Once // serve logs "serving" again after each reload
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if onLine != nil {
				onLine(sc.Text())
			}
			if strings.Contains(sc.Text(), `msg=serving`) {
				servingOnce.Do(func() { close(serving) })
			}
		}
	}()
	select {
	case <-serving:
	case <-done:
		t.Fatalf("serve exited: %s", log.String())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("serve did not start: %s", log.String())
	}
	stopped := false
	stop = func() (string, error) {
		if stopped {
			return "", nil
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-done
		err := cmd.Wait()
		return log.String(), err
	}
	t.Cleanup(func() { stop() })
	return addr, cmd, stop
}

// UntilAnswer invokes until the reply is want or the deadline passes, and
// returns how long that took.
func UntilAnswer(t *testing.T, broker, command, want string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		// Plain requests: a resend of an ask could reach the command as it
		// comes up and run it (counter counts) for an invoke that then
		// times out.
		out, errOut, _ := Run(t, "invoke", command, "-d", "hi", "--timeout", "300ms", "--no-ack", "--broker", broker, "--executor", "cli-host")
		if out == want {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("%s never answered %q within %v: last %q %q", command, want, limit, out, errOut)
		}
	}
}
