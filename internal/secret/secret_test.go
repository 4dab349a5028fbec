package secret

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for content, want := range map[string]string{"Hunter2\n": "Hunter2", "Hunter2\r\n": "Hunter2", "Hunter2": "Hunter2", " sp ace \n": " sp ace "} {
		got, err := ReadFile(write("ok", content))
		if err != nil || got != want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", content, got, err, want)
		}
	}
	for name, content := range map[string]string{
		"empty": "\n", "lines": "Hunter2\nHunter3\n", "big": strings.Repeat("Hunter2", MaxBytes),
	} {
		_, err := ReadFile(write(name, content))
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if strings.Contains(err.Error(), "Hunter") {
			t.Errorf("%s: the error shows the content: %v", name, err)
		}
		if !strings.Contains(err.Error(), filepath.Join(dir, name)) {
			t.Errorf("%s: the error does not name the file: %v", name, err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: %v", err)
	}
}

// ReadFile reads the file again at each call: a rotated secret is used
// next.
func TestReadFileRereads(t *testing.T) {
	p := filepath.Join(t.TempDir(), "token")
	for _, v := range []string{"one", "two"} {
		if err := os.WriteFile(p, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := ReadFile(p); err != nil || got != v {
			t.Fatalf("ReadFile = %q, %v; want %q", got, err, v)
		}
	}
}

// A File reads its secret again when the file changes, a rewrite in place
// of the same size at once included, and not when it does not.
func TestFileReadsChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	write := func(v string, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	f := &File{Path: path}
	read := func(want string) {
		t.Helper()
		if got, err := f.Read(); err != nil || got != want {
			t.Fatalf("Read: %q, %v; want %q", got, err, want)
		}
	}
	long := time.Now().Add(-time.Hour)
	write("token-A", long)
	read("token-A")
	// Same size, same modification time, same file: a change the file's
	// metadata cannot show, so the content kept is what Read returns.
	write("token-B", long)
	read("token-A")
	write("token-C", long.Add(time.Second)) // the time moved: read again
	read("token-C")
	// Rewritten in place with the same size and time, as a coarse file
	// system clock would show it, the time not before the last read (a
	// time ahead, so that a stall of the machine changes nothing): recent,
	// so read again.
	recent := time.Now().Add(time.Hour)
	write("token-D", recent)
	read("token-D")
	write("token-E", recent)
	read("token-E")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Read(); err == nil {
		t.Fatal("Read of a removed file: no error")
	}
	write("token-F", long)
	read("token-F")
}
