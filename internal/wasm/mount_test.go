//go:build unix

package wasm

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// WASI errnos the mount tests expect.
const (
	wasiEPERM = 63
	wasiEROFS = 69
)

// secretText is what the file outside the mount holds.
const secretText = "s3cret-outside"

// mountScene is a temporary folder T with the mount T/m beside
// T/outside/secret, and in the mount what an operator might have left
// there: planted -> T/outside (absolute), planted-rel -> ../outside, and
// the file sub/inner.
type mountScene struct {
	top, mount, outside, secret string
}

func newMountScene(t *testing.T) mountScene {
	t.Helper()
	top := t.TempDir()
	sc := mountScene{top: top, mount: filepath.Join(top, "m"), outside: filepath.Join(top, "outside")}
	sc.secret = filepath.Join(sc.outside, "secret")
	for _, d := range []string{sc.mount, sc.outside, filepath.Join(sc.mount, "sub")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(sc.secret, []byte(secretText), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sc.mount, "sub", "inner"), []byte("inner"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sc.outside, filepath.Join(sc.mount, "planted")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(sc.mount, "planted-rel")); err != nil {
		t.Fatal(err)
	}
	return sc
}

// untouched checks that nothing outside the mount changed: T holds only m
// and outside, outside only the secret, with its text.
func (sc mountScene) untouched(t *testing.T) {
	t.Helper()
	for dir, want := range map[string][]string{sc.top: {"m", "outside"}, sc.outside: {"secret"}} {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, want) {
			t.Errorf("the guest changed %s outside its mount: it holds %v, want %v", dir, names, want)
		}
	}
	b, err := os.ReadFile(sc.secret)
	if err != nil || string(b) != secretText {
		t.Errorf("the secret outside the mount is now %q (%v), want %q", b, err, secretText)
	}
	if fi, err := os.Stat(sc.secret); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink != 1 {
			t.Errorf("the secret outside the mount has %d hard links, want 1", st.Nlink)
		}
	}
}

// The steps of testdata/hostile/mount-escape.wat, in its order.
var escapeSteps = []string{
	"symlink esc -> ..", "read esc/outside/secret", "write esc/outside/secret", "create esc/outside/created",
	"symlink esc2 -> ../../../../../../../../../../..", "read esc2/etc/hostname",
	"read planted/secret", "write planted/secret", "read planted-rel/secret",
	"read ../outside/secret", "read sub/../../outside/secret", "read planted/../outside/secret",
	"link stolen to planted/secret", "read stolen", "link plantedcopy to planted", "read plantedcopy/secret",
	"rename planted/secret -> moved-in", "create inside", "rename inside -> planted/moved-out",
	"rename inside -> esc/outside/moved-out", "read inside", "symlink down -> sub/inner", "read down",
}

// escape runs hostile-mount-escape's command on sc's mount and returns
// each step's WASI errno and the bytes its reads got.
func escape(t *testing.T, sc mountScene, readOnly bool) (*Plugin, map[string]uint32, string) {
	t.Helper()
	p := load(t, "hostile-mount-escape", PluginConfig{PoolSize: 1, Grants: Grants{
		Mounts: []Mount{{HostDir: sc.mount, GuestDir: "/data", ReadOnly: readOnly}},
	}})
	resp := mustCall(t, p, "escape", "")
	n := 4 * len(escapeSteps)
	if resp.AppError || len(resp.Payload) < n {
		t.Fatalf("escape: %+v; want a payload of at least %d bytes", resp, n)
	}
	errnos := map[string]uint32{}
	for i, s := range escapeSteps {
		errnos[s] = binary.LittleEndian.Uint32(resp.Payload[4*i:])
	}
	t.Logf("steps (WASI errno, 0: done): %v; read: %q", errnos, resp.Payload[n:])
	return p, errnos, string(resp.Payload[n:])
}

// escapes are the steps that would reach outside the mount.
var escapes = []string{
	"symlink esc -> ..", "read esc/outside/secret", "write esc/outside/secret", "create esc/outside/created",
	"symlink esc2 -> ../../../../../../../../../../..", "read esc2/etc/hostname",
	"read planted/secret", "write planted/secret", "read planted-rel/secret",
	"read ../outside/secret", "read sub/../../outside/secret", "read planted/../outside/secret",
	"link stolen to planted/secret", "read stolen", "read plantedcopy/secret",
	"rename planted/secret -> moved-in", "rename inside -> planted/moved-out", "rename inside -> esc/outside/moved-out",
}

