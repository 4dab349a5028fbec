//go:build unix

package wasm

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// newTestMount opens sc's mount as a guest would see it, writable.
func newTestMount(t testing.TB, sc mountScene) experimentalsys.FS {
	t.Helper()
	m, err := openMount(Mount{HostDir: sc.mount, GuestDir: "/data"}, "test", slog.New(slog.DiscardHandler), new(atomic.Int64))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// readAll reads at most 4 KiB of p in m; ok is false if p does not open.
func readAll(m experimentalsys.FS, p string) (string, bool) {
	f, errno := m.OpenFile(p, experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		return "", false
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, _ := f.Read(buf)
	return string(buf[:n]), true
}

// A guest that swaps a link out of the mount in and out of a path while
// it opens files under that path never reaches outside: each path is
// resolved from the mount's descriptor one element at a time, so the swap
// only decides which file inside is opened. Everything is done through the
// mount, as one instance could (renaming the operator's link planted over
// the folder d), while another instance of the plugin opens d/f.
func TestMountSymlinkSwapRace(t *testing.T) {
	sc := newMountScene(t)
	if err := os.Mkdir(filepath.Join(sc.mount, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sc.mount, "d", "secret"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newTestMount(t, sc)

	const rounds = 3000
	done := make(chan struct{})
	swaps := make(chan int)
	go func() { // the swapping instance, until the reader is done
		n := 0
		defer func() { swaps <- n }()
		for {
			select {
			case <-done:
				return
			default:
			}
			// d is the folder, then the link to outside, then the folder.
			if m.Rename("d", "d.real") == 0 && m.Rename("planted", "d") == 0 {
				n++
				_ = m.Rename("d", "planted")
			}
			_ = m.Rename("d.real", "d")
		}
	}()
	var inside, missed int
	for range rounds {
		got, ok := readAll(m, "d/secret")
		switch {
		case !ok:
			missed++
		case got == "inside":
			inside++
		default:
			close(done)
			t.Fatalf("read %q through d while d was swapped with a link out of the mount", got)
		}
		if f, errno := m.OpenFile("d/new", experimentalsys.O_CREAT|experimentalsys.O_WRONLY, 0o644); errno == 0 {
			_ = f.Close()
		}
		_ = m.Unlink("d/new")
	}
	close(done)
	n := <-swaps
	t.Logf("%d swaps; of %d reads, %d inside, %d refused or not found", n, rounds, inside, missed)
	sc.untouched(t)
}

// FuzzMountPath runs scripts of file system calls, with any paths and
// symlink targets, against a mount beside a secret, with the operator's
// links out of it planted inside: no call resolves outside the mount (no
// file opened or stat'ed is the secret, its folder or the folder above),
// nothing outside changes, and every symlink in the mount points down or
// is a copy of one the operator planted.
func FuzzMountPath(f *testing.F) {
	for _, seed := range []string{
		"symlink .. esc\nread esc/outside/secret",
		"symlink ../../../../../../../../.. esc\nread esc/etc/hostname",
		"read planted/secret\nread planted-rel/secret\nwrite planted/secret",
		"read ../outside/secret\nread sub/../../outside/secret\nread /etc/hostname",
		"link planted/secret stolen\nread stolen\nlink planted copy\nread copy/secret",
		"rename planted/secret in\nwrite x\nrename x planted/out\nrename x ../out",
		"mkdir a\nsymlink a/../.. a/b\nread a/b/outside/secret\nsymlink sub s\nread s/inner",
		"rename planted sub/p\nrename planted-rel sub/deeper\nread sub/deeper/secret\nstat sub/p/secret",
		"mkdir a\nmkdir a/b\nrename planted-rel a/b/r\nrename a/b/r r\nread r/secret\nlstat r",
		"write d\nrmdir d\nunlink sub\nreaddir .\nreaddir planted\nreadlink planted\nchmod planted\nutimens planted/secret",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, script string) {
		sc := newMountScene(t)
		m := newTestMount(t, sc)
		outside := map[[2]uint64]string{}
		for _, p := range []string{sc.top, sc.outside, sc.secret, filepath.Dir(sc.top), "/"} {
			if fi, err := os.Stat(p); err == nil {
				st := fi.Sys().(*syscall.Stat_t)
				outside[[2]uint64{uint64(st.Dev), uint64(st.Ino)}] = p
			}
		}
		isOutside := func(dev, ino uint64) string { return outside[[2]uint64{dev, ino}] }

		lines := strings.Split(script, "\n")
		if len(lines) > 24 {
			lines = lines[:24]
		}
		for _, line := range lines {
			op, rest, _ := strings.Cut(line, " ")
			a, b, _ := strings.Cut(rest, " ")
			switch op {
			case "read", "write", "readdir":
				flag := experimentalsys.O_RDONLY
				if op == "write" {
					flag = experimentalsys.O_RDWR | experimentalsys.O_CREAT
				}
				f, errno := m.OpenFile(a, flag, 0o644)
				if errno != 0 {
					continue
				}
				st, errno := f.Stat()
				if errno == 0 {
					if p := isOutside(st.Dev, st.Ino); p != "" {
						t.Fatalf("%q opened %s, outside the mount", line, p)
					}
				}
				buf := make([]byte, 256)
				if n, _ := f.Read(buf); strings.Contains(string(buf[:n]), secretText) {
					t.Fatalf("%q read the secret", line)
				}
				if op == "write" {
					_, _ = f.Write([]byte("x"))
				}
				if op == "readdir" {
					_, _ = f.Readdir(-1)
				}
				_ = f.Close()
			case "stat", "lstat":
				stat := m.Stat
				if op == "lstat" {
					stat = m.Lstat
				}
				if st, errno := stat(a); errno == 0 {
					if p := isOutside(st.Dev, st.Ino); p != "" {
						t.Fatalf("%q reached %s, outside the mount", line, p)
					}
				}
			case "mkdir":
				_ = m.Mkdir(a, 0o755)
			case "rmdir":
				_ = m.Rmdir(a)
			case "unlink":
				_ = m.Unlink(a)
			case "symlink":
				_ = m.Symlink(a, b)
			case "link":
				_ = m.Link(a, b)
			case "rename":
				_ = m.Rename(a, b)
			case "readlink":
				_, _ = m.Readlink(a)
			case "chmod":
				_ = m.Chmod(a, 0o700) // still traversable, so the test can clean up
			case "utimens":
				_ = m.Utimens(a, 0, 0)
			}
		}
		sc.untouched(t)
		planted := map[string]bool{sc.outside: true, "../outside": true}
		_ = filepath.WalkDir(sc.mount, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.Type()&os.ModeSymlink == 0 {
				return nil
			}
			if dst, err := os.Readlink(p); err == nil && !planted[dst] && !symlinkPointsDown(dst) {
				t.Fatalf("the mount holds %s -> %q, a link that does not point down", p, dst)
			}
			return nil
		})
	})
}

// The file calls wazero's WASI makes on a mount's files: positional reads
// and writes, truncation, times, the append mode (a reopen through the
// mount), readdir and its rewind, and refusals in a read-only mount.
func TestMountFileCalls(t *testing.T) {
	sc := newMountScene(t)
	m := newTestMount(t, sc)
	f, errno := m.OpenFile("sub/f", experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_EXCL, 0o644)
	if errno != 0 {
		t.Fatalf("create: %v", errno)
	}
	defer f.Close()
	must := func(what string, errno experimentalsys.Errno) {
		t.Helper()
		if errno != 0 {
			t.Fatalf("%s: %v", what, errno)
		}
	}
	_, errno = f.Write([]byte("hello"))
	must("write", errno)
	_, errno = f.Pwrite([]byte("J"), 0)
	must("pwrite", errno)
	must("set append", f.SetAppend(true))
	if !f.IsAppend() {
		t.Error("IsAppend after SetAppend(true) is false")
	}
	_, errno = f.Seek(0, 0)
	must("seek", errno)
	_, errno = f.Write([]byte("!"))
	must("append", errno)
	buf := make([]byte, 16)
	n, errno := f.Pread(buf, 0)
	must("pread", errno)
	if got := string(buf[:n]); got != "Jello!" {
		t.Errorf("after write, pwrite and an append at offset 0: %q, want Jello!", got)
	}
	must("truncate", f.Truncate(4))
	must("utimens", f.Utimens(1e9, experimentalsys.UTIME_OMIT))
	st, errno := m.Stat("sub/f")
	must("stat", errno)
	if st.Size != 4 || st.Atim != 1e9 {
		t.Errorf("stat after truncate(4) and atime 1s: size %d, atime %d", st.Size, st.Atim)
	}

	d, errno := m.OpenFile("sub", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
	must("open dir", errno)
	defer d.Close()
	names := func() []string {
		t.Helper()
		_, errno := d.Seek(0, 0)
		must("rewind", errno)
		es, errno := d.Readdir(-1)
		must("readdir", errno)
		var out []string
		for _, e := range es {
			out = append(out, e.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names(); !slices.Equal(got, []string{"f", "inner"}) {
		t.Errorf("readdir: %v", got)
	}
	must("mkdir", m.Mkdir("sub/g", 0o755))
	if got := names(); !slices.Equal(got, []string{"f", "g", "inner"}) {
		t.Errorf("readdir after a rewind and a mkdir: %v", got)
	}
	if _, errno := d.Write([]byte("x")); errno != experimentalsys.EISDIR {
		t.Errorf("write to a directory: %v, want EISDIR", errno)
	}

	ro, err := openMount(Mount{HostDir: sc.mount, GuestDir: "/ro", ReadOnly: true}, "test", slog.New(slog.DiscardHandler), new(atomic.Int64))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	for what, errno := range map[string]experimentalsys.Errno{
		"mkdir": ro.Mkdir("x", 0o755), "rmdir": ro.Rmdir("sub/g"), "unlink": ro.Unlink("sub/f"),
		"rename": ro.Rename("sub/f", "sub/h"), "link": ro.Link("sub/f", "sub/h"), "symlink": ro.Symlink("f", "sub/h"),
		"chmod": ro.Chmod("sub/f", 0o777), "utimens": ro.Utimens("sub/f", 0, 0),
	} {
		if errno != experimentalsys.EROFS {
			t.Errorf("%s in a read-only mount: %v, want EROFS", what, errno)
		}
	}
	for _, flag := range []experimentalsys.Oflag{experimentalsys.O_WRONLY, experimentalsys.O_RDWR,
		experimentalsys.O_RDONLY | experimentalsys.O_CREAT, experimentalsys.O_RDONLY | experimentalsys.O_TRUNC} {
		if _, errno := ro.OpenFile("sub/f", flag, 0o644); errno != experimentalsys.EROFS {
			t.Errorf("open with %v in a read-only mount: %v, want EROFS", flag, errno)
		}
	}
	rf, errno := ro.OpenFile("sub/f", experimentalsys.O_RDONLY, 0)
	must("open read-only", errno)
	defer rf.Close()
	if _, errno := rf.Write([]byte("x")); errno != experimentalsys.EBADF {
		t.Errorf("write through a read-only mount's file: %v, want EBADF", errno)
	}
	for what, errno := range map[string]experimentalsys.Errno{"truncate": rf.Truncate(0), "utimens": rf.Utimens(0, 0), "sync": rf.Sync()} {
		if errno != experimentalsys.EBADF {
			t.Errorf("%s through a read-only mount's file: %v, want EBADF", what, errno)
		}
	}
	if b, err := os.ReadFile(filepath.Join(sc.mount, "sub", "f")); err != nil || string(b) != "Jell" {
		t.Errorf("sub/f after the read-only calls: %q, %v; want Jell", b, err)
	}
}

// A guest that opens files without closing them (they would stay open in
// an idle instance too) is refused past maxMountFiles, not handed the
// host's file descriptors without end; closing gives the slots back, once
// each, through a reopen for append too.
func TestMountOpenFilesBounded(t *testing.T) {
	sc := newMountScene(t)
	m := newTestMount(t, sc).(*mountFS)
	var open []experimentalsys.File
	defer func() {
		for _, f := range open {
			f.Close()
		}
	}()
	for i := range maxMountFiles {
		f, errno := m.OpenFile("sub", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
		if errno != 0 {
			t.Fatalf("open %d of %d: %v", i+1, maxMountFiles, errno)
		}
		open = append(open, f)
	}
	if f, errno := m.OpenFile("sub", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0); errno != experimentalsys.EAGAIN {
		if f != nil {
			f.Close()
		}
		t.Fatalf("open past %d files: %v, want EAGAIN", maxMountFiles, errno)
	}
	open[0].Close()
	open[0].Close() // a second close gives nothing back twice
	open = open[1:]
	f, errno := m.OpenFile("sub/g", experimentalsys.O_RDWR|experimentalsys.O_CREAT, 0o644)
	if errno != 0 {
		t.Fatalf("open after a close: %v", errno)
	}
	if errno := f.SetAppend(true); errno != 0 { // a reopen: one file still
		t.Fatalf("set append: %v", errno)
	}
	open = append(open, f)
	if n := m.files.Load(); n != maxMountFiles {
		t.Fatalf("%d files counted open, want %d", n, maxMountFiles)
	}
	for _, f := range open {
		f.Close()
	}
	open = nil
	if n := m.files.Load(); n != 0 {
		t.Fatalf("%d files counted open after every close, want 0", n)
	}
}
