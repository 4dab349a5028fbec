package plugins

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// loadAllWithin runs m.LoadAll and returns its errors, failing the test
// when it has not returned within a minute (or before the test's
// deadline): a file that blocks the read would otherwise hang the test
// for ever. unblock, if any, is called first, to free the read.
func loadAllWithin(t *testing.T, m *Manager, unblock func()) []error {
	t.Helper()
	limit := time.Minute
	if d, ok := t.Deadline(); ok {
		limit = min(limit, max(time.Until(d)/2, time.Second))
	}
	done := make(chan []error, 1)
	go func() { done <- m.LoadAll(context.Background()) }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case errs := <-done:
		return errs
	case <-timer.C:
		if unblock != nil {
			unblock()
		}
		t.Fatalf("LoadAll has not returned after %v: a file in the plugins folder blocks the host", limit)
		return nil
	}
}

// mkfifo makes a named pipe at path; unblock frees a reader blocked on
// opening it (a writer opens it and closes it at once).
func mkfifo(t *testing.T, path string) (unblock func()) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	return func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
		}
	}
}

// symlink makes link point to target.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// The plugins folder reads only regular files (issue 23, item 9): a FIFO
// or a device as a module or as an operator file is refused with an error
// naming the file and what it is, at once, and the other plugins are
// served; an operator file over its bound is refused without being read
// whole.
func TestOddFilesInThePluginsFolder(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	cases := []struct {
		name string
		// odd puts the odd file into dir and returns what frees a read
		// blocked on it (nil: nothing can).
		odd  func(t *testing.T, dir string) func()
		want string // in the one error LoadAll returns
	}{
		{"a FIFO as a module", func(t *testing.T, dir string) func() {
			return mkfifo(t, filepath.Join(dir, "x.wasm"))
		}, "x.wasm is a named pipe (FIFO), not a regular file"},
		{"a symlink to /dev/zero as a module", func(t *testing.T, dir string) func() {
			symlink(t, "/dev/zero", filepath.Join(dir, "x.wasm"))
			return nil
		}, "x.wasm is a character device, not a regular file"},
		{"a FIFO as an operator file", func(t *testing.T, dir string) func() {
			testkit.Install(t, dir, "echo.wasm", readPlugin(t, "echo"))
			return mkfifo(t, filepath.Join(dir, "echo.json"))
		}, "echo.json is a named pipe (FIFO), not a regular file"},
		{"a symlink to /dev/zero as an operator file", func(t *testing.T, dir string) func() {
			testkit.Install(t, dir, "echo.wasm", readPlugin(t, "echo"))
			symlink(t, "/dev/zero", filepath.Join(dir, "echo.json"))
			return nil
		}, "echo.json is a character device, not a regular file"},
		{"a huge operator file", func(t *testing.T, dir string) func() {
			testkit.Install(t, dir, "echo.wasm", readPlugin(t, "echo"))
			f, err := os.Create(filepath.Join(dir, "echo.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(1 << 30); err != nil { // sparse: no disk used
				t.Fatal(err)
			}
			_ = f.Close()
			return nil
		}, "echo.json: the operator file is 1073741824 bytes, more than the limit of 1048576 (1 MiB)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			testkit.Install(t, dir, "wat-echo.wasm", readPlugin(t, "wat-echo"))
			unblock := tc.odd(t, dir)
			m, _ := newManager(t, dir, 0)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			errs := loadAllWithin(t, m, unblock)
			runtime.ReadMemStats(&after)
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
				t.Fatalf("LoadAll: %v; want one error saying %q", errs, tc.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 512<<20 {
				t.Errorf("loading the folder allocated %d MiB: the odd file was read", alloc>>20)
			}
			mustEcho(t, m, "wat-echo")
		})
	}
}

// An operator file at the bound is read; one byte more is refused.
func TestOperatorFileBound(t *testing.T) {
	dir := t.TempDir()
	at := filepath.Join(dir, "at.json")
	body := "{}" + strings.Repeat(" ", MaxOperatorBytes-2)
	if err := os.WriteFile(at, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadOperator(at); err != nil {
		t.Fatalf("an operator file of exactly %d bytes: %v", MaxOperatorBytes, err)
	}
	over := filepath.Join(dir, "over.json")
	if err := os.WriteFile(over, []byte(body+" "), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadOperator(over); err == nil || !strings.Contains(err.Error(), "more than the limit of 1048576 (1 MiB)") {
		t.Fatalf("an operator file one byte over the bound: %v; want a refusal naming the limit", err)
	}
}

// A symlink is followed when it leads to a regular file, even out of the
// folder (installers keep modules elsewhere and link them in): the plugin
// is served. A dangling one is a file that is not there.
func TestSymlinkToARegularFileIsServed(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	testkit.Install(t, elsewhere, "wat-echo.wasm", readPlugin(t, "wat-echo"))
	symlink(t, filepath.Join(elsewhere, "wat-echo.wasm"), filepath.Join(dir, "wat-echo.wasm"))
	symlink(t, filepath.Join(elsewhere, "none.wasm"), filepath.Join(dir, "dangling.wasm"))
	m, _ := newManager(t, dir, 0)
	if errs := loadAllWithin(t, m, nil); len(errs) != 0 {
		t.Fatalf("LoadAll: %v", errs)
	}
	mustEcho(t, m, "wat-echo")
}

// CheckName is the rule of the files the host serves: what it refuses,
// the folder's scan skips.
func TestCheckNameIsTheFolderRule(t *testing.T) {
	for _, name := range []string{"", ".x", "..", "../x", `a\b`, "a/b"} {
		if err := CheckName(name); err == nil {
			t.Errorf("CheckName(%q) = nil; want a refusal", name)
		}
		if _, ok := pluginName(name + ".wasm"); ok && !strings.ContainsAny(name, `/\`) {
			t.Errorf("the folder serves %q.wasm, which CheckName refuses", name)
		}
	}
	for _, name := range []string{"echo", "my-tool.v2", "a.wasm", "x."} {
		if err := CheckName(name); err != nil {
			t.Errorf("CheckName(%q): %v", name, err)
		}
		if got, ok := pluginName(name + ".wasm"); !ok || got != name {
			t.Errorf("pluginName(%q.wasm) = %q, %v", name, got, ok)
		}
	}
	if err := CheckName(".x"); !strings.Contains(err.Error(), "would never serve it") || !strings.Contains(err.Error(), "does not start with a dot") {
		t.Errorf("CheckName(.x): %v; want why and the fix", err)
	}
}