// A guest with a writable mount cannot read or write a byte outside it by
// any symlink (its own or one planted), "..", hard link or rename, and
// still works inside it.
func TestMountCannotBeLeftWritable(t *testing.T) {
	sc := newMountScene(t)
	p, errnos, read := escape(t, sc, false)
	for _, s := range escapes {
		if errnos[s] == 0 {
			t.Errorf("%s: done; want a refusal", s)
		}
	}
	for _, s := range []string{"symlink esc -> ..", "symlink esc2 -> ../../../../../../../../../../.."} {
		if errnos[s] != wasiEPERM {
			t.Errorf("%s: errno %d, want EPERM (%d): a guest's links must point down", s, errnos[s], wasiEPERM)
		}
	}
	for _, s := range []string{"link plantedcopy to planted", "create inside", "read inside", "symlink down -> sub/inner", "read down"} {
		if errnos[s] != 0 {
			t.Errorf("%s inside the mount: errno %d, want done", s, errnos[s])
		}
	}
	if strings.Contains(read, secretText) {
		t.Errorf("the guest read the secret outside its mount: %q", read)
	}
	if read != "PWNEDinner" {
		t.Errorf("the guest's reads inside its mount got %q, want PWNEDinner", read)
	}
	sc.untouched(t)
	if b, err := os.ReadFile(filepath.Join(sc.mount, "inside")); err != nil || string(b) != "PWNED" {
		t.Errorf("m/inside: %q, %v; want PWNED", b, err)
	}
	if dst, err := os.Readlink(filepath.Join(sc.mount, "down")); err != nil || dst != "sub/inner" {
		t.Errorf("m/down: %q, %v; want a link to sub/inner", dst, err)
	}
	for _, name := range []string{"esc", "esc2", "stolen", "moved-in"} {
		if _, err := os.Lstat(filepath.Join(sc.mount, name)); err == nil {
			t.Errorf("m/%s exists; the guest made it leaving its mount", name)
		}
	}
	if resp := mustCall(t, load(t, "wat-echo", PluginConfig{}), "wat-echo", "ping"); string(resp.Payload) != "ping" {
		t.Errorf("wat-echo after the escapes: %q", resp.Payload)
	}
	if n := p.Stats().MountRefusals; n == 0 {
		t.Error("Stats.MountRefusals is 0 after the escapes")
	}
	for _, want := range []string{`msg="plugin refused: a mount cannot be left" plugin=hostile-mount-escape mount=/data op=symlink path="esc -> .."`,
		`reason="a symlink's target must be relative with no '..'" refusals=1`} {
		if !logBuf.Contains(want) {
			t.Errorf("the log does not say %s", want)
		}
	}
}

// A read-only mount is not left through the links planted in it, and
// refuses every write.
func TestMountCannotBeLeftReadOnly(t *testing.T) {
	sc := newMountScene(t)
	_, errnos, read := escape(t, sc, true)
	for _, s := range escapes {
		if errnos[s] == 0 {
			t.Errorf("%s: done; want a refusal", s)
		}
	}
	for _, s := range []string{"symlink esc -> ..", "create inside", "link plantedcopy to planted", "symlink down -> sub/inner"} {
		if errnos[s] != wasiEROFS {
			t.Errorf("%s in a read-only mount: errno %d, want EROFS (%d)", s, errnos[s], wasiEROFS)
		}
	}
	if strings.Contains(read, secretText) {
		t.Errorf("the guest read the secret outside its mount: %q", read)
	}
	sc.untouched(t)
	es, err := os.ReadDir(sc.mount)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 {
		t.Errorf("the guest changed its read-only mount: it holds %d entries, want 3 (planted, planted-rel, sub)", len(es))
	}
}

// probeFS runs the probe plugin's probe-fs call and returns its answer, or
// "error: " and the guest's error.
func probeFS(t *testing.T, p *Plugin, call string) string {
	t.Helper()
	resp := mustCall(t, p, "probe-fs", call)
	if resp.AppError {
		return "error: " + string(resp.Payload)
	}
	return string(resp.Payload)
}

// A Go guest (os package calls through the SDK's WASI) cannot leave its
// mount either: not with the symlink to the host's root, not
// through a planted link, a hard link or a rename.
func TestMountGoGuestCannotLeave(t *testing.T) {
	sc := newMountScene(t)
	p := load(t, "probe", PluginConfig{PoolSize: 1, Grants: Grants{Mounts: []Mount{{HostDir: sc.mount, GuestDir: "/data"}}}})
	up := strings.Repeat("../", strings.Count(sc.mount, "/")) // from the mount to the host's root
	tries := []string{
		"symlink " + up + " /data/esc",
		"read /data/esc" + sc.secret,
		"write /data/esc" + filepath.Join(sc.outside, "created") + " PWNED",
		"symlink ../../.. /data/esc3",
		"read /data/esc3/etc/hostname",
		"read /data/planted/secret",
		"read /data/planted-rel/secret",
		"write /data/planted/secret PWNED",
		"read /data/../outside/secret",
		"link /data/planted/secret /data/stolen",
		"rename /data/planted/secret /data/moved-in",
	}
	for _, call := range tries {
		got := probeFS(t, p, call)
		if !strings.HasPrefix(got, "error: ") || strings.Contains(got, secretText) {
			t.Errorf("%s: %q; want an error", call, got)
		}
	}
	if got := probeFS(t, p, "write /data/inside x"); got != "ok" {
		t.Fatalf("write inside: %q", got)
	}
	if got := probeFS(t, p, "rename /data/inside /data/planted/moved-out"); !strings.HasPrefix(got, "error: ") {
		t.Errorf("rename out through planted: %q; want an error", got)
	}
	sc.untouched(t)
}

