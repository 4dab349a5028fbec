package plugincmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

const badPlugins = "../../../../testdata/plugins-bad"

func TestValidateGood(t *testing.T) {
	echo, probe := filepath.Join(clitest.Plugins, "echo.wasm"), filepath.Join(clitest.Plugins, "probe.wasm")
	out, errOut, code := clitest.Run(t, "plugin", "validate", echo, probe)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("stdout %q, stderr %q, status %d; want two lines and status 0", out, errOut, code)
	}
	if want := echo + ": ok: 1 command (echo)"; lines[0] != want {
		t.Errorf("line 1 %q, want %q", lines[0], want)
	}
	if want := probe + ": ok: 12 commands (probe-request, probe-status,"; !strings.HasPrefix(lines[1], want) {
		t.Errorf("line 2 %q, want it to start with %q", lines[1], want)
	}
}

// invalidModules are files the host refuses, with what the report says.
func invalidModules(t *testing.T) []struct{ name, file, want string } {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.wasm")
	if err := os.WriteFile(garbage, []byte("this is not WebAssembly\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.wasm")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return []struct{ name, file, want string }{
		{"network import", filepath.Join(badPlugins, "bad-net.wasm"), "loading plugin bad-net: imports wasi_snapshot_preview1.sock_accept: network access is never granted"},
		{"ABI version", filepath.Join(badPlugins, "bad-version.wasm"), "loading plugin bad-version: built for ABI version 99; this host speaks version 1"},
		{"no commands", filepath.Join(badPlugins, "bad-nocmds.wasm"), "the module declares no commands"},
		{"topic not the host's", filepath.Join(badPlugins, "bad-topic.wasm"), "{a}/{b}"},
		{"missing file", filepath.Join(dir, "nope.wasm"), "nope.wasm: no such file or directory"},
		{"not wasm", garbage, "loading plugin garbage: not a valid WebAssembly module for this host: invalid magic number"},
		{"empty file", empty, "empty module (0 bytes)"},
	}
}

func TestValidateInvalid(t *testing.T) {
	for _, c := range invalidModules(t) {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := clitest.Run(t, "plugin", "validate", c.file)
			prefix := c.file + ": invalid: "
			if code != 1 || !strings.HasPrefix(out, prefix) || !strings.Contains(out, c.want) ||
				strings.Count(out, "\n") != 1 || !strings.Contains(errOut, "cmdhost: 1 of 1 module files invalid") {
				t.Fatalf("stdout %q, stderr %q, status %d; want status 1 and one line %q…%q", out, errOut, code, prefix, c.want)
			}
		})
	}
}

// TestValidateMixed: one line per file in the arguments' order, status 1
// when any is invalid.
func TestValidateMixed(t *testing.T) {
	good, bad, missing := filepath.Join(clitest.Plugins, "wat-echo.wasm"), filepath.Join(badPlugins, "bad-net.wasm"), "nope.wasm"
	out, errOut, code := clitest.Run(t, "plugin", "validate", bad, good, missing)
	want := bad + ": invalid: loading plugin bad-net: imports wasi_snapshot_preview1.sock_accept: network access is never granted to plugins\n" +
		good + ": ok: 1 command (wat-echo)\n" +
		missing + ": invalid: open nope.wasm: no such file or directory\n"
	if code != 1 || out != want || !strings.Contains(errOut, "2 of 3 module files invalid") {
		t.Fatalf("stdout %q, stderr %q, status %d; want status 1 and stdout %q", out, errOut, code, want)
	}
}

func TestValidateJSON(t *testing.T) {
	good := filepath.Join(clitest.Plugins, "counter.wasm")
	files := []string{good}
	cases := invalidModules(t)
	for _, c := range cases {
		files = append(files, c.file)
	}
	out, errOut, code := clitest.Run(t, append([]string{"plugin", "validate", "--json"}, files...)...)
	if code != 1 {
		t.Fatalf("status %d, want 1; stderr %q", code, errOut)
	}
	var got []validation
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("validate --json printed %q: %v", out, err)
	}
	if len(got) != len(files) {
		t.Fatalf("%d results for %d files: %+v", len(got), len(files), got)
	}
	if g := got[0]; g.File != good || !g.OK || len(g.Commands) != 1 || g.Commands[0] != "counter" || g.Error != "" {
		t.Errorf("good module: %+v", g)
	}
	for i, c := range cases {
		g := got[i+1]
		if g.File != c.file || g.OK || g.Commands == nil || len(g.Commands) != 0 || !strings.Contains(g.Error, c.want) {
			t.Errorf("%s: %+v, want an error containing %q", c.name, g, c.want)
		}
	}
	// Every key is there, for scripts: commands is [] rather than null.
	var raw []map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := raw[1]["commands"].([]any); !ok {
		t.Errorf("an invalid module's commands is %v, want []", raw[1]["commands"])
	}
}

func TestValidateNoFiles(t *testing.T) {
	out, errOut, code := clitest.Run(t, "plugin", "validate")
	if code != 2 || out != "" || !strings.Contains(errOut, "cmdhost plugin validate FILE.wasm...") {
		t.Fatalf("stdout %q, stderr %q, status %d; want status 2 and the usage", out, errOut, code)
	}
}
