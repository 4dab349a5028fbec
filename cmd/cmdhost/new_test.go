package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the cmdhost source tree the tests build handler projects
// against.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestNewBuildsAndLoads: a new project builds as is, its tests pass, and
// the module it builds loads and answers.
func TestNewBuildsAndLoads(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with the Go toolchain")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH")
	}
	tmp := t.TempDir()
	out, errOut, code := run(t, "new", "greet", "--dir", tmp, "--cmdhost-src", repoRoot(t))
	if code != 0 || !strings.Contains(out, "created "+filepath.Join(tmp, "greet")) {
		t.Fatalf("new: stdout %q, stderr %q, status %d", out, errOut, code)
	}
	proj := filepath.Join(tmp, "greet")
	gomod, err := os.ReadFile(filepath.Join(proj, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"module greet\n", "\ngo 1.26\n", "\nrequire github.com/cmdhost/cmdhost v", "\nreplace github.com/cmdhost/cmdhost => " + repoRoot(t) + "\n"} {
		if !bytes.Contains(gomod, []byte(want)) {
			t.Errorf("go.mod lacks %q:\n%s", want, gomod)
		}
	}

	goflags := strings.TrimSpace(os.Getenv("GOFLAGS") + " -mod=mod")
	env := append(os.Environ(), "GOFLAGS="+goflags, "GOWORK=off")
	for _, args := range [][]string{{"go", "mod", "tidy"}, {"make", "build"}, {"make", "test"}} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = proj, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s in the new project: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	wasm := filepath.Join(proj, "greet.wasm")
	out, errOut, code = run(t, "call", wasm, "greet", "-d", "hi")
	if out != "hi" || code != 0 || !strings.Contains(errOut, `msg="echoing 2 bytes" plugin=greet`) {
		t.Fatalf("call greet -d hi: stdout %q, stderr %q, status %d; want hi and the guest's log line", out, errOut, code)
	}
	out, errOut, code = run(t, "call", wasm, "greet")
	if out != "" || code != 1 || !strings.Contains(errOut, "status 400: empty payload") {
		t.Fatalf("call greet without payload: stdout %q, stderr %q, status %d; want status 400", out, errOut, code)
	}
	out, errOut, code = run(t, "plugin", "validate", wasm)
	if want := wasm + ": ok: 1 command (greet)\n"; out != want || code != 0 {
		t.Fatalf("validate: stdout %q, stderr %q, status %d; want %q", out, errOut, code, want)
	}
}

