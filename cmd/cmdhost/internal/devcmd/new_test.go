package devcmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// TestNewBuildsAndLoads: a new project in each language builds as is (with
// cmdhost build, which reads the manifest new wrote),
// with no flag and nothing but what the binary carries, its own test
// passes, and the module it builds installs into a running host, which
// serves it. With --cmdhost-src a Go project builds against the source
// tree's abi and sdk modules instead, with nothing else either.
//
// And issue 37's acceptance: each project's NAME-count keeps its durable
// counter and its map (seen/PAYLOAD) in the host's state store through a
// graceful restart of the host and a kill -9, started again each time on
// the same plugins and state folders; a call that fails writes nothing.
//
// And issue 38's (newreach_test.go): a project of each language, granted
// by its operator file, publishes an event on a granted topic (the test's
// subscriber gets it) and is refused on another; calls HTTP servers the
// test started, plain and TLS on a test CA, with an API key from a secret
// file; and is refused for a host not granted, for 127.0.0.1 unless the
// grant names it, and for a redirect to a refused address.
func TestNewBuildsAndLoads(t *testing.T) {
	if testing.Short() {
		t.Skip("builds modules with each language's toolchain")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH")
	}
	tmp, pluginsDir, stateDir := t.TempDir(), t.TempDir(), t.TempDir()
	serve := func() (string, *exec.Cmd, func() (string, error)) {
		return clitest.LaunchServe(t, pluginsDir, nil, "--state-dir", stateDir)
	}
	addr, _, stop := serve()
	rc := newReach(t, addr)
	var served []string // the projects the host serves
	// The projects' Makefiles run the cmdhost that made them (no CMDHOST
	// given, and none on PATH) for their tests and install; GOFLAGS without
	// -mod=vendor and the like from the caller; no module proxy: a Go
	// project needs nothing from the network.
	// The install asks the test's own host for its verdict, never one it
	// did not start (a `make run` host at the default address).
	env := append(withoutCmdhost(t), "GOFLAGS=", "GOWORK=off", "GOPROXY=off", "CMDHOST_BROKER=mqtt://"+addr, "CMDHOST_EXECUTOR=cli-host")
	for _, c := range []struct{ lang, name string }{{"go", "greet-go"}, {"rust", "greet-rust"}, {"rust", "greet-rustc"}, {"c", "greet-c"}, {"as", "greet-as"}, {"go", "greet-src"}} {
		t.Run(c.name, func(t *testing.T) {
			env := env
			switch c.name {
			case "greet-rust": // with Debian's cargo and rustc (a rustup rustc in PATH may have no wasm target)
				env = append(env, debianRust(t)...)
			case "greet-rustc": // rustc alone, for machines without cargo
				env = append(env, "RUSTC=/usr/bin/rustc", "CARGO=no-such-cargo")
			}
			runIn := func(t *testing.T, dir string, args ...string) string {
				t.Helper()
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Dir, cmd.Env = dir, env
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
				}
				return string(out)
			}
			args := []string{"new", c.name, "--lang", c.lang, "--dir", tmp}
			if c.name == "greet-src" {
				args = append(args, "--cmdhost-src", clitest.RepoRoot(t))
			}
			out, errOut, code := clitest.Run(t, args...)
			if code != 0 || !strings.Contains(out, "created "+filepath.Join(tmp, c.name)) || errOut != "" {
				t.Fatalf("new: stdout %q, stderr %q, status %d", out, errOut, code)
			}
			proj := filepath.Join(tmp, c.name)
			// cmdhost build reads the manifest new wrote and builds with
			// the project's Makefile (its output shown), as make does.
			build := runIn(t, proj, clitest.Binary, "--cache-dir", clitest.CLICache(), "build")
			if want := "built " + filepath.Join(proj, c.name+".wasm") + " in "; !strings.Contains(build, "building "+c.name+" ("+c.lang+"): make in "+proj) || !strings.Contains(build, want) {
				t.Errorf("cmdhost build: want %q:\n%s", want, build)
			}
			tests := runIn(t, proj, "make", "test")
			if c.lang == "rust" {
				// Cargo's build and its lock file, offline; or rustc alone.
				_, lockErr := os.Stat(filepath.Join(proj, "Cargo.lock"))
				if viaCargo := strings.Contains(build, "cargo build --offline"); viaCargo != (c.name == "greet-rust") || viaCargo != (lockErr == nil) {
					t.Errorf("make with cargo %v: Cargo.lock %v:\n%s", c.name == "greet-rust", lockErr, build)
				}
				if !strings.Contains(tests, "5 passed") {
					t.Errorf("make test ran not the project's 5 tests:\n%s", tests)
				}
			}
			wasm := filepath.Join(proj, c.name+".wasm")
			out, errOut, code = clitest.Run(t, "call", wasm, c.name, "-d", "hi")
			if out != "hi" || code != 0 || !strings.Contains(errOut, `msg="echoing 2 bytes" plugin=`+c.name) {
				t.Fatalf("call %s -d hi: stdout %q, stderr %q, status %d; want hi and the guest's log line", c.name, out, errOut, code)
			}
			out, errOut, code = clitest.Run(t, "call", wasm, c.name)
			if out != "" || code != 1 || !strings.Contains(errOut, "status 400: empty payload") {
				t.Fatalf("call %s without payload: stdout %q, stderr %q, status %d; want status 400", c.name, out, errOut, code)
			}
			// NAME-count is not idempotent, and counts in a store of the
			// call's own.
			if out, _, _ = clitest.Run(t, "plugin", "inspect", wasm); !regexp.MustCompile(`\n` + regexp.QuoteMeta(c.name) + `-count\s+false\s`).MatchString(out) {
				t.Errorf("%s-count is not a non-idempotent command of %s:\n%s", c.name, wasm, out)
			}
			if out, errOut, code = clitest.Run(t, "call", wasm, c.name+"-count", "-d", "hi"); out != "count=1 seen=1" || code != 0 {
				t.Fatalf("call %s-count -d hi: stdout %q, stderr %q, status %d; want count=1 seen=1", c.name, out, errOut, code)
			}
			// One project of each language reaches out (the others build
			// the same code another way).
			reaches := c.name != "greet-rustc" && c.name != "greet-src"
			if reaches {
				rc.grant(t, pluginsDir, c.name)
			}
			runIn(t, proj, "make", "install", "PLUGINS="+pluginsDir)
			broker := "mqtt://" + addr
			clitest.UntilAnswer(t, broker, c.name, "hi", time.Minute)
			if reaches {
				rc.check(t, broker, c.name)
			}
			countIs(t, broker, c.name, "a", "count=1 seen=1")
			countIs(t, broker, c.name, "b", "count=2 seen=1")
			// A payload over the bound of a key fails the call after the
			// count's add: neither is written.
			out, errOut, code = clitest.Run(t, "invoke", c.name+"-count", "-d", strings.Repeat("x", 2000), "--broker", broker, "--executor", "cli-host")
			if out != "" || code != base.ExitFailed || !strings.Contains(errOut, "status 500") {
				t.Fatalf("invoke %s-count with a payload of 2000 bytes: stdout %q, stderr %q, status %d; want status 500", c.name, out, errOut, code)
			}
			served = append(served, c.name)
		})
	}
	rc.sub.Close() // its broker goes with the host
	if len(served) == 0 {
		return
	}

	// A graceful restart (SIGTERM), then a kill -9: each time the host
	// started again on the same folders serves the counts where they were.
	started := time.Now()
	if log, err := stop(); err != nil {
		t.Fatalf("serve did not stop cleanly: %v\n%s", err, log)
	}
	var host *exec.Cmd
	addr, host, stop = serve()
	for _, name := range served {
		clitest.UntilAnswer(t, "mqtt://"+addr, name, "hi", time.Minute)
		countIs(t, "mqtt://"+addr, name, "a", "count=3 seen=2")
	}
	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = stop() // waits for it: killed
	addr, _, _ = serve()
	for _, name := range served {
		clitest.UntilAnswer(t, "mqtt://"+addr, name, "hi", time.Minute)
		countIs(t, "mqtt://"+addr, name, "a", "count=4 seen=3")
		countIs(t, "mqtt://"+addr, name, "b", "count=5 seen=2")
	}
	t.Logf("%d projects' counts through a restart and a kill -9 in %v", len(served), time.Since(started).Round(time.Millisecond))
}

