package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

const plugins = "../../testdata/plugins"

// binary is the cmdhost binary the tests run: built once, without -race,
// so modules compile at normal speed even when the tests run under -race.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cmdhost-cli-test")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "cmdhost")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building cmdhost:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// cliCache is the compilation cache the CLI tests keep across runs.
func cliCache() string { return filepath.Join(os.TempDir(), "cmdhost-cli-test-cache") }

// run runs the cmdhost binary and returns its stdout, stderr and exit
// status. The tests keep a compilation cache of their own across runs.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runCtx(t, context.Background(), args...)
}

// runWithin is run that fails the test when cmdhost is still running
// after limit (then killed): for what must end long before a timeout it
// was given.
func runWithin(t *testing.T, limit time.Duration, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	stdout, stderr, code := runCtx(t, ctx, args...)
	if ctx.Err() != nil {
		t.Fatalf("cmdhost %v still ran after %v: it waited for its timeout", args, limit)
	}
	return stdout, stderr, code
}

// withStateDir gives a serve command its own state folder unless it names
// one, or a store (whose Redis keeps the state): two hosts must never
// share one (nor a test's host the state of the `make run` host on the
// same plugins folder, which holds it).
func withStateDir(t testing.TB, args []string) []string {
	if !slices.Contains(args, "serve") || slices.Contains(args, "--store") || slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--state-dir") }) {
		return args
	}
	return append(slices.Clone(args), "--state-dir", t.TempDir())
}

