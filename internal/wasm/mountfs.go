package wasm

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// A mount is a host directory a plugin was granted (Grants.Mounts). wazero's
// own directory mount (wazero.FSConfig.WithDirMount) joins the guest's path
// to the host directory and lets the host's kernel resolve it, so a symlink
// in the folder — one the guest made with path_symlink ("esc ->
// ../../../..") or one that was there ("planted -> /etc") — led the guest
// anywhere the host process may go, read-only mounts included.
//
// mountFS is the mount as the guest sees it instead: an
// experimental/sys.FS over an os.Root opened on the host directory. os.Root
// resolves every path one element at a time with openat and O_NOFOLLOW from
// the directory's descriptor, follows symlinks itself and refuses any path,
// symlink or ".." that would leave the directory, so:
//
//   - no path, symlink or ".." leaves the mount: a symlink whose target is
//     outside (absolute, or with ".." above the mount) is not followed, the
//     call fails (EPERM, or ENOENT/ELOOP as the kernel says);
//   - a symlink swapped in during a call cannot take it out either: each
//     element is opened relative to the descriptor of the one before, never
//     by a path from the host's root;
//   - hard links and renames have both ends inside the mount, so nothing
//     outside can be linked in or moved out;
//   - files opened are served by their descriptor (reads, writes, stat,
//     readdir with fstatat on the directory's descriptor), never by a host
//     path.
//
// Symlinks a guest makes (path_symlink) must point down from the link's own
// folder: a relative target with no ".." element. Others are refused with
// EPERM. The guest could not follow an upward link out anyway (os.Root); the
// rule is for the host's other programs: a link a guest leaves in the folder
// never leads one that follows it out of the folder (by induction: each
// element of its target is a name in a directory of the mount, and the
// links it may meet are the guest's, which point down, or the operator's).
//
// A read-only mount refuses every write: opening for writing, creating or
// truncating, mkdir, rmdir, unlink, rename, link, symlink, chmod and times
// fail with EROFS (as on a read-only file system; wazero's read-only mount
// said ENOSYS to an open for writing); writes, truncation and times through
// a file opened for reading fail with EBADF.
//
// A mount opens regular files and folders only: an open of a FIFO, a
// socket or a device fails with ENOTSUP (served), without blocking or
// reaching a driver: a FIFO's open would wait in the kernel for a writer,
// where no deadline or cancel reaches it.
//
// os.Root follows at most 8 symlinks on one path (ELOOP past that), and a
// file of a mount cannot be put in non-blocking mode (mountFile is not a
// PollableFile: fd_fdstat_set_flags with NONBLOCK gets ENOSYS, after which
// Go's runtime reads blocking, as it does for regular files anyway).
//
// Each refusal of a path or symlink that would leave the mount is counted
// (Stats.MountRefusals) and logged, the first and then at each power of two,
// so a guest that keeps trying cannot flood the log.
type mountFS struct {
	experimentalsys.UnimplementedFS

	root     *os.Root
	readOnly bool
	guestDir string

	plugin  string
	log     *slog.Logger
	refused *atomic.Int64 // the plugin's count of refusals, all mounts

	// files counts the files open through the mount, by every instance
	// of the plugin: at most maxMountFiles, so that a guest opening files
	// without closing them (they stay open in an idle instance too) cannot
	// take the host's file descriptors.
	files atomic.Int64
	// notServedCount counts the opens refused for the file's type
	// (notServed).
	notServedCount atomic.Int64
}

// maxMountFiles bounds the files open at once through one mount; past it
// an open gets EAGAIN (WASI has no EMFILE).
const maxMountFiles = 256

// openMount opens m's host directory as a mount of the plugin named plugin.
func openMount(m Mount, plugin string, log *slog.Logger, refused *atomic.Int64) (*mountFS, error) {
	root, err := os.OpenRoot(m.HostDir)
	if err != nil {
		return nil, fmt.Errorf("opening mount %s (guest %s): %w", m.HostDir, m.GuestDir, err)
	}
	return &mountFS{root: root, readOnly: m.ReadOnly, guestDir: m.GuestDir, plugin: plugin, log: log, refused: refused}, nil
}

