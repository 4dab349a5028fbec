//go:build linux

package clientcmd

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// openPTY opens a pseudo-terminal: the master, which the test reads, and
// the slave, which cmdhost writes to as its terminal. Linux's ioctls, so
// that the test needs no package.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlocking the pseudo-terminal: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("numbering the pseudo-terminal: %v", e)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return master, slave
}

// On a terminal, call ends the payload with a newline, as invoke does, so
// that the prompt does not follow it on its line; it printed none. A pipe
// still gets the payload as it is (TestCallEcho).
func TestCallNewlineOnTerminal(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	master, slave := openPTY(t)
	defer master.Close()
	cmd := exec.Command(clitest.Binary, "--cache-dir", clitest.CLICache(), "call", filepath.Join(clitest.Plugins, "echo.wasm"), "echo", "-d", "hi")
	cmd.Stdout = slave
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close() // cmdhost's copy is the only one: reading ends when it exits
	var out bytes.Buffer
	_, _ = io.Copy(&out, master) // ends with EIO once the slave is closed
	if err := cmd.Wait(); err != nil {
		t.Fatalf("call: %v %s", err, stderr.String())
	}
	// The terminal turns "\n" into "\r\n".
	if got := out.String(); got != "hi\r\n" {
		t.Errorf("call on a terminal printed %q; want %q", got, "hi\r\n")
	}
}