// countIs invokes the project name's NAME-count with payload on the host
// at broker, once (invoke sends the same request again until the host
// acknowledges it, which a duplicate does not count twice), and checks
// its reply.
func countIs(t *testing.T, broker, name, payload, want string) {
	t.Helper()
	out, errOut, code := clitest.Run(t, "invoke", name+"-count", "-d", payload, "--broker", broker, "--executor", "cli-host")
	if out != want || code != 0 {
		t.Fatalf("invoke %s-count -d %s: stdout %q, stderr %q, status %d; want %q", name, payload, out, errOut, code, want)
	}
}

// debianRust is the environment of a Rust project's make that builds with
// Debian's rustc (1.63, wasm32-wasi) and cargo, by path: a rustup rustc
// first in PATH may have no wasm target.
func debianRust(t *testing.T) []string {
	t.Helper()
	for _, tool := range []string{"/usr/bin/rustc", "/usr/bin/cargo"} {
		if _, err := os.Stat(tool); err != nil {
			t.Fatalf("%s: %v (.ci/deps rust cargo installs it)", tool, err)
		}
	}
	return []string{"RUSTC=/usr/bin/rustc", "CARGO=/usr/bin/cargo"}
}

// A Rust project's Makefile builds for wasm32-wasip1 with a Rust that
// knows it (1.78 and later) and for wasm32-wasi with an older one, such as
// Debian's 1.63: it asks rustc --version.
func TestNewRustTarget(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH")
	}
	tmp := t.TempDir()
	if out, errOut, code := clitest.Run(t, "new", "hello", "--lang", "rust", "--dir", tmp); code != 0 {
		t.Fatalf("new: %q %q %d", out, errOut, code)
	}
	for version, want := range map[string]string{"1.63.0": "wasm32-wasi", "1.77.2": "wasm32-wasi", "1.78.0": "wasm32-wasip1", "1.95.0": "wasm32-wasip1"} {
		rustc := filepath.Join(t.TempDir(), "rustc")
		if err := os.WriteFile(rustc, []byte("#!/bin/sh\necho 'rustc "+version+" (abc 2026-01-01)'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, cargo := range []string{"sh", "no-such-cargo"} { // sh: a cargo that is found
			cmd := exec.Command("make", "-n", "RUSTC="+rustc, "CARGO="+cargo)
			cmd.Dir = filepath.Join(tmp, "hello")
			out, err := cmd.CombinedOutput()
			if err != nil || !regexp.MustCompile(`--target `+want+`\s`).Match(out) {
				t.Errorf("rustc %s, CARGO=%s: make -n: %v\n%s\nwant --target %s", version, cargo, err, out, want)
			}
		}
	}
}