// A Go guest still reads, writes, appends, lists, renames, links, stats
// and removes files inside its mount, and follows links that point down.
func TestMountGoGuestWorksInside(t *testing.T) {
	sc := newMountScene(t)
	p := load(t, "probe", PluginConfig{PoolSize: 1, Grants: Grants{Mounts: []Mount{{HostDir: sc.mount, GuestDir: "/data"}}}})
	steps := []struct{ call, want string }{
		{"mkdir /data/d", "ok"},
		{"write /data/d/a hello", "ok"},
		{"append /data/d/a , world", "ok"},
		{"read /data/d/a", "hello, world"},
		{"stat /data/d/a", "12 -rw"}, // the mode's group and other bits are the umask's
		{"rename /data/d/a /data/d/b", "ok"},
		{"link /data/d/b /data/d/c", "ok"},
		{"symlink b /data/d/l", "ok"},
		{"readlink /data/d/l", "b"},
		{"read /data/d/l", "hello, world"},
		{"read /data/sub/../d/c", "hello, world"},
		{"list /data/d", "b,c,l"},
		{"remove /data/d/c", "ok"},
		{"list /data/d", "b,l"},
		{"read /data/sub/inner", "inner"},
		{"symlink ../d/b /data/sub/up", "error: "},
	}
	for _, s := range steps {
		prefix := s.want == "error: " || strings.HasPrefix(s.call, "stat ")
		if got := probeFS(t, p, s.call); !strings.HasPrefix(got, s.want) || (!prefix && got != s.want) {
			t.Errorf("%s: %q, want %q", s.call, got, s.want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(sc.mount, "d", "b")); err != nil || string(b) != "hello, world" {
		t.Errorf("m/d/b on the host: %q, %v", b, err)
	}
	sc.untouched(t)

	ro := load(t, "probe", PluginConfig{PoolSize: 1, Grants: Grants{Mounts: []Mount{{HostDir: sc.mount, GuestDir: "/data", ReadOnly: true}}}})
	if got := probeFS(t, ro, "read /data/d/b"); got != "hello, world" {
		t.Errorf("read in a read-only mount: %q", got)
	}
	if got := probeFS(t, ro, "list /data/d"); got != "b,l" {
		t.Errorf("list in a read-only mount: %q", got)
	}
	for _, call := range []string{"write /data/d/b x", "append /data/d/b x", "mkdir /data/e", "remove /data/d/b", "rename /data/d/b /data/d/z", "symlink b /data/d/m"} {
		if got := probeFS(t, ro, call); !strings.HasPrefix(got, "error: ") {
			t.Errorf("%s in a read-only mount: %q; want an error", call, got)
		}
	}
}

// wasiENOTSUP is the WASI errno of an open of what a mount does not serve.
const wasiENOTSUP = 58

// A mount serves regular files and folders only: an open of a FIFO, which
// would block in the kernel until a writer came, where no deadline or
// cancel reaches it (holding the instance and its thread), fails at once
// with ENOTSUP, and a regular file beside it opens as before. Before, the
// guest's path_open waited for a writer: the test gives the call 10 s,
// then opens the FIFO for writing itself so that the call can end.
func TestMountRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("regular"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := load(t, "hostile-mount-fifo", PluginConfig{PoolSize: 1, Grants: Grants{
		Mounts: []Mount{{HostDir: dir, GuestDir: "/data", ReadOnly: true}}}})
	type result struct {
		payload []byte
		err     error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := call(t, p, ctx, "open", "")
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{payload: resp.Payload}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(15 * time.Second):
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // lets the guest's open return
		if err == nil {
			_ = w.Close()
		}
		<-done
		t.Fatal("the guest's open of a FIFO in its mount blocked 5 s past the call's deadline")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.payload) < 8 {
		t.Fatalf("payload %q: want two errnos", r.payload)
	}
	fifoErr, fileErr := binary.LittleEndian.Uint32(r.payload), binary.LittleEndian.Uint32(r.payload[4:])
	if fifoErr != wasiENOTSUP {
		t.Errorf("opening the FIFO: errno %d, want ENOTSUP (%d)", fifoErr, wasiENOTSUP)
	}
	if fileErr != 0 || string(r.payload[8:]) != "regular" {
		t.Errorf("reading the regular file beside it: errno %d, read %q; want 0 and %q", fileErr, r.payload[8:], "regular")
	}
}
