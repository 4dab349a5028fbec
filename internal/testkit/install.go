package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

// Install puts content in dir/file the way installers should: a temporary
// file in the same folder, then a rename, so that a watcher never sees a
// part-written module.
func Install(tb testing.TB, dir, file string, content []byte) {
	tb.Helper()
	tmp := filepath.Join(dir, file+".tmp")
	if err := os.WriteFile(tmp, content, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, file)); err != nil {
		tb.Fatal(err)
	}
}

// InstallFile installs a copy of the built test plugin at path (`make
// plugins` builds them) in dir as name (Install). It needs the plugins:
// under -short the test is skipped (Needs).
func InstallFile(tb testing.TB, path, dir, name string) {
	tb.Helper()
	Needs(tb, Plugins)
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run `make plugins`)", err)
	}
	Install(tb, dir, name, b)
}