// withoutCmdhost is the environment without CMDHOST and with a PATH on
// which no cmdhost is found: what a user who built bin/cmdhost has.
func withoutCmdhost(t *testing.T) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "CMDHOST="):
		case strings.HasPrefix(kv, "PATH="):
			var keep []string
			for _, dir := range filepath.SplitList(strings.TrimPrefix(kv, "PATH=")) {
				if _, err := os.Stat(filepath.Join(dir, "cmdhost")); err != nil {
					keep = append(keep, dir)
				}
			}
			env = append(env, "PATH="+strings.Join(keep, string(filepath.ListSeparator)))
		default:
			env = append(env, kv)
		}
	}
	return env
}

// A project's Makefile and new's hints name the cmdhost that made it by
// its absolute path when PATH has no cmdhost, or another one; "cmdhost"
// in the hints when PATH's is this one (the Makefile then names PATH's).
func TestNewFindsItsCmdhost(t *testing.T) {
	elsewhere := t.TempDir() // a PATH whose cmdhost is another program
	if err := os.WriteFile(filepath.Join(elsewhere, "cmdhost"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	same := filepath.Join(t.TempDir(), "with space") // a PATH whose cmdhost is this binary, by a link
	if err := os.Mkdir(same, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(clitest.Binary, filepath.Join(same, "cmdhost")); err != nil {
		t.Fatal(err)
	}
	base := withoutCmdhost(t)
	for _, c := range []struct {
		name, path    string
		makeVar, hint string
	}{
		{"none on PATH", "", clitest.Binary, clitest.Binary},
		{"another on PATH", elsewhere, clitest.Binary, clitest.Binary},
		{"this one on PATH", same, "'" + filepath.Join(same, "cmdhost") + "'", "cmdhost"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			env := slices.Clone(base)
			for i, kv := range env {
				if strings.HasPrefix(kv, "PATH=") && c.path != "" {
					env[i] = "PATH=" + c.path + string(filepath.ListSeparator) + strings.TrimPrefix(kv, "PATH=")
				}
			}
			cmd := exec.Command(clitest.Binary, "--cache-dir", clitest.CLICache(), "new", "hello", "--lang", "c", "--dir", tmp)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("new: %v\n%s", err, out)
			}
			// The project builds with cmdhost build, as its manifest says
			// (issue 39: the hints said make).
			for _, want := range []string{"\n  " + c.hint + " build ", "\n  " + c.hint + " plugin install hello.wasm --plugins DIR", "\n  " + c.hint + " invoke hello -d hi\n", "\n  " + c.hint + " dev --plugins DIR"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("new's hints lack %q:\n%s", want, out)
				}
			}
			mk, err := os.ReadFile(filepath.Join(tmp, "hello", "Makefile"))
			if err != nil {
				t.Fatal(err)
			}
			if want := "\nCMDHOST ?= " + c.makeVar + "\n"; !strings.Contains(string(mk), want) {
				t.Errorf("the Makefile lacks %q:\n%s", want, mk)
			}
		})
	}
}

