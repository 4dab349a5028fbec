// Package regfile reads the files an operator puts in the plugins folder
// (a module NAME.wasm, an operator file NAME.json): regular files only,
// and at most a given size. It is shared by the engine's ReadModule and
// the plugins manager.
//
// Why: open(2) of a FIFO blocks until a writer comes, so a FIFO named
// x.wasm would stop the host at start before it serves anything; a device
// (a symlink to /dev/zero) reads forever. So a file is opened without
// blocking (O_NONBLOCK: a FIFO opens at once), checked with fstat on the
// open descriptor (no window between the check and the read for a rename
// to slip in), and refused unless it is a regular file. A symlink is
// followed, wherever it points, only to a regular file: installers keep
// modules elsewhere and link them in, and reading a regular file through
// a link reads nothing an operator did not put there.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped by Read's error for a file that is not a
// regular file (nor a symlink to one).
var ErrNotRegular = errors.New("not a regular file")

// TooLargeError is Read's error for a file over its bound.
type TooLargeError struct {
	// Size is the file's size, or at least Max+1 when the file grew
	// while it was read.
	Size, Max int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%d bytes, more than the limit of %d", e.Size, e.Max)
}

// Read returns the content of the regular file at path (a symlink to one
// is followed), refusing any other kind of file with an error wrapping
// ErrNotRegular, and a file over max bytes with a *TooLargeError before
// reading it whole. A missing file is an error wrapping fs.ErrNotExist.
func Read(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, %w: only regular files (or symlinks to one) are read; put a regular file there or remove it",
			path, kind(st.Mode()), ErrNotRegular)
	}
	if st.Size() > max {
		return nil, &TooLargeError{Size: st.Size(), Max: max}
	}
	// The file may grow between Stat and the read: read one byte more
	// than allowed to tell.
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, &TooLargeError{Size: int64(len(b)), Max: max}
	}
	return b, nil
}

// kind names a file's type for an error.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	default:
		return "a file of mode " + m.String()
	}
}
