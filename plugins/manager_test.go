package plugins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

func TestLoadAll(t *testing.T) {
	dir := t.TempDir()
	echo, watEcho := readPlugin(t, "echo"), readPlugin(t, "wat-echo")
	testkit.Install(t, dir, "echo.wasm", echo)
	testkit.Install(t, dir, "wat-echo.wasm", watEcho)
	for file, content := range map[string]string{
		"notes.txt": "not a plugin", ".hidden.wasm": "garbage", "x.wasm.tmp": "garbage", "x.wasm~": "garbage",
	} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, _ := newManager(t, dir, 0)
	changes := onChanges(m)

	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatalf("LoadAll: %v", errs)
	}
	if got, want := served(m), []string{"echo:echo", "wat-echo:wat-echo"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Commands() = %v, want %v", got, want)
	}
	if changes.get() != 1 {
		t.Errorf("OnChange called %d times by LoadAll, want 1", changes.get())
	}
	mustEcho(t, m, "echo")
	mustEcho(t, m, "wat-echo")
	if _, ok := m.Lookup("nope"); ok {
		t.Error("Lookup(nope) found a plugin")
	}

	st := m.Status()
	if len(st) != 2 {
		t.Fatalf("Status lists %d plugins, want 2: %+v", len(st), st)
	}
	for i, want := range []struct {
		name   string
		digest string
	}{{"echo", digest(echo)}, {"wat-echo", digest(watEcho)}} {
		s := st[i]
		if s.Name != want.name || s.State != StateServing || s.Digest != want.digest || s.Loads != 1 || s.Reloads != 0 ||
			s.File != filepath.Join(dir, want.name+".wasm") || s.LastError != "" || s.Since.IsZero() {
			t.Errorf("Status[%d] = %+v", i, s)
		}
		if !reflect.DeepEqual(s.Commands, []string{want.name}) {
			t.Errorf("Status[%d].Commands = %v", i, s.Commands)
		}
	}
	if s, _ := status(m, "echo"); s.Calls != 1 || s.Instances < 1 {
		t.Errorf("echo: calls %d instances %d, want 1 and at least 1", s.Calls, s.Instances)
	}

	// Nothing changed: nothing reloads.
	before, _ := m.Lookup("echo")
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatalf("second LoadAll: %v", errs)
	}
	if after, _ := m.Lookup("echo"); after != before {
		t.Error("an unchanged file was loaded again")
	}
	if changes.get() != 1 {
		t.Errorf("OnChange called after a LoadAll that changed nothing")
	}

	// A file gone since is no longer served.
	if err := os.Remove(filepath.Join(dir, "echo.wasm")); err != nil {
		t.Fatal(err)
	}
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatalf("third LoadAll: %v", errs)
	}
	if _, ok := m.Lookup("echo"); ok {
		t.Error("echo is still served after its file was removed")
	}
	if changes.get() != 2 {
		t.Errorf("OnChange called %d times, want 2", changes.get())
	}
}

func TestLoadAllMissingDir(t *testing.T) {
	m, _ := newManager(t, filepath.Join(t.TempDir(), "nope"), 0)
	if errs := m.LoadAll(context.Background()); len(errs) != 1 {
		t.Fatalf("LoadAll of a missing folder: %v, want one error", errs)
	}
}

func TestLoadAllBadModule(t *testing.T) {
	dir := t.TempDir()
	testkit.Install(t, dir, "bad.wasm", []byte("\x00asm but not really"))
	testkit.Install(t, dir, "wat-echo.wasm", readPlugin(t, "wat-echo"))
	m, logs := newManager(t, dir, 0)
	errs := m.LoadAll(context.Background())
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "bad") {
		t.Fatalf("LoadAll: %v, want one error about bad", errs)
	}
	mustEcho(t, m, "wat-echo")
	s, ok := status(m, "bad")
	if !ok || s.State != StateFailed || s.LastError == "" || s.LastErrorAt.IsZero() || s.LoadFailures != 1 || s.Digest != "" {
		t.Errorf("Status(bad) = %+v", s)
	}
	if !logs.Contains("plugin load failed") {
		t.Error("the failure is not logged")
	}
	// The same bad content is not tried again unasked.
	_ = m.LoadAll(context.Background())
	if s, _ := status(m, "bad"); s.LoadFailures != 1 {
		t.Errorf("unchanged bad file loaded again: %d failures", s.LoadFailures)
	}
}

