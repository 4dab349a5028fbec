package plugins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// TestWatchNewFile: a file copied in is served soon after; the temporary
// file of the install and other names are ignored.
func TestWatchNewFile(t *testing.T) {
	dir := t.TempDir()
	m, logs := newManager(t, dir, 100*time.Millisecond)
	changes := onChanges(m)
	watch(t, m)
	time.Sleep(50 * time.Millisecond) // let Watch start: its first scan finds an empty folder

	for file, content := range map[string]string{"notes.txt": "x", ".x.wasm": "x", "y.wasm.tmp": "x"} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	testkit.Install(t, dir, "wat-echo.wasm", readPlugin(t, "wat-echo"))
	testkit.WaitFor(t, "wat-echo to be served", func() bool { // hang guard
		_, ok := m.Lookup("wat-echo")
		return ok
	})
	t.Logf("served %v after the file was installed (debounce 100ms)", time.Since(start))
	mustEcho(t, m, "wat-echo")
	testkit.WaitFor(t, "OnChange", func() bool { return changes.get() == 1 })

	time.Sleep(300 * time.Millisecond) // the other files' debounce has passed
	if st := m.Status(); len(st) != 1 || st[0].Name != "wat-echo" {
		t.Errorf("Status = %+v, want wat-echo alone", st)
	}
	if logs.Contains("load failed") {
		t.Errorf("a load failed:\n%s", logs)
	}
}

// TestWatchSwap: replacing a file swaps in the new module; a new build
// with the same commands swaps silently (no OnChange).
func TestWatchSwap(t *testing.T) {
	dir := t.TempDir()
	echo, watEcho := readPlugin(t, "echo"), readPlugin(t, "wat-echo")
	testkit.Install(t, dir, "a.wasm", echo)
	m, _ := newManager(t, dir, 100*time.Millisecond)
	changes := onChanges(m)
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatal(errs)
	}
	watch(t, m)
	mustEcho(t, m, "echo")

	// Another module under the same file name.
	testkit.Install(t, dir, "a.wasm", watEcho)
	testkit.WaitFor(t, "a to serve wat-echo", func() bool {
		return reflect.DeepEqual(served(m), []string{"a:wat-echo"})
	})
	if _, ok := m.Lookup("echo"); ok {
		t.Error("echo still served")
	}
	mustEcho(t, m, "wat-echo")
	s, _ := status(m, "a")
	if s.Digest != digest(watEcho) || s.Reloads != 1 || s.Loads != 1 || !reflect.DeepEqual(s.Commands, []string{"wat-echo"}) {
		t.Errorf("Status(a) = %+v", s)
	}
	testkit.WaitFor(t, "OnChange", func() bool { return changes.get() == 2 })

	// A new build serving the same command.
	before, _ := m.Lookup("wat-echo")
	v2 := variant(watEcho, "v2")
	testkit.Install(t, dir, "a.wasm", v2)
	testkit.WaitFor(t, "the v2 digest", func() bool {
		s, _ := status(m, "a")
		return s.Digest == digest(v2)
	})
	if after, _ := m.Lookup("wat-echo"); after == before {
		t.Error("Lookup still returns the old version")
	}
	mustEcho(t, m, "wat-echo")
	if s, _ := status(m, "a"); s.Reloads != 2 {
		t.Errorf("Reloads = %d, want 2", s.Reloads)
	}
	if changes.get() != 2 {
		t.Errorf("OnChange called %d times, want 2: the new build changed no command", changes.get())
	}

	// Touching the file (same content) does nothing.
	cur, _ := m.Lookup("wat-echo")
	testkit.Install(t, dir, "a.wasm", v2)
	time.Sleep(400 * time.Millisecond)
	if again, _ := m.Lookup("wat-echo"); again != cur {
		t.Error("the same content was loaded again")
	}
}

// TestWatchHalfWritten: a file written in two parts within the debounce
// is loaded once, whole.
func TestWatchHalfWritten(t *testing.T) {
	dir := t.TempDir()
	m, logs := newManager(t, dir, 200*time.Millisecond)
	watch(t, m)
	time.Sleep(50 * time.Millisecond)

	echo := readPlugin(t, "echo")
	f, err := os.Create(filepath.Join(dir, "half.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(echo[:len(echo)/2]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := f.Write(echo[len(echo)/2:]); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "echo to be served", func() bool {
		_, ok := m.Lookup("echo")
		return ok
	})
	mustEcho(t, m, "echo")
	s, _ := status(m, "half")
	if s.LoadFailures != 0 || s.LastError != "" || s.Loads != 1 || s.Digest != digest(echo) {
		t.Errorf("Status(half) = %+v", s)
	}
	if logs.Contains("load failed") {
		t.Errorf("half a file was loaded:\n%s", logs)
	}
}

