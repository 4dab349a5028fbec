package devcmd

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// fakeRustup is a rustc as rustup installs it without `rustup target add
// wasm32-wasip1`: it knows the target and has no standard library for it,
// so a build fails with E0463.
const fakeRustup = `#!/bin/sh
case "$*" in
  *--version*) echo "rustc 1.80.0 (051478957 2024-07-21)";;
  *target-libdir*) echo "/nonexistent/rustup/lib/rustlib/wasm32-wasip1/lib";;
  *) echo "error[E0463]: can't find crate for ` + "`std`" + `" >&2; exit 1;;
esac
`

// rustEnv is the environment with dir first in PATH and RUSTC and CARGO
// unset, plus more.
func rustEnv(dir string, more ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "RUSTC="), strings.HasPrefix(kv, "CARGO="):
		case strings.HasPrefix(kv, "PATH="):
			env = append(env, "PATH="+dir+string(filepath.ListSeparator)+strings.TrimPrefix(kv, "PATH="))
		default:
			env = append(env, kv)
		}
	}
	return append(env, more...)
}

// A Rust project builds when a rustc on the machine has the WASI target,
// though a rustup rustc without it comes first in PATH: its Makefile (and
// so `cmdhost dev`, which runs make) picks Debian's /usr/bin/rustc, with
// the cargo beside it. With no rustc that has it, make says how to get
// one or name one, not only rustc's E0463.
func TestNewRustPicksAToolchainWithTheTarget(t *testing.T) {
	testkit.Needs(t, testkit.Toolchains)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH")
	}
	debianRust(t)
	fake := t.TempDir()
	if err := os.WriteFile(filepath.Join(fake, "rustc"), []byte(fakeRustup), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, pluginsDir := t.TempDir(), t.TempDir()
	if out, errOut, code := clitest.Run(t, "new", "hello", "--lang", "rust", "--dir", tmp); code != 0 {
		t.Fatalf("new: %q %q %d", out, errOut, code)
	}
	proj := filepath.Join(tmp, "hello")

	// Named: make RUSTC=that-rustc, the fake. The build stops before
	// rustc, saying how to get a standard library or name another rustc.
	cmd := exec.Command("make", "RUSTC="+filepath.Join(fake, "rustc"))
	cmd.Dir, cmd.Env = proj, rustEnv(fake)
	out, err := cmd.CombinedOutput()
	for _, want := range []string{"has no standard library for wasm32-wasip1", "rustup target add wasm32-wasip1",
		"libstd-rust-dev-wasm32", "make RUSTC=/path/to/rustc", "RUSTC=/path/to/rustc cmdhost dev"} {
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("make with a rustc without the target: %v; want %q in:\n%s", err, want, out)
		}
	}

	// Not named: dev's make picks /usr/bin/rustc and its cargo, builds,
	// and dev installs the module.
	// The fake fails any compile: the module built is /usr/bin/rustc's.
	// No host: dev asks a port that was free a moment ago (and exits 1),
	// never one the test did not open (a `make run` host at the default
	// address).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	noHost := "mqtt://" + l.Addr().String()
	_ = l.Close()
	dev := exec.Command(clitest.Binary, "--cache-dir", clitest.CLICache(), "dev", proj, "--plugins", pluginsDir, "--once", "--broker", noHost)
	dev.Env = rustEnv(fake)
	out, _ = dev.CombinedOutput() // exit 1: no broker to ask
	if !strings.Contains(string(out), "built ") || !strings.Contains(string(out), "installed as") {
		t.Fatalf("dev --once with a rustc without the target first in PATH:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(pluginsDir, "hello.wasm")); err != nil {
		t.Fatalf("dev installed no module: %v", err)
	}
}
