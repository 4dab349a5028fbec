package servecmd

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// serve wires nested invocation: local calls, the --max-depth limit, the
// cycle guard naming the chain with the executor id, and nested timeout
// events in the log.
func TestServeNested(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"nest", "echo", "spin"} {
		testkit.InstallFile(t, filepath.Join(clitest.Plugins, p+".wasm"), dir, p+".wasm")
	}
	var mu sync.Mutex
	var lines []string
	addr, _ := clitest.StartServeIn(t, dir, func(l string) {
		mu.Lock()
		lines = append(lines, l)
		mu.Unlock()
	}, "--max-depth", "2")
	host := []string{"--broker", "mqtt://" + addr, "--executor", "cli-host"}
	invoke := func(command, payload string) (string, string, int) {
		return clitest.Run(t, append([]string{"invoke", command, "-d", payload}, host...)...)
	}
	clitest.UntilAnswer(t, "mqtt://"+addr, "echo", "hi", 10*time.Second)

	out, errOut, code := invoke("nest", `{"command":"echo","payload":"hi"}`)
	if code != 0 || !strings.Contains(out, `"payload":"hi"`) || !strings.Contains(out, `"outcome":"done"`) {
		t.Fatalf("nest echo: %q %q %d", out, errOut, code)
	}
	out, errOut, code = invoke("nest", `{"command":"nest-relay","payload":"{\"command\":\"echo\"}"}`)
	if code != 0 || !strings.Contains(out, "nested call depth limit of 2 reached: cli-host/nest → cli-host/nest-relay → cli-host/echo") {
		t.Fatalf("--max-depth 2: %q %q %d", out, errOut, code)
	}
	_, errOut, code = invoke("cycle-a", "")
	if code != 1 || !strings.Contains(errOut, "nested call cycle: cli-host/cycle-a → cli-host/cycle-b → cli-host/cycle-a") {
		t.Fatalf("cycle: %q %d", errOut, code)
	}
	out, errOut, code = invoke("nest", `{"command":"spin","timeout_ms":100}`)
	if code != 0 || !strings.Contains(out, `"outcome":"timed_out"`) {
		t.Fatalf("nest spin: %q %q %d", out, errOut, code)
	}
	mu.Lock()
	defer mu.Unlock()
	found := false
	for _, l := range lines {
		found = found || strings.Contains(l, "msg=timeout") && strings.Contains(l, "type=nested") && strings.Contains(l, "command=spin")
	}
	if !found {
		t.Fatalf("no nested timeout event in the log:\n%s", strings.Join(lines, "\n"))
	}
}

func TestServeMaxDepthFlag(t *testing.T) {
	_, errOut, code := clitest.Run(t, "serve", "--plugins", t.TempDir(), "--max-depth", "0")
	if code != 2 || !strings.Contains(errOut, "--max-depth must be positive") {
		t.Fatalf("%q %d", errOut, code)
	}
}