func TestCommandClash(t *testing.T) {
	dir := t.TempDir()
	watEcho := readPlugin(t, "wat-echo")
	testkit.Install(t, dir, "b.wasm", variant(watEcho, "b"))
	testkit.Install(t, dir, "a.wasm", watEcho)
	m, _ := newManager(t, dir, 0)
	changes := onChanges(m)

	errs := m.LoadAll(context.Background())
	if len(errs) != 1 {
		t.Fatalf("LoadAll: %v, want one clash", errs)
	}
	msg := errs[0].Error()
	for _, want := range []string{"plugin b", "wat-echo", "already served by plugin a"} {
		if !strings.Contains(msg, want) {
			t.Errorf("clash error %q does not say %q", msg, want)
		}
	}
	if p, _ := m.Lookup("wat-echo"); p == nil || p.Name() != "a" {
		t.Fatalf("wat-echo served by %v, want a (first by file name)", p)
	}
	if s, _ := status(m, "b"); s.State != StateFailed || !strings.Contains(s.LastError, "already served by plugin a") {
		t.Errorf("Status(b) = %+v", s)
	}

	// A plugin that takes a command already served, later: refused too.
	testkit.Install(t, dir, "c.wasm", variant(watEcho, "c"))
	if err := m.Reload(context.Background(), "c"); err == nil || !strings.Contains(err.Error(), "already served by plugin a") {
		t.Errorf("Reload(c) = %v, want a clash", err)
	}

	// Freeing the command lets the next file in order take it.
	if err := m.Remove(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "b to take wat-echo over", func() bool {
		p, ok := m.Lookup("wat-echo")
		return ok && p.Name() == "b"
	})
	mustEcho(t, m, "wat-echo")
	// c is retried too, after b (file name order), and refused again.
	testkit.WaitFor(t, "c's retry", func() bool {
		s, _ := status(m, "c")
		return s.LoadFailures == 2
	})
	if s, _ := status(m, "c"); s.State != StateFailed || !strings.Contains(s.LastError, "already served by plugin b") {
		t.Errorf("Status(c) = %+v, want failed, clashing with b", s)
	}
	if s, _ := status(m, "b"); s.State != StateServing || s.LastError != "" || s.Loads != 1 {
		t.Errorf("Status(b) = %+v", s)
	}
	// Changes close together may share one call.
	if changes.get() < 2 {
		t.Errorf("OnChange called %d times, want at least 2", changes.get())
	}
}

