package host_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// holdHandler is a log handler that holds the load of hostile-slow-load
// (its guest logs "slow-load: describing" from cmdhost_describe) until
// release is closed, without holding the other goroutines' lines (a
// writer that blocks, holdLog, blocks every line behind the text
// handler's lock). It signals soFar at the host's first "serving the
// plugins loaded so far", and keeps the metrics URL.
type holdHandler struct {
	slog.Handler
	held, release, soFar chan struct{}
	heldOnce, soFarOnce  *sync.Once
	metrics              chan string
}

func (h holdHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h holdHandler) Handle(ctx context.Context, r slog.Record) error {
	switch r.Message {
	case "slow-load: describing":
		h.heldOnce.Do(func() { close(h.held) })
		<-h.release
	case "serving the plugins loaded so far":
		h.soFarOnce.Do(func() { close(h.soFar) })
	case "metrics listening":
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "url" {
				h.metrics <- strings.TrimSuffix(a.Value.String(), "/metrics")
			}
			return true
		})
	}
	return h.Handler.Handle(ctx, r)
}

// TestServesPluginsLoadedWhileOthersLoad: a plugin is served as soon as
// it is loaded (issue 40): while another plugin's load is held, the
// first one's command answers, /readyz is 503 and says how far the
// loading is, and nothing says the host serves yet; once the load ends,
// the host serves both.
func TestServesPluginsLoadedWhileOthersLoad(t *testing.T) {
	dir := slowLoadDir(t)
	echo, err := os.ReadFile(filepath.Join(pluginDir, "wat-echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	// a-echo sorts before hostile-slow-load: LoadAll commits in file name order.
	if err := os.WriteFile(filepath.Join(dir, "a-echo.wasm"), echo, 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &testkit.LogBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("host log:\n%s", logs)
		}
	})
	h := holdHandler{Handler: slog.NewTextHandler(logs, nil), held: make(chan struct{}), release: make(chan struct{}),
		soFar: make(chan struct{}), heldOnce: &sync.Once{}, soFarOnce: &sync.Once{}, metrics: make(chan string, 1)}
	releaseOnce := sync.OnceFunc(func() { close(h.release) })
	t.Cleanup(releaseOnce)
	serving := make(chan struct{})
	srv, err := host.New(host.Config{
		PluginsDir: dir,
		ExecutorID: "early-test",
		CacheDir:   testkit.CacheDir(),
		Logger:     slog.New(h),
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
	for _, ev := range []struct {
		what string
		ch   chan struct{}
	}{{"the slow plugin's load to be held", h.held}, {"the first plugin to be served", h.soFar}} {
		select {
		case <-ev.ch:
		case err := <-ran:
			t.Fatalf("Run returned while waiting for %s: %v", ev.what, err)
		case <-time.After(60 * time.Second): // hang guard
			t.Fatalf("waited a minute for %s", ev.what)
		}
	}
	base := <-h.metrics

	inv, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: session.Config{Broker: srv.Broker()}})
	if err != nil {
		t.Fatal(err)
	}
	defer inv.Close()
	r, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/early-test/wat-echo", Payload: []byte("hi"), ContentType: "text/plain", Timeout: 10 * time.Second})
	if err != nil || r.Status != 200 || string(r.Payload) != "hi" {
		t.Fatalf("wat-echo while another plugin loads: %+v, %v", r, err)
	}
	code, body := get(t, base+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "starting: loading plugins (1 of 2 loaded, 0 failed; still loading: hostile-slow-load)") {
		t.Errorf("/readyz while a plugin loads: %d %q, want 503 counting the one loaded", code, body)
	}
	select {
	case <-serving:
		t.Fatal("OnServing was called while a plugin was still loading")
	default:
	}

	releaseOnce()
	select {
	case <-serving:
	case err := <-ran:
		t.Fatalf("Run returned before serving: %v", err)
	case <-time.After(60 * time.Second): // hang guard
		t.Fatal("the server did not start serving")
	}
	if code, body := get(t, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz once serving: %d %q, want 200", code, body)
	}
	r, err = inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/early-test/slow-load", ContentType: "text/plain", Timeout: 10 * time.Second})
	if err != nil || r.Status != 200 {
		t.Fatalf("slow-load once loaded: %+v, %v", r, err)
	}
	inv.Close()
	stop()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// TestExternalBrokerServesOnceLoaded: with an external broker, the
// executor connects only once every plugin is loaded: the broker may keep
// its session from before a restart, with requests queued for commands
// whose plugins are not loaded yet, which would be acknowledged as for
// no command. While a plugin's load is held, /readyz says the host is
// still to connect.
func TestExternalBrokerServesOnceLoaded(t *testing.T) {
	dir := slowLoadDir(t)
	echo, err := os.ReadFile(filepath.Join(pluginDir, "wat-echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a-echo.wasm"), echo, 0o644); err != nil {
		t.Fatal(err)
	}
	broker := brokertest.StartEmbedded(t) // a broker of its own: external to the host
	logs := &testkit.LogBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("host log:\n%s", logs)
		}
	})
	h := holdHandler{Handler: slog.NewTextHandler(logs, nil), held: make(chan struct{}), release: make(chan struct{}),
		soFar: make(chan struct{}), heldOnce: &sync.Once{}, soFarOnce: &sync.Once{}, metrics: make(chan string, 1)}
	releaseOnce := sync.OnceFunc(func() { close(h.release) })
	t.Cleanup(releaseOnce)
	serving := make(chan struct{})
	srv, err := host.New(host.Config{
		PluginsDir: dir,
		ExecutorID: "late-test",
		CacheDir:   testkit.CacheDir(),
		Logger:     slog.New(h),
		OnServing:  func() { close(serving) },
		Broker:     host.BrokerConfig{URL: broker},
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
	case <-h.held:
	case err := <-ran:
		t.Fatalf("Run returned before loading the plugin: %v", err)
	case <-time.After(60 * time.Second): // hang guard
		t.Fatal("the slow plugin's load did not start")
	}
	base := <-h.metrics
	code, body := get(t, base+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "starting: loading plugins (") || !strings.Contains(body, "; connecting to the broker") {
		t.Errorf("/readyz while a plugin loads, external broker: %d %q, want 503, not connected yet", code, body)
	}
	select {
	case <-h.soFar:
		t.Error("the executor served plugins before all were loaded, on an external broker")
	default:
	}
	releaseOnce()
	select {
	case <-serving:
	case err := <-ran:
		t.Fatalf("Run returned before serving: %v", err)
	case <-time.After(60 * time.Second): // hang guard
		t.Fatal("the server did not start serving")
	}
	inv, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: session.Config{Broker: broker}})
	if err != nil {
		t.Fatal(err)
	}
	defer inv.Close()
	r, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/late-test/wat-echo", Payload: []byte("hi"), ContentType: "text/plain", Timeout: 10 * time.Second})
	if err != nil || r.Status != 200 || string(r.Payload) != "hi" {
		t.Fatalf("wat-echo once serving: %+v, %v", r, err)
	}
	inv.Close()
	stop()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
