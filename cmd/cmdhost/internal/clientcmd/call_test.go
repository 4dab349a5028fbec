package clientcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

func TestCallEcho(t *testing.T) {
	out, errOut, code := clitest.Run(t, "call", filepath.Join(clitest.Plugins, "echo.wasm"), "echo", "-d", "hi")
	if out != "hi" || code != 0 {
		t.Fatalf("call echo -d hi: stdout %q, stderr %q, status %d", out, errOut, code)
	}
}

// call --fuel prints what the call used, the same each time; a budget
// below it fails the call.
func TestCallFuel(t *testing.T) {
	echo := filepath.Join(clitest.Plugins, "wat-echo.wasm")
	out, errOut, code := clitest.Run(t, "call", "--fuel", "0", echo, "wat-echo", "-d", "hi")
	var used int64
	if _, err := fmt.Sscanf(errOut, "fuel: %d units used\n", &used); err != nil || out != "hi" || code != 0 || used <= 0 {
		t.Fatalf("stdout %q, stderr %q, status %d", out, errOut, code)
	}
	if _, again, _ := clitest.Run(t, "call", "--fuel", "0", echo, "wat-echo", "-d", "hi"); again != errOut {
		t.Fatalf("the same call: %q, then %q", errOut, again)
	}
	budget := strconv.FormatInt(used-1, 10)
	out, errOut, code = clitest.Run(t, "call", "--fuel", budget, echo, "wat-echo", "-d", "hi")
	// The budget came from --fuel: the message says to raise it, not an
	// operator file's "fuel" (issue 39).
	if code != 1 || out != "" || !strings.Contains(errOut, "fuel exhausted") || !strings.Contains(errOut, "budget "+budget) ||
		!strings.Contains(errOut, "from --fuel: raise --fuel") || strings.Contains(errOut, "operator file") {
		t.Fatalf("a budget below the call's use: stdout %q, stderr %q, status %d", out, errOut, code)
	}
}

func TestCallPayloadFromFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(f, []byte("from a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code := clitest.Run(t, "call", "-f", f, filepath.Join(clitest.Plugins, "wat-echo.wasm"), "wat-echo")
	if out != "from a file" || code != 0 {
		t.Fatalf("stdout %q, status %d", out, code)
	}
}

func TestCallErrors(t *testing.T) {
	echo := filepath.Join(clitest.Plugins, "echo.wasm")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"application error", []string{"call", filepath.Join(clitest.Plugins, "fail.wasm"), "fail"}, 1, "status 500 (application error): fail plugin: deliberate failure"},
		{"deadline", []string{"call", filepath.Join(clitest.Plugins, "spin.wasm"), "spin", "--timeout", "100ms"}, 1, "deadline exceeded"},
		{"content type", []string{"call", filepath.Join(clitest.Plugins, "probe.wasm"), "probe-request", "--content-type", "image/png"}, 1, `status 415`},
		{"missing args", []string{"call", echo}, 2, "cmdhost call FILE.wasm COMMAND"},
		{"bad meta", []string{"call", echo, "echo", "--meta", "novalue"}, 2, `--meta wants key=value, got "novalue"`},
		{"both payloads", []string{"call", echo, "echo", "-d", "x", "-f", "y"}, 2, "not both"},
		{"bad timeout", []string{"call", echo, "echo", "--timeout", "0s"}, 2, "--timeout must be positive"},
		{"missing file", []string{"call", "nope.wasm", "echo"}, 1, "nope.wasm: no such file"},
		{"refused module", []string{"call", filepath.Join(clitest.Plugins, "../plugins-bad/bad-net.wasm"), "x"}, 1, "network access is never granted"},
		{"unknown command", []string{"call", echo, "nope"}, 1, `unknown command "nope": ../../../../testdata/plugins/echo.wasm serves echo`},
		{"misspelt command", []string{"call", echo, "ecoh"}, 1, `unknown command "ecoh": did you mean "echo"? (../../../../testdata/plugins/echo.wasm serves echo)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := clitest.Run(t, c.args...)
			if code != c.code || !strings.Contains(errOut, c.want) || out != "" {
				t.Fatalf("stdout %q, stderr %q, status %d; want status %d and stderr containing %q", out, errOut, code, c.code, c.want)
			}
		})
	}
}