// runCtx is run, the process killed when ctx ends. A command that names
// a test plugin (testdata/plugins*) skips under -short (make unit).
func runCtx(t *testing.T, ctx context.Context, args ...string) (string, string, int) {
	t.Helper()
	for _, a := range args {
		if strings.Contains(filepath.ToSlash(a), "testdata/plugins") {
			testkit.Needs(t, testkit.Plugins)
		}
	}
	cmd := exec.CommandContext(ctx, binary, append([]string{"--cache-dir", cliCache()}, withStateDir(t, args)...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running cmdhost: %v", err)
	}
	return stdout.String(), stderr.String(), code
}

func TestCallEcho(t *testing.T) {
	out, errOut, code := run(t, "call", filepath.Join(plugins, "echo.wasm"), "echo", "-d", "hi")
	if out != "hi" || code != 0 {
		t.Fatalf("call echo -d hi: stdout %q, stderr %q, status %d", out, errOut, code)
	}
}

// call --fuel prints what the call used, the same each time; a budget
// below it fails the call.
func TestCallFuel(t *testing.T) {
	echo := filepath.Join(plugins, "wat-echo.wasm")
	out, errOut, code := run(t, "call", "--fuel", "0", echo, "wat-echo", "-d", "hi")
	var used int64
	if _, err := fmt.Sscanf(errOut, "fuel: %d units used\n", &used); err != nil || out != "hi" || code != 0 || used <= 0 {
		t.Fatalf("stdout %q, stderr %q, status %d", out, errOut, code)
	}
	if _, again, _ := run(t, "call", "--fuel", "0", echo, "wat-echo", "-d", "hi"); again != errOut {
		t.Fatalf("the same call: %q, then %q", errOut, again)
	}
	budget := strconv.FormatInt(used-1, 10)
	out, errOut, code = run(t, "call", "--fuel", budget, echo, "wat-echo", "-d", "hi")
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
	out, _, code := run(t, "call", "-f", f, filepath.Join(plugins, "wat-echo.wasm"), "wat-echo")
	if out != "from a file" || code != 0 {
		t.Fatalf("stdout %q, status %d", out, code)
	}
}

func TestCallErrors(t *testing.T) {
	echo := filepath.Join(plugins, "echo.wasm")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"application error", []string{"call", filepath.Join(plugins, "fail.wasm"), "fail"}, 1, "status 500 (application error): fail plugin: deliberate failure"},
		{"deadline", []string{"call", filepath.Join(plugins, "spin.wasm"), "spin", "--timeout", "100ms"}, 1, "deadline exceeded"},
		{"content type", []string{"call", filepath.Join(plugins, "probe.wasm"), "probe-request", "--content-type", "image/png"}, 1, `status 415`},
		{"missing args", []string{"call", echo}, 2, "cmdhost call FILE.wasm COMMAND"},
		{"bad meta", []string{"call", echo, "echo", "--meta", "novalue"}, 2, `--meta wants key=value, got "novalue"`},
		{"both payloads", []string{"call", echo, "echo", "-d", "x", "-f", "y"}, 2, "not both"},
		{"bad timeout", []string{"call", echo, "echo", "--timeout", "0s"}, 2, "--timeout must be positive"},
		{"missing file", []string{"call", "nope.wasm", "echo"}, 1, "nope.wasm: no such file"},
		{"refused module", []string{"call", filepath.Join(plugins, "../plugins-bad/bad-net.wasm"), "x"}, 1, "network access is never granted"},
		{"unknown command", []string{"call", echo, "nope"}, 1, `unknown command "nope": ../../testdata/plugins/echo.wasm serves echo`},
		{"misspelt command", []string{"call", echo, "ecoh"}, 1, `unknown command "ecoh": did you mean "echo"? (../../testdata/plugins/echo.wasm serves echo)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := run(t, c.args...)
			if code != c.code || !strings.Contains(errOut, c.want) || out != "" {
				t.Fatalf("stdout %q, stderr %q, status %d; want status %d and stderr containing %q", out, errOut, code, c.code, c.want)
			}
		})
	}
}

func TestInspectJSON(t *testing.T) {
	out, errOut, code := run(t, "plugin", "inspect", "--json", filepath.Join(plugins, "counter-idem.wasm"))
	if code != 0 {
		t.Fatalf("status %d: %s", code, errOut)
	}
	var in inspection
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatalf("inspect --json printed %q: %v", out, err)
	}
	if in.Name != "counter-idem" || in.ABIVersion != 1 || len(in.Commands) != 1 ||
		!in.Commands[0].Idempotent || in.Commands[0].ResponseTTL != "1h0m0s" || !strings.HasPrefix(in.Digest, "sha256:") {
		t.Fatalf("inspect: %+v", in)
	}
}

func TestInspectTable(t *testing.T) {
	out, _, code := run(t, "plugin", "inspect", filepath.Join(plugins, "probe.wasm"))
	for _, want := range []string{"ABI version:  1", "capabilities: [filesystem]", "probe-request  false", "application/json,text/plain"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("inspect table lacks %q:\n%s", want, out)
		}
	}
}

func TestInterspersed(t *testing.T) {
	app := newApp(nil, nil)
	cases := []struct{ in, want string }{
		{"cmdhost call F C -d hi", "cmdhost call -d hi -- F C"},
		{"cmdhost --cache-dir X call F -d=x C", "cmdhost --cache-dir X call -d=x -- F C"},
		{"cmdhost plugin inspect F --json", "cmdhost plugin inspect --json -- F"},
		{"cmdhost call F C -- -d", "cmdhost call -- F C -d"},
		{"cmdhost nosuch a -b", "cmdhost nosuch a -b"},
		{"cmdhost plugin lst --json", "cmdhost plugin lst --json"},
	}
	for _, c := range cases {
		args, err := interspersed(app, strings.Fields(c.in))
		if got := strings.Join(args, " "); got != c.want || err != nil {
			t.Errorf("%q → %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// A flag cmdhost cannot parse gets one line naming the flag, what is
// wrong, an example where one helps and the command's --help, exit
// status 2, not the whole help text.
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"invoke", "echo", "--timeout", "5"}, "invoke: --timeout 5: not a duration: give its unit, e.g. --timeout 5s (or 500ms, 2m, 1h) (see cmdhost invoke --help)"},
		{[]string{"serve", "--pool", "many"}, "serve: --pool many: not a whole number (see cmdhost serve --help)"},
		{[]string{"plugin", "list", "--exec-timeout", "3", "dir"}, "plugin list: --exec-timeout 3: not a duration"},
		{[]string{"plugin", "list", "--nosuch"}, "plugin list: unknown flag --nosuch (see cmdhost plugin list --help)"},
		{[]string{"--nosuch"}, "unknown flag --nosuch (see cmdhost --help)"},
	} {
		out, errOut, code := run(t, c.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "USAGE:") || strings.Count(errOut, "\n") > 1 {
			t.Errorf("%v: stdout %q, stderr %q, status %d; want one line with %q, status 2", c.args, out, errOut, code, c.want)
		}
	}
}
