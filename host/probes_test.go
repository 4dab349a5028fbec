package host_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// holdLog is a log writer that holds the plugin hostile-slow-load's load:
// the guest logs "slow-load: describing" from cmdhost_describe, and the
// write of that line blocks until release is closed (held is closed
// then). It also keeps the metrics URL the server logs.
type holdLog struct {
	held, release chan struct{}
	once          sync.Once
	mu            sync.Mutex
	metrics       string // the URL of "metrics listening"; "" before
	log           bytes.Buffer
}

var metricsURL = regexp.MustCompile(`msg="metrics listening" url=(\S+)`)

func newHoldLog() *holdLog {
	return &holdLog{held: make(chan struct{}), release: make(chan struct{})}
}

func (h *holdLog) Write(p []byte) (int, error) {
	h.mu.Lock()
	h.log.Write(p)
	if m := metricsURL.FindSubmatch(p); m != nil {
		h.metrics = string(m[1])
	}
	h.mu.Unlock()
	if bytes.Contains(p, []byte("slow-load: describing")) {
		h.once.Do(func() { close(h.held) })
		<-h.release
	}
	return len(p), nil
}

func (h *holdLog) metricsBase() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.TrimSuffix(h.metrics, "/metrics")
}

func (h *holdLog) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.log.String()
}

