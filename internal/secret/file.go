package secret

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// File is a secret file that a caller reads at each use (the admin token,
// at each op that needs it and each chunk of an install), so that a
// rotated file counts at once, without opening and reading it each time:
// the content is kept with the file's identity, size and modification
// time, and read again when one of them changed. A file modified less
// than racyWindow before it was last read is read again anyway: the file
// system's clock may be coarse (a few milliseconds), so that a file
// rewritten in place with the same size within that time would show the
// same modification time (git's "racy" entries). Safe for concurrent use.
type File struct {
	Path string

	mu    sync.Mutex
	seen  os.FileInfo // the file as last read; nil: read it
	read  time.Time   // when it was
	value string
}

// racyWindow is how recent a modification must be for a file to be read
// again although it looks the same.
const racyWindow = 2 * time.Second

// Read returns the file's secret as ReadFile does, read again only when
// the file changed.
func (f *File) Read() (string, error) {
	st, err := os.Stat(f.Path)
	if err != nil {
		return "", fmt.Errorf("secret file: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.seen; s != nil && os.SameFile(s, st) && s.Size() == st.Size() && s.ModTime().Equal(st.ModTime()) &&
		f.read.Sub(st.ModTime()) >= racyWindow {
		return f.value, nil
	}
	now := time.Now()
	v, err := ReadFile(f.Path)
	if err != nil {
		f.seen = nil
		return "", err
	}
	f.seen, f.read, f.value = st, now, v
	return v, nil
}