func TestNewFiles(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("CMDHOST_SRC", "") // no replace line unless asked
	out, errOut, code := run(t, "new", "my-tool.v2", "--dir", tmp)
	if code != 0 {
		t.Fatalf("stdout %q, stderr %q, status %d", out, errOut, code)
	}
	proj := filepath.Join(tmp, "my-tool.v2")
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(proj, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if m := read("go.mod"); strings.Contains(m, "replace") || !strings.Contains(m, "module my-tool.v2\n") {
		t.Errorf("go.mod without --cmdhost-src:\n%s", m)
	}
	if !strings.Contains(errOut, "go.mod has no replace line") || !strings.Contains(errOut, "--cmdhost-src") {
		t.Errorf("no note about the missing replace line: %q", errOut)
	}
	if m := read("main.go"); !strings.Contains(m, `sdk.Handle("my-tool.v2", echo)`) || !strings.Contains(m, "sdk.Infof(") || !strings.Contains(m, "sdk.InvalidPayload(") {
		t.Errorf("main.go:\n%s", m)
	}
	if m := read("Makefile"); !strings.Contains(m, "build:\n\tGOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o my-tool.v2.wasm .\n") {
		t.Errorf("Makefile:\n%s", m)
	}
	r := read("README.md")
	for _, want := range []string{"make build", "go mod edit -replace github.com/cmdhost/cmdhost=", "cmdhost call my-tool.v2.wasm my-tool.v2 -d hi",
		"cmdhost invoke my-tool.v2 -d hi", "mv DIR/.my-tool.v2.wasm.tmp DIR/my-tool.v2.wasm", "cmdhost plugin install"} {
		if !strings.Contains(r, want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	read("main_test.go")
	entries, _ := os.ReadDir(tmp)
	if len(entries) != 1 {
		t.Errorf("%s holds %d entries, want just the project (no temporary directory left)", tmp, len(entries))
	}
}

func TestNewIntoEmptyDir(t *testing.T) {
	tmp := t.TempDir()
	if err := os.Mkdir(filepath.Join(tmp, "greet"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := run(t, "new", "greet", "--dir", tmp); code != 0 {
		t.Fatalf("stdout %q, stderr %q, status %d", out, errOut, code)
	}
	if _, err := os.Stat(filepath.Join(tmp, "greet", "main.go")); err != nil {
		t.Fatal(err)
	}
}

func TestNewRefuses(t *testing.T) {
	tmp := t.TempDir()
	taken := filepath.Join(tmp, "taken")
	if err := os.MkdirAll(taken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(taken, "keep.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "file"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"slash", []string{"new", "a/b", "--dir", tmp}, `"a/b" is not a valid command name`},
		{"wildcard", []string{"new", "a+b", "--dir", tmp}, `"a+b" is not a valid command name: command name "a+b" may not hold '/', '+'`},
		{"space", []string{"new", "a b", "--dir", tmp}, `"a b" cannot be a Go module path: use only ASCII letters, digits`},
		{"non-ASCII", []string{"new", "grüß", "--dir", tmp}, `"grüß" cannot be a Go module path: use only ASCII letters`},
		{"leading dot", []string{"new", ".hidden", "--dir", tmp}, `may not start with '.' or '-'`},
		{"trailing dot", []string{"new", "x.", "--dir", tmp}, `may not end with '.'`},
		{"std package", []string{"new", "time", "--dir", tmp}, `"time" cannot be a Go module path: the standard library has a package of that name`},
		{"main", []string{"new", "main", "--dir", tmp}, `the go command reserves that name`},
		{"Windows device", []string{"new", "aux", "--dir", tmp}, `reserved file name on Windows`},
		{"existing dir", []string{"new", "taken", "--dir", tmp}, filepath.Join(tmp, "taken") + " already exists and is not an empty directory: choose another name, or another parent directory with --dir DIR"},
		{"existing file", []string{"new", "file", "--dir", tmp}, "already exists and is not an empty directory"},
		{"not cmdhost source", []string{"new", "fine", "--dir", tmp, "--cmdhost-src", tmp}, "--cmdhost-src " + tmp + ": not a cmdhost source tree"},
		{"other module", []string{"new", "fine", "--dir", tmp, "--cmdhost-src", other}, `not a cmdhost source tree: its go.mod is module "example.com/other", not github.com/cmdhost/cmdhost`},
		{"no name", []string{"new", "--dir", tmp}, "cmdhost new NAME [--dir DIR]"},
		{"two names", []string{"new", "a", "b"}, "cmdhost new NAME [--dir DIR]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := run(t, c.args...)
			if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
				t.Fatalf("stdout %q, stderr %q, status %d; want status 2 and stderr containing %q", out, errOut, code, c.want)
			}
		})
	}
	entries, _ := os.ReadDir(tmp)
	if len(entries) != 2 {
		t.Errorf("refusals left %d entries in %s, want the 2 it had", len(entries), tmp)
	}
	if data, _ := os.ReadFile(filepath.Join(taken, "keep.txt")); string(data) != "mine" {
		t.Errorf("the existing project directory was changed")
	}
}

func TestProjectTemplatesFormatted(t *testing.T) {
	files, err := renderProject(project{Name: "x", GoVersion: "1.26", SDKModule: sdkModule, SDKVersion: placeholderVersion, Replace: "/a b/c"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.name)
		if f.name == "go.mod" && !strings.Contains(string(f.data), `=> "/a b/c"`) {
			t.Errorf("a replace path with a space is not quoted:\n%s", f.data)
		}
	}
	if got := strings.Join(names, " "); got != "go.mod main.go main_test.go Makefile README.md" {
		t.Errorf("files %s", got)
	}
}
