package wasm

import (
	"io"
	"io/fs"
	"os"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// mountFile is a file or directory a guest opened in a mount (mountFS).
//
// Reading, seeking, stat and readdir are wazero's own file over an fs.FS
// (experimental/sysfs.AdaptFS): it works on the *os.File opened through
// the mount's os.Root, lists a directory with os.File.Readdir (fstatat on
// the directory's descriptor) and reopens a directory it rewinds through
// the mount (reopener). Writing, truncating, syncing, times and the append
// mode, which that file does not do, are done here on the same *os.File,
// and refused in a read-only mount.
//
// A file is used by one instance, which runs one call at a time, so its
// fields need no lock (wazero's own files have none either).
type mountFile struct {
	experimentalsys.File // wazero's file over file

	fs   *mountFS
	path string // relative to the mount, for SetAppend's reopen
	flag experimentalsys.Oflag
	file *os.File
	// closed: the file has left fs.files. A file is used by one call of
	// one instance at a time, as wazero's are.
	closed bool
}

// Close implements experimental/sys.File: the file leaves the mount's
// count of open files (mountFS.files) once.
func (f *mountFile) Close() experimentalsys.Errno {
	errno := f.File.Close()
	if !f.closed {
		f.closed = true
		f.fs.files.Add(-1)
	}
	return errno
}

// reopener is the fs.FS under wazero's file: its first Open returns the
// file already opened (with the guest's flags), later ones, which wazero's
// file makes only to rewind a directory, open the name read-only through
// the mount.
type reopener struct {
	first *os.File
	root  *os.Root
}

// Open implements fs.FS.
func (r *reopener) Open(name string) (fs.File, error) {
	if f := r.first; f != nil {
		r.first = nil
		return f, nil
	}
	return r.root.Open(name)
}

// newMountFile wraps f, opened in m at p (relative) with flag.
func newMountFile(m *mountFS, p string, flag experimentalsys.Oflag, f *os.File) (*mountFile, experimentalsys.Errno) {
	adapted := &sysfs.AdaptFS{FS: &reopener{first: f, root: m.root}}
	wf, errno := adapted.OpenFile(p, experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		_ = f.Close()
		return nil, errno
	}
	return &mountFile{File: wf, fs: m, path: p, flag: flag, file: f}, 0
}

var _ experimentalsys.File = (*mountFile)(nil)

// IsAppend implements experimental/sys.File.
func (f *mountFile) IsAppend() bool { return f.flag&experimentalsys.O_APPEND != 0 }

// SetAppend implements experimental/sys.File. The append mode of a
// descriptor is fixed when it is opened: the file is reopened through the
// mount (so still inside it), must be the same file, and keeps its offset.
func (f *mountFile) SetAppend(enable bool) experimentalsys.Errno {
	if errno := f.check(); errno != 0 {
		return errno
	}
	flag := f.flag &^ experimentalsys.O_APPEND
	if enable {
		flag |= experimentalsys.O_APPEND
	}
	if flag == f.flag {
		return 0
	}
	off, err := f.file.Seek(0, io.SeekCurrent)
	if err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	nf, errno := f.fs.reopen(f.path, flag&^experimentalsys.O_NOFOLLOW)
	if errno != 0 {
		return errno
	}
	was, err1 := f.file.Stat()
	now, err2 := nf.file.Stat()
	if err1 != nil || err2 != nil || !os.SameFile(was, now) {
		_ = nf.Close()
		return experimentalsys.ENOENT // the name no longer leads to this file
	}
	if _, err := nf.file.Seek(off, io.SeekStart); err != nil {
		_ = nf.Close()
		return experimentalsys.UnwrapOSError(err)
	}
	_ = f.Close()
	*f = *nf
	return 0
}

// check returns the errno of a call that needs an open regular file (not
// a directory).
func (f *mountFile) check() experimentalsys.Errno {
	isDir, errno := f.IsDir() // EBADF once closed
	switch {
	case errno != 0:
		return errno
	case isDir:
		return experimentalsys.EISDIR
	}
	return 0
}

// fileErr is the errno of a write call's err, or the errno check gives.
func (f *mountFile) fileErr(err error) experimentalsys.Errno {
	errno := experimentalsys.UnwrapOSError(err)
	if errno == 0 {
		return 0
	}
	if e := f.check(); e != 0 {
		return e
	}
	return errno
}

// writable returns 0 if the file may be written: open, not a directory,
// and not in a read-only mount (EBADF: not open for writing).
func (f *mountFile) writable() experimentalsys.Errno {
	if errno := f.check(); errno != 0 {
		return errno
	}
	if f.fs.readOnly {
		return experimentalsys.EBADF
	}
	return 0
}

// Write implements experimental/sys.File.
func (f *mountFile) Write(buf []byte) (int, experimentalsys.Errno) {
	if f.fs.readOnly {
		return 0, f.writable()
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.file.Write(buf)
	return n, f.fileErr(err)
}

// Pwrite implements experimental/sys.File.
func (f *mountFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if f.fs.readOnly {
		return 0, f.writable()
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.file.WriteAt(buf, off)
	return n, f.fileErr(err)
}

// Truncate implements experimental/sys.File.
func (f *mountFile) Truncate(size int64) experimentalsys.Errno {
	if errno := f.writable(); errno != 0 {
		return errno
	}
	if size < 0 {
		return experimentalsys.EINVAL
	}
	return f.fileErr(f.file.Truncate(size))
}

// Sync implements experimental/sys.File.
func (f *mountFile) Sync() experimentalsys.Errno {
	if _, errno := f.IsDir(); errno != 0 {
		return errno
	}
	if f.fs.readOnly {
		return experimentalsys.EBADF
	}
	return experimentalsys.UnwrapOSError(f.file.Sync())
}

// Datasync implements experimental/sys.File, as a full Sync.
func (f *mountFile) Datasync() experimentalsys.Errno { return f.Sync() }

// Utimens implements experimental/sys.File; a time of UTIME_OMIT is left.
func (f *mountFile) Utimens(atim, mtim int64) experimentalsys.Errno {
	if _, errno := f.IsDir(); errno != 0 {
		return errno
	}
	if f.fs.readOnly {
		return experimentalsys.EBADF
	}
	if atim == experimentalsys.UTIME_OMIT && mtim == experimentalsys.UTIME_OMIT {
		return 0
	}
	return experimentalsys.UnwrapOSError(futimens(f.file, atim, mtim))
}