func TestReloadAndRemove(t *testing.T) {
	dir := t.TempDir()
	testkit.Install(t, dir, "wat-echo.wasm", readPlugin(t, "wat-echo"))
	m, logs := newManager(t, dir, 0)
	changes := onChanges(m)
	ctx := context.Background()
	if errs := m.LoadAll(ctx); len(errs) != 0 {
		t.Fatal(errs)
	}
	old, _ := m.Lookup("wat-echo")

	// Reload: a fresh version even from unchanged content, the old one
	// closes. The commands are the same: no OnChange.
	if err := m.Reload(ctx, "wat-echo"); err != nil {
		t.Fatal(err)
	}
	cur, _ := m.Lookup("wat-echo")
	if cur == old {
		t.Fatal("Reload did not swap the version")
	}
	mustEcho(t, m, "wat-echo")
	testkit.WaitFor(t, "the old version to close", func() bool {
		_, err := old.Invoke(ctx, &abi.Request{Command: "wat-echo"})
		return errors.Is(err, wasm.KindClosed)
	})
	testkit.WaitFor(t, "the old version to leave Status", func() bool {
		s, _ := status(m, "wat-echo")
		return s.Draining == 0
	})
	if s, _ := status(m, "wat-echo"); s.Reloads != 1 || s.Loads != 1 || s.State != StateServing || s.Draining != 0 {
		t.Errorf("Status after Reload = %+v", s)
	}
	if changes.get() != 1 {
		t.Errorf("OnChange called %d times, want 1 (the reload changed no command)", changes.get())
	}

	// Remove: no longer served, the file stays, the status says so.
	if err := m.Remove(ctx, "wat-echo"); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Lookup("wat-echo"); ok {
		t.Fatal("wat-echo still served after Remove")
	}
	if changes.get() != 2 {
		t.Errorf("OnChange called %d times, want 2", changes.get())
	}
	if _, err := os.Stat(filepath.Join(dir, "wat-echo.wasm")); err != nil {
		t.Errorf("Remove touched the file: %v", err)
	}
	testkit.WaitFor(t, "state removed", func() bool {
		s, _ := status(m, "wat-echo")
		return s.State == StateRemoved
	})
	if !logs.Contains("plugin removed") {
		t.Error("the removal is not logged")
	}
	// An unchanged file does not come back by itself...
	if errs := m.LoadAll(ctx); len(errs) != 0 {
		t.Fatal(errs)
	}
	if _, ok := m.Lookup("wat-echo"); ok {
		t.Error("a removed plugin came back from an unchanged file")
	}
	// ... but Reload brings it back.
	if err := m.Reload(ctx, "wat-echo"); err != nil {
		t.Fatal(err)
	}
	mustEcho(t, m, "wat-echo")
	if changes.get() != 3 {
		t.Errorf("OnChange called %d times, want 3", changes.get())
	}

	for _, bad := range []string{"", "../x", "a/b", ".hidden"} {
		if err := m.Reload(ctx, bad); err == nil {
			t.Errorf("Reload(%q) succeeded", bad)
		}
	}
	if err := m.Remove(ctx, "nope"); err == nil {
		t.Error("Remove of an unknown plugin succeeded")
	}
	if err := m.Reload(ctx, "nope"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Reload of a plugin without file = %v", err)
	}
	if _, ok := status(m, "nope"); ok {
		t.Error("a plugin without file is listed")
	}

	// Reload of a file that went away stops serving it.
	if err := os.Remove(filepath.Join(dir, "wat-echo.wasm")); err != nil {
		t.Fatal(err)
	}
	if err := m.Reload(ctx, "wat-echo"); err == nil {
		t.Error("Reload of a deleted file succeeded")
	}
	if _, ok := m.Lookup("wat-echo"); ok {
		t.Error("wat-echo still served after its file was deleted and reloaded")
	}
}

// TestReloadDuringCall: the call in flight finishes on the old version
// while new calls go to the new one; the old one closes afterwards.
func TestReloadDuringCall(t *testing.T) {
	dir := t.TempDir()
	testkit.Install(t, dir, "sleep.wasm", readPlugin(t, "sleep"))
	m, _ := newManager(t, dir, 0)
	ctx := context.Background()
	if errs := m.LoadAll(ctx); len(errs) != 0 {
		t.Fatal(errs)
	}
	old, _ := m.Lookup("sleep")
	res := make(chan error, 1)
	go func() {
		resp, err := old.Invoke(ctx, &abi.Request{Command: "sleep", Payload: []byte("1000")})
		if err == nil && string(resp.Payload) != "1000" {
			err = errors.New("wrong answer " + string(resp.Payload))
		}
		res <- err
	}()
	testkit.WaitFor(t, "the call to start", func() bool { return old.Stats().InUse == 1 })

	if err := m.Reload(ctx, "sleep"); err != nil {
		t.Fatal(err)
	}
	cur, _ := m.Lookup("sleep")
	if cur == old {
		t.Fatal("no swap")
	}
	if resp, err := call(m, "sleep", "0"); err != nil || string(resp.Payload) != "0" {
		t.Fatalf("call on the new version: %v %v", resp, err)
	}
	var oldErr error
	select {
	case oldErr = <-res: // on a loaded machine the second can pass first
		t.Logf("the old call ended before we looked: %v", oldErr)
	default:
		if s, _ := status(m, "sleep"); s.Draining != 1 || s.InUse != 0 || s.State != StateServing {
			t.Errorf("during the old call: Status = %+v, want serving, 1 draining, none in use on the new version", s)
		}
		select {
		case oldErr = <-res:
		case <-time.After(time.Minute): // hang guard
			t.Fatal("the call in flight did not end")
		}
	}
	if oldErr != nil {
		t.Fatalf("the call in flight failed: %v", oldErr)
	}
	testkit.WaitFor(t, "the old version to close", func() bool {
		s, _ := status(m, "sleep")
		return s.Draining == 0
	})
	if s, _ := status(m, "sleep"); s.Calls != 2 || s.Failures != 0 {
		t.Errorf("counters over both versions: %+v, want 2 calls, 0 failures", s)
	}
}

