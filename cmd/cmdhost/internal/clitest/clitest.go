package clitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// Plugins is the test plugins' folder (make plugins), from a test
// package's folder.
const Plugins = "../../../../testdata/plugins"

// Binary is the cmdhost binary the tests run: built once per test
// package, without -race, so modules compile at normal speed even when
// the tests run under -race.
var Binary string

// Main is the TestMain of every package of CLI tests: it builds Binary,
// runs the tests and exits with their status.
func Main(m *testing.M) {
	dir, err := os.MkdirTemp("", "cmdhost-cli-test")
	if err != nil {
		panic(err)
	}
	Binary = filepath.Join(dir, "cmdhost")
	build := exec.Command("go", "build", "-o", Binary, "github.com/cmdhost/cmdhost/cmd/cmdhost")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building cmdhost:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// CLICache is the compilation cache the CLI tests keep across runs.
func CLICache() string { return filepath.Join(os.TempDir(), "cmdhost-cli-test-cache") }

// Run runs the cmdhost binary and returns its stdout, stderr and exit
// status. The tests keep a compilation cache of their own across runs.
func Run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runCtx(t, context.Background(), args...)
}

// RunWithin is run that fails the test when cmdhost is still running
// after limit (then killed): for what must end long before a timeout it
// was given.
func RunWithin(t *testing.T, limit time.Duration, args ...string) (string, string, int) {
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
	cmd := exec.CommandContext(ctx, Binary, append([]string{"--cache-dir", CLICache()}, withStateDir(t, args)...)...)
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