// openMounts opens g's mounts for the plugin named plugin; refusals are
// counted in refused. On error none stays open.
func (g Grants) openMounts(plugin string, log *slog.Logger, refused *atomic.Int64) ([]*mountFS, error) {
	var out []*mountFS
	for _, m := range g.Mounts {
		fs, err := openMount(m, plugin, log, refused)
		if err != nil {
			closeMounts(out)
			return nil, err
		}
		out = append(out, fs)
	}
	return out, nil
}

// closeMounts closes mounts opened by openMounts.
func closeMounts(mounts []*mountFS) {
	for _, m := range mounts {
		_ = m.Close()
	}
}

// Close closes the mount's directory. Files the guest opened stay usable
// until closed: each has its own descriptor.
func (m *mountFS) Close() error { return m.root.Close() }

// String implements fmt.Stringer (wazero names mounts in errors).
func (m *mountFS) String() string { return m.root.Name() }

// rel turns a path wazero hands over (relative to the mount, "" or "/" for
// the mount itself, perhaps with a trailing slash) into one for os.Root.
func rel(p string) string {
	p = strings.TrimLeft(p, "/")
	if p == "" {
		return "."
	}
	return p
}

// refuse counts and logs a refusal of op on p and returns errno.
func (m *mountFS) refuse(op, p, why string, errno experimentalsys.Errno) experimentalsys.Errno {
	n := m.refused.Add(1)
	if n&(n-1) == 0 {
		m.log.Warn("plugin refused: a mount cannot be left", "plugin", m.plugin, "mount", m.guestDir, "op", op,
			"path", clip(p), "reason", clip(why), "refusals", n)
	}
	return errno
}

// logPathBytes bounds a guest's path in the log: a guest chooses its
// paths, of any length its memory holds.
const logPathBytes = 256

// clip returns s cut to logPathBytes on a character boundary, marked when
// cut (outputlimit.go's cutLine and cutMark, as for the guest's output).
func clip(s string) string {
	b, cut := cutLine([]byte(s), logPathBytes)
	if !cut {
		return s
	}
	return string(b) + cutMark
}

// errno maps err of an os.Root call on p to the errno the guest gets.
// os.Root's refusal of a path that leaves the root ("path escapes from
// parent") carries no errno; the guest gets EPERM, like wazero's refusal of
// a path that starts with "..", and the refusal is counted.
func (m *mountFS) errno(op, p string, err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	var se syscall.Errno
	if errors.As(err, &se) {
		return experimentalsys.UnwrapOSError(se)
	}
	if e := experimentalsys.UnwrapOSError(err); e != experimentalsys.EIO {
		return e
	}
	return m.refuse(op, p, err.Error(), experimentalsys.EPERM)
}

// writes reports whether opening with flag may change the file system.
func writes(flag experimentalsys.Oflag) bool {
	return flag&(experimentalsys.O_WRONLY|experimentalsys.O_RDWR) != 0 ||
		flag&(experimentalsys.O_CREAT|experimentalsys.O_TRUNC) != 0
}

// osFlag converts wazero's open flags to os.OpenFile's. The synchronous
// write flags become O_SYNC, the strongest, on every platform.
func osFlag(flag experimentalsys.Oflag) int {
	var f int
	switch flag & (experimentalsys.O_RDONLY | experimentalsys.O_RDWR | experimentalsys.O_WRONLY) {
	case experimentalsys.O_RDWR:
		f = os.O_RDWR
	case experimentalsys.O_WRONLY:
		f = os.O_WRONLY
	default:
		f = os.O_RDONLY
	}
	for _, b := range []struct {
		in  experimentalsys.Oflag
		out int
	}{
		{experimentalsys.O_APPEND, os.O_APPEND}, {experimentalsys.O_CREAT, os.O_CREATE},
		{experimentalsys.O_EXCL, os.O_EXCL}, {experimentalsys.O_TRUNC, os.O_TRUNC},
		{experimentalsys.O_SYNC, os.O_SYNC}, {experimentalsys.O_DSYNC, os.O_SYNC}, {experimentalsys.O_RSYNC, os.O_SYNC},
		{experimentalsys.O_DIRECTORY, oDirectory}, {experimentalsys.O_NONBLOCK, oNonblock},
	} {
		if flag&b.in != 0 {
			f |= b.out
		}
	}
	return f
}

// OpenFile implements experimental/sys.FS.
func (m *mountFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if m.readOnly && writes(flag) {
		if flag&experimentalsys.O_DIRECTORY != 0 {
			return nil, experimentalsys.EISDIR
		}
		return nil, experimentalsys.EROFS
	}
	f, errno := m.open(rel(p), flag, perm)
	if errno != 0 {
		return nil, errno
	}
	return f, 0
}

