package devcmd

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// dev rebuilds for a change of the project's sources only: what a build
// makes and removes (the Go linker's NAME.wasm-go-tmp-umask, rustc's
// objects), the module, hidden files and what skipDirs holds are not
// sources; a source written, made or deleted is.
func TestProjectSourcesChanged(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mod time.Time) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write("main.go", "package main", t0)
	write("src/lib.rs", "// lib", t0)
	before := projectSources(dir, "greet.wasm")

	// A build: its temporaries come and go, its outputs stay.
	write("greet.wasm-go-tmp-umask", "", t0.Add(time.Second))
	write("greet.greet.1a2b-cgu.0.rcgu.o", "obj", t0.Add(time.Second))
	for _, f := range []string{"greet.wasm-go-tmp-umask", "greet.greet.1a2b-cgu.0.rcgu.o"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	write("greet.wasm", "\x00asm", t0.Add(time.Second))
	write("target/wasm/libcmdhost.rlib", "rlib", t0.Add(time.Second))
	write("node_modules/x/index.js", "x", t0.Add(time.Second))
	write(".main.go.swp", "x", t0.Add(time.Second))
	write("Cargo.lock", "lock", t0.Add(time.Second))
	if got := projectSources(dir, "greet.wasm").changedFrom(before); got != "" {
		t.Fatalf("after a build alone: changed %q, want none", got)
	}

	for _, c := range []struct {
		what string
		do   func()
		want string
	}{
		{"a source saved", func() { write("main.go", "package main // v2", t0.Add(2*time.Second)) }, "main.go"},
		{"a source made", func() { write("src/new.rs", "// new", t0) }, "src/new.rs"},
		{"a source deleted", func() { _ = os.Remove(filepath.Join(dir, "src/lib.rs")) }, "src/lib.rs"},
	} {
		before := projectSources(dir, "greet.wasm")
		c.do()
		if got := projectSources(dir, "greet.wasm").changedFrom(before); got != filepath.Join(dir, c.want) {
			t.Errorf("%s: changed %q, want %s", c.what, got, c.want)
		}
	}
}
