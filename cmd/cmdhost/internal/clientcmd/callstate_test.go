package clientcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/state"
)

// TestCallState: `cmdhost call` runs with a state store. By default each
// call has its own, empty, and leaves no folder behind; with --state-dir
// the store outlasts the call (tally's counter grows), an error reply, a
// trap or a cut writes nothing, a folder in use is refused before the
// call runs, and --state-dir off runs without one.
func TestCallState(t *testing.T) {
	tally := "../../../../testdata/plugins-alt/tally.wasm"
	call := func(t *testing.T, want string, args ...string) {
		t.Helper()
		out, errOut, code := clitest.Run(t, append([]string{"call", tally}, args...)...)
		if out != want || code != 0 {
			t.Fatalf("call %v: stdout %q, stderr %q, status %d; want %q", args, out, errOut, code, want)
		}
	}
	fails := func(t *testing.T, want string, args ...string) {
		t.Helper()
		out, errOut, code := clitest.Run(t, append([]string{"call", tally}, args...)...)
		if out != "" || code != 1 || !strings.Contains(errOut, want) {
			t.Fatalf("call %v: stdout %q, stderr %q, status %d; want status 1 and %q", args, out, errOut, code, want)
		}
	}

	t.Run("a store of the call's own", func(t *testing.T) {
		call(t, "1", "tally", "-d", "a")
		call(t, "1", "tally", "-d", "a")
		// The temporary folder goes with the call (a folder of the test's
		// own as TMPDIR: others' calls may run meanwhile).
		tmp := t.TempDir()
		cmd := exec.Command(clitest.Binary, "--cache-dir", clitest.CLICache(), "call", tally, "tally", "-d", "a")
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		if out, err := cmd.Output(); err != nil || string(out) != "1" {
			t.Fatalf("call with TMPDIR: %q, %v", out, err)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("the call left %s in TMPDIR", left[0].Name())
		}
	})

	t.Run("--state-dir", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "state") // made by the call
		at := []string{"--state-dir", dir}
		call(t, "1", append([]string{"tally", "-d", "a"}, at...)...)
		call(t, "2", append([]string{"tally", "-d", "b"}, at...)...)
		fails(t, "deliberate failure after a write", append([]string{"tally-fail", "-d", "c"}, at...)...)
		fails(t, "deadline exceeded", append([]string{"tally-slow", "-d", "d", "--timeout", "300ms"}, at...)...)
		call(t, "2", append([]string{"tally-read"}, at...)...)
		// tally records each payload's value if absent: a write that
		// conflicts is an error, and writes nothing either.
		fails(t, "condition failed", append([]string{"tally", "-d", "a"}, at...)...)
		call(t, "3", append([]string{"tally", "-d", "e"}, at...)...)

		d, err := state.OpenDisk(state.DiskConfig{Dir: dir}) // as a host serving it would
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		out, errOut, code := clitest.Run(t, append([]string{"call", tally, "tally-read"}, at...)...)
		if out != "" || code != 1 || !strings.Contains(errOut, "--state-dir "+dir+": state folder "+dir+" is in use by another process") {
			t.Fatalf("a folder in use: stdout %q, stderr %q, status %d", out, errOut, code)
		}
	})

	t.Run("off", func(t *testing.T) {
		fails(t, "status 500 (application error): state: the store is unavailable", "tally-read", "--state-dir", "off")
	})
}