func TestCloseDrains(t *testing.T) {
	dir := t.TempDir()
	testkit.Install(t, dir, "sleep.wasm", readPlugin(t, "sleep"))
	m, _ := newManager(t, dir, 0)
	ctx := context.Background()
	if errs := m.LoadAll(ctx); len(errs) != 0 {
		t.Fatal(errs)
	}
	p, _ := m.Lookup("sleep")
	res := make(chan error, 1)
	go func() {
		_, err := p.Invoke(ctx, &abi.Request{Command: "sleep", Payload: []byte("500")})
		res <- err
	}()
	testkit.WaitFor(t, "the call to start", func() bool { return p.Stats().InUse == 1 })
	closeCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	start := time.Now()
	if err := m.Close(closeCtx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-res; err != nil {
		t.Fatalf("the call in flight failed: %v", err)
	}
	t.Logf("Close took %v", time.Since(start))
	if _, ok := m.Lookup("sleep"); ok {
		t.Error("served after Close")
	}
	if _, err := p.Invoke(ctx, &abi.Request{Command: "sleep", Payload: []byte("0")}); !errors.Is(err, wasm.KindClosed) {
		t.Errorf("Invoke after Close = %v, want KindClosed", err)
	}
	if err := m.Reload(ctx, "sleep"); !errors.Is(err, ErrClosed) {
		t.Errorf("Reload after Close = %v, want ErrClosed", err)
	}
	if err := m.Watch(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Watch after Close = %v, want ErrClosed", err)
	}
	if err := m.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestHammerReloads: callers that look up again on KindClosed, as the host
// does, lose no call while the plugin is reloaded again and again.
func TestHammerReloads(t *testing.T) {
	dir := t.TempDir()
	watEcho := readPlugin(t, "wat-echo")
	testkit.Install(t, dir, "wat-echo.wasm", watEcho)
	m, _ := newManager(t, dir, 0)
	ctx := context.Background()
	if errs := m.LoadAll(ctx); len(errs) != 0 {
		t.Fatal(errs)
	}
	var calls, retries atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := call(m, "wat-echo", "x")
				for try := 0; try < 3 && errors.Is(err, wasm.KindClosed); try++ {
					retries.Add(1)
					resp, err = call(m, "wat-echo", "x")
				}
				if err != nil || string(resp.Payload) != "x" {
					errs <- err
					return
				}
				calls.Add(1)
			}
		}()
	}
	for i := range 10 {
		if i%2 == 0 {
			testkit.Install(t, dir, "wat-echo.wasm", variant(watEcho, string(rune('a'+i))))
		}
		if err := m.Reload(ctx, "wat-echo"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a call failed: %v", err)
	}
	t.Logf("%d calls, %d retried after KindClosed", calls.Load(), retries.Load())
	if s, _ := status(m, "wat-echo"); s.Reloads != 10 {
		t.Errorf("Reloads = %d, want 10", s.Reloads)
	}
}

// Origin names the plugin serving a command and its module's digest, the
// same as Status, and follows a reload to the new digest.
func TestOrigin(t *testing.T) {
	dir := t.TempDir()
	echo := readPlugin(t, "echo")
	testkit.Install(t, dir, "echo.wasm", echo)
	m, _ := newManager(t, dir, 0)
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatalf("LoadAll: %v", errs)
	}
	digest := func() string {
		for _, st := range m.Status() {
			if st.Name == "echo" {
				return st.Digest
			}
		}
		return ""
	}
	if p, d, ok := m.Origin("echo"); !ok || p != "echo" || d == "" || d != digest() {
		t.Fatalf("Origin = %q %q %v, want echo and Status's digest %q", p, d, ok, digest())
	}
	if _, _, ok := m.Origin("nosuch"); ok {
		t.Fatal("Origin of a command nobody serves")
	}
	before := digest()
	testkit.Install(t, dir, "echo.wasm", variant(echo, "v2"))
	if err := m.Reload(context.Background(), "echo"); err != nil {
		t.Fatal(err)
	}
	if _, d, _ := m.Origin("echo"); d == before || d != digest() {
		t.Fatalf("after reload Origin digest %q, want the new %q", d, digest())
	}
}