func TestNewFiles(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("CMDHOST_SRC", "") // the SDK carried unless asked
	out, errOut, code := clitest.Run(t, "new", "my-tool.v2", "--dir", tmp)
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
	if m := read("go.mod"); !strings.Contains(m, "\nreplace github.com/cmdhost/cmdhost/sdk => ./cmdhost/sdk\n") ||
		!strings.Contains(m, "\nreplace github.com/cmdhost/cmdhost/abi => ./cmdhost/abi\n") || !strings.Contains(m, "module my-tool.v2\n") ||
		regexp.MustCompile(`github.com/cmdhost/cmdhost\s`).MatchString(m) {
		t.Errorf("go.mod without --cmdhost-src (the abi and sdk modules replaced by the copies, not the host's module):\n%s", m)
	}
	// The carried modules' go.mod files are the tree's, under a comment.
	for _, mod := range []string{"abi", "sdk"} {
		tree, err := os.ReadFile(filepath.Join(clitest.RepoRoot(t), mod, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		if m := read("cmdhost/" + mod + "/go.mod"); !strings.HasPrefix(m, "// ") || !strings.HasSuffix(m, "\n"+string(tree)) ||
			!strings.Contains(m, "\nmodule github.com/cmdhost/cmdhost/"+mod+"\n") {
			t.Errorf("cmdhost/%s/go.mod is not %s/go.mod under a comment:\n%s", mod, mod, m)
		}
	}
	for _, f := range []string{"cmdhost/sdk/sdk.go", "cmdhost/sdk/imports_wasip1.go", "cmdhost/abi/wire.go", "cmdhost/abi/ABI.md"} {
		read(f)
	}
	for _, f := range []string{"cmdhost/go.mod", "cmdhost/sdk/sdk_test.go", "cmdhost/sdk/source.go", "cmdhost/abi/source.go"} {
		if _, err := os.Stat(filepath.Join(proj, f)); err == nil {
			t.Errorf("the carried SDK holds %s", f)
		}
	}
	if errOut != "" {
		t.Errorf("stderr %q", errOut)
	}
	if m := read("main.go"); !strings.Contains(m, `sdk.Handle("my-tool.v2", echo)`) || !strings.Contains(m, "sdk.Infof(") || !strings.Contains(m, "sdk.InvalidPayload(") ||
		!strings.Contains(m, `sdk.Handle("my-tool.v2-count", count)`) || !strings.Contains(m, `sdk.State()`) ||
		!strings.Contains(m, `sdk.Handle("my-tool.v2-event", event)`) || !strings.Contains(m, `sdk.Publish(`) ||
		!strings.Contains(m, `sdk.Handle("my-tool.v2-fetch", fetch, sdk.Idempotent())`) || !strings.Contains(m, `sdk.HTTP(ctx, r)`) ||
		!strings.Contains(m, `sdk.Config("apiKey")`) {
		t.Errorf("main.go:\n%s", m)
	}
	if m := read("Makefile"); !strings.Contains(m, "build:\n\tGOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o my-tool.v2.wasm .\n") || !strings.Contains(m, "plugin install my-tool.v2.wasm") {
		t.Errorf("Makefile:\n%s", m)
	}
	r := read("README.md")
	for _, want := range []string{"make ", "replace github.com/cmdhost/cmdhost/sdk => ./cmdhost/sdk", "replace github.com/cmdhost/cmdhost/abi => ./cmdhost/abi",
		"cmdhost call my-tool.v2.wasm my-tool.v2 -d hi",
		"cmdhost invoke my-tool.v2 -d hi", "cmdhost plugin install my-tool.v2.wasm --plugins DIR", "no restart",
		"`my-tool.v2-count`", "cmdhost call my-tool.v2.wasm my-tool.v2-count -d hi --state-dir st", "docs/state.md",
		// The operator file that grants the event's topic, the fetch's host and its key.
		"`my-tool.v2-event`", "`my-tool.v2-fetch`", "`my-tool.v2.json` beside `my-tool.v2.wasm`",
		`"publish": {"topics": ["my-tool.v2/events/#"]}`, `"http": {"hosts": ["api.example.com"]}`,
		`"secrets": {"apiKey": "/etc/cmdhost/secrets/my-tool.v2-api-key"}`, "cmdhost plugin inspect DIR/my-tool.v2.wasm",
		"`sdk.Config(\"apiKey\")`", "docs/plugins.md#what-a-plugin-may-do", "`sdk.SetTestHTTP`"} {
		if !strings.Contains(r, want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	for _, stale := range []string{"planned", "restart `cmdhost serve`", "go mod tidy"} {
		if strings.Contains(r, stale) {
			t.Errorf("README.md still says %q", stale)
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
	if out, errOut, code := clitest.Run(t, "new", "greet", "--dir", tmp); code != 0 {
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
	// Source trees: another module, a cmdhost tree from before abi and sdk
	// were modules of their own, and one whose sdk is another module.
	tree := func(gomods map[string]string) string {
		dir := t.TempDir()
		for name, module := range gomods {
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte("module "+module+"\n\ngo 1.26\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	other := tree(map[string]string{"go.mod": "example.com/other"})
	older := tree(map[string]string{"go.mod": "github.com/cmdhost/cmdhost"})
	otherSDK := tree(map[string]string{"go.mod": "github.com/cmdhost/cmdhost", "abi/go.mod": "github.com/cmdhost/cmdhost/abi", "sdk/go.mod": "example.com/sdk"})
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
		{"too long for NAME-count", []string{"new", strings.Repeat("n", 123), "--dir", tmp}, `is too long: the project's second command, NAME-count, would pass the bound of 128 bytes of a command name; use at most 122`},
		{"trailing dot", []string{"new", "x.", "--dir", tmp}, `may not end with '.'`},
		{"std package", []string{"new", "time", "--dir", tmp}, `"time" cannot be a Go module path: the standard library has a package of that name`},
		{"main", []string{"new", "main", "--dir", tmp}, `the go command reserves that name`},
		{"Windows device", []string{"new", "aux", "--dir", tmp}, `reserved file name on Windows`},
		{"existing dir", []string{"new", "taken", "--dir", tmp}, filepath.Join(tmp, "taken") + " already exists and is not an empty directory: choose another name, or another parent directory with --dir DIR"},
		{"existing file", []string{"new", "file", "--dir", tmp}, "already exists and is not an empty directory"},
		{"not cmdhost source", []string{"new", "fine", "--dir", tmp, "--cmdhost-src", tmp}, "--cmdhost-src " + tmp + ": not a cmdhost source tree"},
		{"other module", []string{"new", "fine", "--dir", tmp, "--cmdhost-src", other}, `not a cmdhost source tree: its go.mod is module "example.com/other", not github.com/cmdhost/cmdhost`},
		{"older source tree", []string{"new", "fine", "--dir", tmp, "--cmdhost-src", older}, "--cmdhost-src " + older + ": it has no abi/go.mod: a cmdhost source tree from before abi and sdk became modules of their own"},
		{"other sdk module", []string{"new", "fine", "--dir", tmp, "--cmdhost-src", otherSDK}, `not a cmdhost source tree: its sdk/go.mod is module "example.com/sdk", not github.com/cmdhost/cmdhost/sdk`},
		{"no name", []string{"new", "--dir", tmp}, "cmdhost new NAME [--lang go|rust|c|as] [--dir DIR]"},
		{"two names", []string{"new", "a", "b"}, "cmdhost new NAME [--lang go|rust|c|as] [--dir DIR]"},
		{"unknown language", []string{"new", "fine", "--lang", "cobol", "--dir", tmp}, "--lang cobol: want one of go, rust, c, as"},
		{"rust, space", []string{"new", "a b", "--lang", "rust", "--dir", tmp}, `"a b" cannot name the project's files`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := clitest.Run(t, c.args...)
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
	p, err := newProject("x", "go")
	if err != nil {
		t.Fatal(err)
	}
	p.buildAgainst("/a b/c")
	files, err := renderProject(p)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.name)
		if f.name == "go.mod" && (!strings.Contains(string(f.data), `abi => "/a b/c/abi"`) || !strings.Contains(string(f.data), `sdk => "/a b/c/sdk"`)) {
			t.Errorf("a replace path with a space is not quoted:\n%s", f.data)
		}
	}
	if got := strings.Join(names, " "); got != "go.mod Makefile README.md main.go main_test.go" {
		t.Errorf("files %s", got)
	}
}

// readmeBlocks are the code blocks of the README's section under heading
// (up to the next heading), each by the file of a project made by `new
// greet` that its first line names ("// greet/main.go", "/* greet/handler.c
// */", "# greet/test.sh: …"): where the README says it goes.
func readmeBlocks(t *testing.T, readme []byte, heading string) map[string][]byte {
	t.Helper()
	i := bytes.Index(readme, []byte("\n"+heading+"\n"))
	if i < 0 {
		t.Fatalf("README.md has no %q section", heading)
	}
	section := readme[i+len(heading)+2:]
	if j := regexp.MustCompile(`\n##`).FindIndex(section); j != nil {
		section = section[:j[0]]
	}
	blocks := map[string][]byte{}
	for _, m := range regexp.MustCompile("(?s)```[a-z]*\n(.*?)```").FindAllSubmatch(section, -1) {
		first, _, _ := bytes.Cut(m[1], []byte("\n"))
		f := regexp.MustCompile(`^(?://|/\*|#) greet/([A-Za-z0-9_./-]*[A-Za-z0-9_])`).FindSubmatch(first)
		if f == nil {
			t.Fatalf("README.md, %s: a block whose first line names no file of the project greet: %q", heading, first)
		}
		blocks[string(f[1])] = m[1]
	}
	if len(blocks) == 0 {
		t.Fatalf("README.md, %s: no code", heading)
	}
	return blocks
}

// TestReadmeHandlers: the README's handler in each language, pasted into a
// project cmdhost new made as the README says (each block over the file
// its first line names), passes the project's own make test, which then
// tests greet, and answers with the README's settings. A language whose
// toolchain is missing is skipped.
func TestReadmeHandlers(t *testing.T) {
	testkit.Needs(t, testkit.Toolchains)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH")
	}
	readme, err := os.ReadFile(filepath.Join(clitest.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ heading, lang, tool, tested string }{
		{"### Go", "go", "go", "ok  \tgreet"},
		{"### Rust", "rust", "/usr/bin/cargo", "test tests::greets ... ok"},
		{"### C", "c", "clang", ""},
		{"### AssemblyScript", "as", "npm", ""},
	} {
		t.Run(c.lang, func(t *testing.T) {
			if _, err := exec.LookPath(c.tool); err != nil {
				t.Skipf("no %s (.ci/deps): %v", c.tool, err)
			}
			blocks := readmeBlocks(t, readme, c.heading)
			tmp := t.TempDir()
			if out, errOut, code := clitest.Run(t, "new", "greet", "--lang", c.lang, "--dir", tmp); code != 0 {
				t.Fatalf("new: %q %q %d", out, errOut, code)
			}
			proj := filepath.Join(tmp, "greet")
			for name, text := range blocks {
				if _, err := os.Stat(filepath.Join(proj, name)); err != nil {
					t.Fatalf("the README puts a block into greet/%s, a file new does not make: %v", name, err)
				}
				if err := os.WriteFile(filepath.Join(proj, name), text, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := append(withoutCmdhost(t), "GOFLAGS=", "GOWORK=off", "GOPROXY=off")
			if c.lang == "rust" {
				env = append(env, debianRust(t)...)
			}
			for _, target := range []string{"build", "test"} {
				cmd := exec.Command("make", target)
				cmd.Dir, cmd.Env = proj, env
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("make %s with the README's %s handler: %v\n%s", target, c.lang, err, out)
				}
				if target == "test" && !strings.Contains(string(out), c.tested) {
					t.Errorf("make test did not run the README's test (want %q in its output):\n%s", c.tested, out)
				}
			}
			out, errOut, code := clitest.Run(t, "call", filepath.Join(proj, "greet.wasm"), "greet", "-d", "docs")
			if code != 0 || out != "hello docs" {
				t.Fatalf("the README's %s handler: stdout %q, stderr %q, exit %d; want \"hello docs\"", c.lang, out, errOut, code)
			}
			out, _, _ = clitest.Run(t, "plugin", "inspect", filepath.Join(proj, "greet.wasm"))
			if !regexp.MustCompile(`greet\s+true\s+1m0s`).MatchString(out) {
				t.Errorf("the README's %s handler is not idempotent with a 1-minute TTL:\n%s", c.lang, out)
			}
		})
	}
}
