package devcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// manifestProject writes a folder named name holding manifest as its cmdhost.json
// (none when manifest is ""), and returns its path.
func manifestProject(t *testing.T, name, manifest string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if manifest != "" {
		if err := os.WriteFile(filepath.Join(dir, manifestName), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBuildManifestErrors: cmdhost build refuses a missing or bad
// manifest with exit 2 and the fix, and a build that fails or writes no
// module with exit 1 and what to do; a manifest's own build command and
// module are used.
func TestBuildManifestErrors(t *testing.T) {
	for _, c := range []struct {
		name, manifest string
		code           int
		want           []string
	}{
		{"none", "", base.ExitUsage, []string{"has no cmdhost.json: cmdhost new NAME writes one", `write {"lang": "go"} (or rust, c, as) into`}},
		{"java", `{"lang": "java"}`, base.ExitUsage, []string{`"lang": "java" is not a language cmdhost builds: use one of go, rust, c, as`}},
		{"nolang", `{"name": "x"}`, base.ExitUsage, []string{`no "lang": add "lang": one of go, rust, c, as`}},
		{"typo", `{"lang": "go", "bild": "make"}`, base.ExitUsage, []string{`unknown field "bild"`, `optional "name", "build" and "wasm"`}},
		{"syntax", "{\"lang\": \"go\",\n  \"build\": make}", base.ExitUsage, []string{"line 2, column 12: invalid character"}},
		{"number", `{"lang": 7}`, base.ExitUsage, []string{"line 1, column 10", "cannot unmarshal number"}},
		{"two", `{"lang": "go"} {"lang": "c"}`, base.ExitUsage, []string{"more than one JSON object"}},
		{"badname", `{"lang": "go", "name": "a b"}`, base.ExitUsage, []string{`"name": "a b" cannot name the project's files`}},
		{"outside", `{"lang": "go", "build": "true", "wasm": "../x.wasm"}`, base.ExitUsage, []string{`"wasm": "../x.wasm" is outside the project`}},
		{"nomodule", `{"lang": "go", "build": "true"}`, base.ExitFailed, []string{"true in ", "succeeded but made no nomodule.wasm: set \"wasm\" in cmdhost.json"}},
		{"fails", `{"lang": "go", "build": "echo compiler says no; exit 3"}`, base.ExitFailed, []string{"compiler says no", "echo compiler says no; exit 3 in ", "failed: exit status 3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := manifestProject(t, c.name, c.manifest)
			out, errOut, code := clitest.Run(t, "build", dir)
			if code != c.code || out != "" {
				t.Errorf("build: stdout %q, stderr %q, status %d; want status %d", out, errOut, code, c.code)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("build: stderr %q lacks %q", errOut, w)
				}
			}
		})
	}

	// A build command and module of the manifest's own; the name defaults
	// to the folder's.
	dir := manifestProject(t, "mine", `{"lang": "go", "build": "mkdir -p out && printf '\\000asm' > out/m.wasm", "wasm": "out/m.wasm"}`)
	if out, errOut, code := clitest.Run(t, "build", dir); code != 0 || !strings.HasPrefix(out, "built "+filepath.Join(dir, "out", "m.wasm")+" in ") ||
		!strings.Contains(errOut, "building mine (go): mkdir -p out") {
		t.Fatalf("build: stdout %q, stderr %q, status %d", out, errOut, code)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "out", "m.wasm")); err != nil || string(data) != "\x00asm" {
		t.Fatalf("out/m.wasm: %q %v", data, err)
	}
	// Without DIR, the current folder's manifest.
	cmd := exec.Command(clitest.Binary, "--cache-dir", clitest.CLICache(), "build")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "built "+filepath.Join(dir, "out", "m.wasm")) {
		t.Fatalf("build in the project's folder: %v\n%s", err, out)
	}
}