// TestWatchCorruptFile: a bad file over a serving plugin leaves the old
// version serving, with the error in Status and the log; a good file then
// takes over and clears it.
func TestWatchCorruptFile(t *testing.T) {
	dir := t.TempDir()
	watEcho := readPlugin(t, "wat-echo")
	testkit.Install(t, dir, "wat-echo.wasm", watEcho)
	m, logs := newManager(t, dir, 100*time.Millisecond)
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatal(errs)
	}
	watch(t, m)
	serving, _ := m.Lookup("wat-echo")

	testkit.Install(t, dir, "wat-echo.wasm", []byte("\x00asm\x01\x00\x00\x00 this is not a module"))
	testkit.WaitFor(t, "the failure in Status", func() bool {
		s, _ := status(m, "wat-echo")
		return s.LastError != ""
	})
	s, _ := status(m, "wat-echo")
	if s.State != StateServing || s.Digest != digest(watEcho) || s.LoadFailures != 1 || s.LastErrorAt.IsZero() {
		t.Errorf("Status = %+v, want the old version serving", s)
	}
	if p, _ := m.Lookup("wat-echo"); p != serving {
		t.Error("the version serving changed")
	}
	mustEcho(t, m, "wat-echo")
	if !logs.Contains("old version keeps serving") {
		t.Errorf("the failure is not logged:\n%s", logs)
	}

	v2 := variant(watEcho, "fixed")
	testkit.Install(t, dir, "wat-echo.wasm", v2)
	testkit.WaitFor(t, "the fixed file to serve", func() bool {
		s, _ := status(m, "wat-echo")
		return s.Digest == digest(v2)
	})
	if s, _ := status(m, "wat-echo"); s.LastError != "" || s.State != StateServing || s.Reloads != 1 {
		t.Errorf("Status after the fix = %+v", s)
	}
	mustEcho(t, m, "wat-echo")
}

// TestWatchRemoveDuringCall: deleting the file stops serving its commands,
// while the call in flight finishes on the version it started on.
func TestWatchRemoveDuringCall(t *testing.T) {
	dir := t.TempDir()
	testkit.Install(t, dir, "sleep.wasm", readPlugin(t, "sleep"))
	m, _ := newManager(t, dir, 100*time.Millisecond)
	changes := onChanges(m)
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatal(errs)
	}
	watch(t, m)

	p, ok := m.Lookup("sleep")
	if !ok {
		t.Fatal("sleep not served")
	}
	type result struct {
		resp *abi.Response
		err  error
	}
	res := make(chan result, 1)
	go func() {
		resp, err := p.Invoke(context.Background(), &abi.Request{Command: "sleep", Payload: []byte("1000")})
		res <- result{resp, err}
	}()
	testkit.WaitFor(t, "the call to start", func() bool { return p.Stats().InUse == 1 })

	if err := os.Remove(filepath.Join(dir, "sleep.wasm")); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "sleep to stop being served", func() bool {
		_, ok := m.Lookup("sleep")
		return !ok
	})
	if len(m.Commands()) != 0 {
		t.Errorf("Commands() = %v, want none", m.Commands())
	}
	select {
	case r := <-res:
		res <- r
		t.Log("the call ended before the removal was seen")
	default:
		if s, ok := status(m, "sleep"); !ok || s.State != StateDraining || s.Draining != 1 || len(s.Commands) != 0 {
			t.Errorf("during the call: Status = %+v, want draining, no command", s)
		}
	}
	r := <-res
	if r.err != nil || string(r.resp.Payload) != "1000" {
		t.Fatalf("the call in flight: %v, %v; want it to finish", r.resp, r.err)
	}
	testkit.WaitFor(t, "the plugin to leave Status", func() bool { return len(m.Status()) == 0 })
	if changes.get() != 2 {
		t.Errorf("OnChange called %d times, want 2 (load, removal)", changes.get())
	}
	if _, err := p.Invoke(context.Background(), &abi.Request{Command: "sleep", Payload: []byte("0")}); err == nil {
		t.Error("the removed version still takes calls")
	}

	// The file coming back is served again.
	testkit.Install(t, dir, "sleep.wasm", readPlugin(t, "sleep"))
	testkit.WaitFor(t, "sleep to be served again", func() bool {
		_, ok := m.Lookup("sleep")
		return ok
	})
}

func TestWatchTwice(t *testing.T) {
	m, _ := newManager(t, t.TempDir(), 0)
	watch(t, m)
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := m.Watch(ctx); err == nil {
		t.Error("a second Watch ran")
	}
}