// slowLoadDir returns a plugins folder holding hostile-slow-load.wasm.
func slowLoadDir(t *testing.T) string {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	bin, err := os.ReadFile(filepath.Join(pluginDir, hostileDir, "hostile-slow-load.wasm"))
	if err != nil {
		t.Fatalf("%v (run `make testdata/plugins-hostile/hostile-slow-load.wasm`)", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hostile-slow-load.wasm"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// get returns the status and body of url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second} // hang guard
	r, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(b)
}

// TestProbesWhilePluginsLoad: the metrics listener and the probes are up
// before the plugins load: while a plugin's load is held, /healthz is 200
// and /readyz 503 saying what is still loading; once the host serves,
// /readyz is 200.
func TestProbesWhilePluginsLoad(t *testing.T) {
	hold := newHoldLog()
	releaseOnce := sync.OnceFunc(func() { close(hold.release) })
	t.Cleanup(releaseOnce)
	serving := make(chan struct{})
	srv, err := host.New(host.Config{
		PluginsDir: slowLoadDir(t),
		ExecutorID: "probes-test",
		CacheDir:   testkit.CacheDir(),
		Logger:     slog.New(slog.NewTextHandler(hold, nil)),
		OnServing:  func() { close(serving) },
		Embedded:   host.EmbeddedConfig{Listen: "127.0.0.1:0"},
		Limits:     host.LimitsConfig{MaxExpiry: time.Hour, Drain: 10 * time.Second},
		Observe:    host.ObserveConfig{MetricsAddr: "127.0.0.1:0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx) }()
	select {
	case <-hold.held:
	case err := <-ran:
		t.Fatalf("Run returned before loading the plugin: %v\n%s", err, hold)
	case <-time.After(60 * time.Second): // hang guard
		t.Fatalf("the plugin's load did not start:\n%s", hold)
	}

	// The plugin's load is held: the host is starting.
	base := hold.metricsBase()
	if base == "" {
		t.Fatalf("the metrics listener is not up while a plugin loads:\n%s", hold)
	}
	if code, body := get(t, base+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz while loading: %d %q, want 200 ok", code, body)
	}
	if code, body := get(t, base+"/metrics"); code != http.StatusOK || !strings.Contains(body, "cmdhost_") {
		t.Errorf("/metrics while loading: %d %.200q", code, body)
	}
	code, body := get(t, base+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "starting: loading plugins (0 of 1 loaded, 0 failed; still loading: hostile-slow-load)") {
		t.Errorf("/readyz while loading: %d %q, want 503 naming the plugin still loading", code, body)
	}
	t.Logf("/readyz while loading: %d %s", code, strings.TrimSpace(body))

	releaseOnce()
	select {
	case <-serving:
	case err := <-ran:
		t.Fatalf("Run returned before serving: %v\n%s", err, hold)
	case <-time.After(60 * time.Second): // hang guard
		t.Fatalf("the server did not start serving:\n%s", hold)
	}
	// Serving: connected and subscribed (Run's Start returned).
	code, body = get(t, base+"/readyz")
	if code != http.StatusOK || body != "ready\n" {
		t.Errorf("/readyz once serving: %d %q, want 200 ready", code, body)
	}
	stop()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// TestMetricsPortTakenFailsAtOnce: a metrics address in use fails Run
// before any plugin loads (the plugin's load is held for good here), with
// an error naming the address and --metrics.
func TestMetricsPortTakenFailsAtOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	hold := newHoldLog()
	t.Cleanup(func() { close(hold.release) })
	srv, err := host.New(host.Config{
		PluginsDir: slowLoadDir(t),
		ExecutorID: "probes-busy",
		CacheDir:   testkit.CacheDir(),
		Logger:     slog.New(slog.NewTextHandler(hold, nil)),
		Embedded:   host.EmbeddedConfig{Listen: "127.0.0.1:0"},
		Limits:     host.LimitsConfig{MaxExpiry: time.Hour, Drain: 10 * time.Second},
		Observe:    host.ObserveConfig{MetricsAddr: l.Addr().String()},
	})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(context.Background()) }()
	select {
	case err = <-ran:
	case <-hold.held:
		t.Fatalf("a plugin began to load before the metrics port was found in use:\n%s", hold)
	case <-time.After(60 * time.Second): // hang guard
		t.Fatal("Run neither failed nor loaded")
	}
	if err == nil || !strings.Contains(err.Error(), l.Addr().String()) || !strings.Contains(err.Error(), "--metrics") ||
		!errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("Run = %v; want address in use, naming %s and --metrics", err, l.Addr())
	}
}

// waitLog is a log writer whose lines a test can wait for.
type waitLog struct {
	mu      sync.Mutex
	log     bytes.Buffer
	changed chan struct{} // closed and replaced at every write
}

func newWaitLog() *waitLog { return &waitLog{changed: make(chan struct{})} }

func (w *waitLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log.Write(p)
	close(w.changed)
	w.changed = make(chan struct{})
	return len(p), nil
}

func (w *waitLog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.log.String()
}

// wait returns the first submatch of re once the log has a match.
func (w *waitLog) wait(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.After(60 * time.Second) // hang guard
	for {
		w.mu.Lock()
		m := re.FindStringSubmatch(w.log.String())
		changed := w.changed
		w.mu.Unlock()
		if m != nil {
			return m[len(m)-1]
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no log line matches %s:\n%s", re, w)
		}
	}
}

// TestReadyzReportsLostWatch: while the plugins folder is gone, hot reload
// is off and /readyz says so (503 naming the folder); once the folder is
// back and watched, /readyz is 200 again and a module dropped in it is
// served.
func TestReadyzReportsLostWatch(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	dir := filepath.Join(t.TempDir(), "plugins")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	echo, err := os.ReadFile(filepath.Join(pluginDir, "wat-echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "wat-echo.wasm"), echo, 0o644); err != nil {
		t.Fatal(err)
	}
	logs := newWaitLog()
	srv, err := host.New(host.Config{
		PluginsDir: dir,
		ExecutorID: "probes-watch",
		CacheDir:   testkit.CacheDir(),
		Logger:     slog.New(slog.NewTextHandler(logs, nil)),
		Embedded:   host.EmbeddedConfig{Listen: "127.0.0.1:0"},
		Limits:     host.LimitsConfig{MaxExpiry: time.Hour, Drain: 10 * time.Second},
		Observe:    host.ObserveConfig{MetricsAddr: "127.0.0.1:0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx) }()
	defer func() {
		stop()
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	base := strings.TrimSuffix(logs.wait(t, metricsURL), "/metrics")
	// The watcher starts once the plugins are loaded, which may be before
	// the host says it serves (it announces after): wait for both.
	logs.wait(t, regexp.MustCompile(`msg="watching the plugins folder"`))
	logs.wait(t, regexp.MustCompile(`msg=serving\b`))
	if code, body := get(t, base+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz while serving and watching: %d %q", code, body)
	}

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	logs.wait(t, regexp.MustCompile(`msg="plugins folder gone`))
	code, body := get(t, base+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, dir) || !strings.Contains(body, "hot reload is off") {
		t.Errorf("/readyz with the plugins folder gone: %d %q, want 503 naming %s, hot reload off", code, body, dir)
	}
	t.Logf("/readyz with the folder gone: %d %s", code, strings.TrimSpace(body))

	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	logs.wait(t, regexp.MustCompile(`msg="plugins folder back`))
	if code, body := get(t, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz with the folder back: %d %q, want 200", code, body)
	}
	if err := os.WriteFile(filepath.Join(dir, ".tmp"), echo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, ".tmp"), filepath.Join(dir, "again.wasm")); err != nil {
		t.Fatal(err)
	}
	logs.wait(t, regexp.MustCompile(`msg="plugin loaded" plugin=again`))
}