// TestBuildToolchainMissing: a language's toolchain not on PATH is named
// with the packages that provide it, before the build runs; a Rust build
// that finds no standard library for the wasm target says what to install.
func TestBuildToolchainMissing(t *testing.T) {
	// A PATH with make and sh only.
	bin := t.TempDir()
	for _, tool := range []string{"make", "sh"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("no %s on PATH", tool)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ lang, want string }{
		{"c", "clang is not on PATH: install clang with wasi-libc (Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32)"},
		{"rust", "rustc is not on PATH: install Rust with a WASI target: Debian's rustc libstd-rust-dev-wasm32"},
		{"as", "npm is not on PATH: install Node.js and npm (Debian: nodejs npm); the build installs the AssemblyScript compiler, npm's assemblyscript"},
		{"go", "go is not on PATH: install Go 1.24 or later"},
	} {
		dir := manifestProject(t, "p"+c.lang, `{"lang": "`+c.lang+`", "wasm": "never.wasm"}`)
		if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte("all:\n\ttouch ran\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := clitest.RunEnv(t, []string{"PATH=" + bin, "RUSTC="}, "build", dir)
		if code != base.ExitFailed || out != "" || !strings.Contains(errOut, "building p"+c.lang+" ("+c.lang+"): "+c.want) {
			t.Errorf("build %s without its toolchain: stdout %q, stderr %q, status %d; want %q", c.lang, out, errOut, code, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
			t.Errorf("build %s without its toolchain ran the build", c.lang)
		}
	}
	// RUSTC names the compiler to look for.
	dir := manifestProject(t, "rustc", `{"lang": "rust", "build": "true"}`)
	if _, errOut, code := clitest.RunEnv(t, []string{"RUSTC=/no/such/rustc"}, "build", dir); code != base.ExitFailed || !strings.Contains(errOut, "/no/such/rustc (RUSTC) is not found: install Rust with a WASI target") {
		t.Errorf("build with RUSTC=/no/such/rustc: stderr %q, status %d", errOut, code)
	}
	// rustc's E0463: no standard library for the target.
	rustc := filepath.Join(bin, "rustc")
	if err := os.WriteFile(rustc, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir = manifestProject(t, "nostd", `{"lang": "rust", "build": "echo \"error[E0463]: can't find crate for std\" >&2; exit 1"}`)
	_, errOut, code := clitest.RunEnv(t, []string{"RUSTC=" + rustc}, "build", dir)
	if code != base.ExitFailed || !strings.Contains(errOut, "failed: exit status 1; this rustc has no standard library for the WASI target: install Debian's libstd-rust-dev-wasm32") {
		t.Errorf("build whose rustc has no wasm std: stderr %q, status %d", errOut, code)
	}
	// clang without wasi-libc: the hint; a header of the project's own
	// missing: none.
	for _, tool := range []string{"clang", "wasm-ld"} {
		if err := os.WriteFile(filepath.Join(bin, tool), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for header, want := range map[string]string{"stdlib.h": "failed: exit status 1; clang finds no WASI C library: install wasi-libc", "mine.h": "failed: exit status 1\n"} {
		dir = manifestProject(t, "c-"+header, `{"lang": "c", "build": "echo \"handler.c:1:10: fatal error: '`+header+`' file not found\" >&2; exit 1"}`)
		_, errOut, code = clitest.RunEnv(t, []string{"PATH=" + bin}, "build", dir)
		if code != base.ExitFailed || !strings.Contains(errOut, want) {
			t.Errorf("build whose %s is missing: stderr %q, status %d; want %q", header, errOut, code, want)
		}
	}
}

// TestDevBuildsFromManifest: cmdhost dev builds as the manifest says
// (its command, its module, its name) and installs nothing when the
// build writes no module.
func TestDevBuildsFromManifest(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	echo := filepath.Join(clitest.RepoRoot(t), "testdata", "plugins", "echo.wasm")
	if _, err := os.Stat(echo); err != nil {
		t.Fatalf("%v (make plugins builds it)", err)
	}
	plugins := t.TempDir()
	dir := manifestProject(t, "proj", `{"lang": "go", "name": "e", "build": "mkdir -p out && cp `+shellWord(echo)+` out/e.wasm", "wasm": "out/e.wasm"}`)
	out, errOut, code := clitest.Run(t, "dev", dir, "--plugins", plugins, "--once", "--wait", "0")
	if code != 0 || !strings.Contains(out, "building: mkdir -p out && cp ") || !strings.Contains(out, "built "+filepath.Join(dir, "out", "e.wasm")) ||
		!strings.Contains(out, "installed as "+filepath.Join(plugins, "e.wasm")) {
		t.Fatalf("dev --once: stdout %q, stderr %q, status %d", out, errOut, code)
	}
	dir = manifestProject(t, "none", `{"lang": "go", "build": "true"}`)
	out, errOut, code = clitest.Run(t, "dev", dir, "--plugins", plugins, "--once", "--wait", "0")
	if code != base.ExitFailed || !strings.Contains(out, "succeeded but made no none.wasm") || !strings.Contains(out, "nothing installed") || strings.Contains(out, "installed as") {
		t.Fatalf("dev --once with a build that writes no module: stdout %q, stderr %q, status %d", out, errOut, code)
	}
	if _, err := os.Stat(filepath.Join(plugins, "none.wasm")); err == nil {
		t.Fatal("dev installed none.wasm")
	}
}
