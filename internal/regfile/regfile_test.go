package regfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Read returns a regular file within its bound, follows a symlink to one,
// and refuses at once, without blocking or reading, every other kind of
// file and a file over its bound.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(file, 10); err != nil || string(b) != "0123456789" {
		t.Fatalf("Read at the bound: %q, %v", b, err)
	}
	var tooLarge *TooLargeError
	if _, err := Read(file, 9); !errors.As(err, &tooLarge) || tooLarge.Size != 10 || tooLarge.Max != 9 {
		t.Fatalf("Read over the bound: %v; want a TooLargeError of 10 bytes over 9", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(link, 10); err != nil || string(b) != "0123456789" {
		t.Fatalf("Read through a symlink to a regular file: %q, %v", b, err)
	}
	if _, err := Read(filepath.Join(dir, "none"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Read of a missing file: %v; want fs.ErrNotExist", err)
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	odd := map[string]string{fifo: "is a named pipe (FIFO)", dir: "is a directory"}
	if _, err := os.Stat("/dev/zero"); err == nil {
		zero := filepath.Join(dir, "zero")
		if err := os.Symlink("/dev/zero", zero); err != nil {
			t.Fatal(err)
		}
		odd[zero] = "is a character device"
	}
	for path, want := range odd {
		_, err := Read(path, 1<<20)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), path+" "+want+", not a regular file") ||
			!strings.Contains(err.Error(), "put a regular file there or remove it") {
			t.Errorf("Read(%s): %v; want ErrNotRegular naming the file, what it is and the fix", path, err)
		}
	}
}