func TestWatchMissingDir(t *testing.T) {
	m, _ := newManager(t, filepath.Join(t.TempDir(), "nope"), 0)
	if err := m.Watch(context.Background()); err == nil {
		t.Error("Watch of a missing folder succeeded")
	}
}

// TestCloseStopsWatch: Close ends a running Watch.
func TestCloseStopsWatch(t *testing.T) {
	dir := t.TempDir()
	testkit.Install(t, dir, "wat-echo.wasm", readPlugin(t, "wat-echo"))
	m, _ := newManager(t, dir, 0)
	done := make(chan error, 1)
	go func() { done <- m.Watch(context.Background()) }()
	testkit.WaitFor(t, "the first scan", func() bool {
		_, ok := m.Lookup("wat-echo")
		return ok
	})
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("Watch = %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Watch still running after Close")
	}
}

// hostileDir holds the hand-written WAT test modules (the Makefile builds
// them from testdata/hostile).
const hostileDir = "../testdata/plugins-hostile"

// TestWatchDirRemovedAndBack: the plugins folder removed (rm -rf),
// renamed away, or gone with its parent: what was served stays served and
// WatchErr says hot reload is off; once a folder is back at the path, Watch
// follows it again and syncs with it: plugins not in it stop being served,
// a module dropped in is served, a module deleted from it stops being
// served.
func TestWatchDirRemovedAndBack(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	deep, err := os.ReadFile(filepath.Join(hostileDir, "hostile-deep.wasm"))
	if err != nil {
		t.Fatalf("%v (run `make testdata/plugins-hostile/hostile-deep.wasm`)", err)
	}
	for _, tc := range []struct {
		name string
		// lose takes the folder dir away; back puts a folder at dir again,
		// holding what it held (renamed) or nothing.
		lose, back func(t *testing.T, dir string)
		kept       bool // the folder back holds wat-echo.wasm
	}{
		{"removed", removeAll, mkdir, false},
		{"renamed", func(t *testing.T, dir string) { rename(t, dir, dir+".old") },
			func(t *testing.T, dir string) { rename(t, dir+".old", dir) }, true},
		// The parent goes too: Watch looks for the folder every rewatchPoll.
		{"parent removed", func(t *testing.T, dir string) { removeAll(t, filepath.Dir(dir)) },
			func(t *testing.T, dir string) { mkdir(t, filepath.Dir(dir)); mkdir(t, dir) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "parent", "plugins")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			testkit.Install(t, dir, "wat-echo.wasm", readPlugin(t, "wat-echo"))
			m, logs := newManager(t, dir, 50*time.Millisecond)
			watch(t, m)
			// Watch's first scan serves wat-echo once the folder is watched.
			testkit.WaitFor(t, "wat-echo to be served", func() bool { _, ok := m.Lookup("wat-echo"); return ok })
			if err := m.WatchErr(); err != nil {
				t.Fatalf("WatchErr = %v while the folder is watched", err)
			}

			tc.lose(t, dir)
			testkit.WaitFor(t, "WatchErr to report the lost folder", func() bool { return m.WatchErr() != nil })
			if err := m.WatchErr(); !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "hot reload is off") {
				t.Errorf("WatchErr = %v; want it to name %s and say hot reload is off", err, dir)
			}
			mustEcho(t, m, "wat-echo") // what was loaded keeps serving

			tc.back(t, dir)
			testkit.WaitFor(t, "the folder to be watched again", func() bool { return m.WatchErr() == nil })
			if !tc.kept {
				testkit.WaitFor(t, "wat-echo, not in the folder back, to stop being served", func() bool {
					_, ok := m.Lookup("wat-echo")
					return !ok
				})
			}
			testkit.Install(t, dir, "hostile-deep.wasm", deep)
			testkit.WaitFor(t, "a module dropped in the folder back to be served", func() bool { _, ok := m.Lookup("deep"); return ok })
			if err := os.Remove(filepath.Join(dir, "hostile-deep.wasm")); err != nil {
				t.Fatal(err)
			}
			testkit.WaitFor(t, "a module deleted from the folder back to stop being served", func() bool { _, ok := m.Lookup("deep"); return !ok })
			if _, ok := m.Lookup("wat-echo"); ok != tc.kept {
				t.Errorf("wat-echo served: %v, want %v", ok, tc.kept)
			}
			if !logs.Contains("plugins folder gone") || !logs.Contains("plugins folder back") {
				t.Errorf("the log does not say the folder went and came back:\n%s", logs)
			}
		})
	}
}

func removeAll(t *testing.T, dir string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func rename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}