// open opens p (already rel) for OpenFile and for a file's reopen.
func (m *mountFS) open(p string, flag experimentalsys.Oflag, perm fs.FileMode) (*mountFile, experimentalsys.Errno) {
	if flag&experimentalsys.O_NOFOLLOW != 0 {
		// os.Root follows a final symlink (inside the root) whatever the
		// flags; WASI's open without LOOKUP_SYMLINK_FOLLOW must not. A
		// link swapped in after this check is still resolved inside.
		if fi, err := m.root.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, experimentalsys.ELOOP
		}
	}
	if m.files.Add(1) > maxMountFiles {
		m.files.Add(-1)
		return nil, experimentalsys.EAGAIN // WASI has no EMFILE: "resource unavailable, try again"
	}
	f, errno := m.openCounted(p, flag, perm)
	if errno != 0 {
		m.files.Add(-1)
	}
	return f, errno
}

// reopen opens p again for a file that replaces one already open (its
// append mode changed): counted, but not held to the bound, as the file
// it replaces is closed right after.
func (m *mountFS) reopen(p string, flag experimentalsys.Oflag) (*mountFile, experimentalsys.Errno) {
	m.files.Add(1)
	f, errno := m.openCounted(p, flag, 0)
	if errno != 0 {
		m.files.Add(-1)
	}
	return f, errno
}

// openCounted is open once the file is counted in m.files. It opens
// regular files and folders only (served).
func (m *mountFS) openCounted(p string, flag experimentalsys.Oflag, perm fs.FileMode) (*mountFile, experimentalsys.Errno) {
	if fi, err := m.root.Stat(p); err == nil && !served(fi.Mode()) {
		return nil, m.notServed(p, fi.Mode())
	}
	// What was stat'ed may be swapped for a FIFO before the open: the open
	// does not block (O_NONBLOCK), and the file it opened is checked again.
	f, err := m.root.OpenFile(p, osFlag(flag)|oNonblock|oNoctty, perm)
	if err != nil {
		return nil, m.errno("open", p, err)
	}
	fi, err := f.Stat()
	if err != nil || !served(fi.Mode()) {
		_ = f.Close()
		if err != nil {
			return nil, m.errno("open", p, err)
		}
		return nil, m.notServed(p, fi.Mode())
	}
	if flag&experimentalsys.O_NONBLOCK == 0 && oNonblock != 0 {
		_ = f.Fd() // back to blocking, as the guest opened it
	}
	if oDirectory == 0 && flag&experimentalsys.O_DIRECTORY != 0 && !fi.IsDir() {
		_ = f.Close()
		return nil, experimentalsys.ENOTDIR
	}
	return newMountFile(m, p, flag&^(experimentalsys.O_CREAT|experimentalsys.O_TRUNC|experimentalsys.O_EXCL), f)
}

// served reports whether a mount opens a file of this mode: a regular file
// or a folder. The open of a FIFO blocks in the kernel until the other end
// comes, where no deadline or cancel reaches it, and a device's or a
// socket's does what its driver does.
func served(mode fs.FileMode) bool { return mode.IsRegular() || mode.IsDir() }

// notServed is the refusal of an open of p, of a mode not served: ENOTSUP,
// logged (the first and then each power of two, as refuse).
func (m *mountFS) notServed(p string, mode fs.FileMode) experimentalsys.Errno {
	n := m.notServedCount.Add(1)
	if n&(n-1) == 0 {
		m.log.Warn("plugin refused: a mount opens regular files and folders only", "plugin", m.plugin, "mount", m.guestDir,
			"path", clip(p), "type", mode.Type().String(), "refusals", n)
	}
	return experimentalsys.ENOTSUP
}

// Lstat implements experimental/sys.FS.
func (m *mountFS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	p = rel(p)
	fi, err := m.root.Lstat(p)
	if err != nil {
		return sys.Stat_t{}, m.errno("lstat", p, err)
	}
	return sys.NewStat_t(fi), 0
}

// Stat implements experimental/sys.FS.
func (m *mountFS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	p = rel(p)
	fi, err := m.root.Stat(p)
	if err != nil {
		return sys.Stat_t{}, m.errno("stat", p, err)
	}
	return sys.NewStat_t(fi), 0
}

// Mkdir implements experimental/sys.FS.
func (m *mountFS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	if m.readOnly {
		return experimentalsys.EROFS
	}
	p = rel(p)
	errno := m.errno("mkdir", p, m.root.Mkdir(p, perm))
	if errno == experimentalsys.ENOTDIR { // as wazero's directory mount says
		errno = experimentalsys.ENOENT
	}
	return errno
}

// Chmod implements experimental/sys.FS.
func (m *mountFS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	if m.readOnly {
		return experimentalsys.EROFS
	}
	p = rel(p)
	return m.errno("chmod", p, m.root.Chmod(p, perm))
}

// Rename implements experimental/sys.FS: both names are in the mount.
func (m *mountFS) Rename(from, to string) experimentalsys.Errno {
	if m.readOnly {
		return experimentalsys.EROFS
	}
	from, to = rel(from), rel(to)
	if from == to {
		return 0
	}
	return m.errno("rename", from+" -> "+to, m.root.Rename(from, to))
}

// Rmdir implements experimental/sys.FS.
func (m *mountFS) Rmdir(p string) experimentalsys.Errno {
	if m.readOnly {
		return experimentalsys.EROFS
	}
	p = rel(p)
	// os.Root has one Remove for files and directories; rmdir must not
	// remove a file. What changes between the check and the removal is
	// still inside the mount.
	fi, err := m.root.Lstat(p)
	if err != nil {
		return m.errno("rmdir", p, err)
	}
	if !fi.IsDir() {
		return experimentalsys.ENOTDIR
	}
	return m.errno("rmdir", p, m.root.Remove(p))
}

// Unlink implements experimental/sys.FS.
func (m *mountFS) Unlink(p string) experimentalsys.Errno {
	if m.readOnly {
		return experimentalsys.EROFS
	}
	p = rel(p)
	fi, err := m.root.Lstat(p)
	if err != nil {
		return m.errno("unlink", p, err)
	}
	if fi.IsDir() {
		return experimentalsys.EISDIR
	}
	return m.errno("unlink", p, m.root.Remove(p))
}

// Link implements experimental/sys.FS: both names are in the mount, and a
// symlink is linked, not its target.
func (m *mountFS) Link(oldPath, newPath string) experimentalsys.Errno {
	if m.readOnly {
		return experimentalsys.EROFS
	}
	oldPath, newPath = rel(oldPath), rel(newPath)
	return m.errno("link", oldPath+" -> "+newPath, m.root.Link(oldPath, newPath))
}

// Symlink implements experimental/sys.FS: target must point down from the
// link's folder (symlinkPointsDown).
func (m *mountFS) Symlink(target, link string) experimentalsys.Errno {
	if m.readOnly {
		return experimentalsys.EROFS
	}
	link = rel(link)
	if !symlinkPointsDown(target) {
		return m.refuse("symlink", link+" -> "+target, "a symlink's target must be relative with no '..'", experimentalsys.EPERM)
	}
	return m.errno("symlink", link, m.root.Symlink(target, link))
}

// symlinkPointsDown reports whether target, as the content of a symlink,
// names something below the link's own folder: not empty, relative, and
// without a ".." element.
func symlinkPointsDown(target string) bool {
	if target == "" || path.IsAbs(target) || strings.ContainsRune(target, 0) {
		return false
	}
	for el := range strings.SplitSeq(target, "/") {
		if el == ".." {
			return false
		}
	}
	return true
}

// Readlink implements experimental/sys.FS.
func (m *mountFS) Readlink(p string) (string, experimentalsys.Errno) {
	p = rel(p)
	dst, err := m.root.Readlink(p)
	if err != nil {
		return "", m.errno("readlink", p, err)
	}
	return dst, 0
}

// Utimens implements experimental/sys.FS; a time of UTIME_OMIT is left.
func (m *mountFS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	if m.readOnly {
		return experimentalsys.EROFS
	}
	p = rel(p)
	if atim == experimentalsys.UTIME_OMIT && mtim == experimentalsys.UTIME_OMIT {
		return 0
	}
	return m.errno("utimens", p, m.root.Chtimes(p, omitOrTime(atim), omitOrTime(mtim)))
}

// omitOrTime is the time.Time os.Root.Chtimes takes for ns: the zero time,
// which it leaves unchanged, for UTIME_OMIT.
func omitOrTime(ns int64) time.Time {
	if ns == experimentalsys.UTIME_OMIT {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
