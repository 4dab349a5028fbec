package wasm

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// pluginDir holds the test plugins that `make plugins` builds.
const pluginDir = "../../testdata/plugins"

var (
	sharedEngine *Engine
	logBuf       testkit.LogBuffer
)

func TestMain(m *testing.M) {
	flag.Parse()
	// Under -short (make unit) the tests that read a plugin skip (readPlugin).
	if _, err := os.Stat(filepath.Join(pluginDir, "echo.wasm")); err != nil && !testing.Short() {
		fmt.Fprintln(os.Stderr, "test plugins are missing: run `make plugins` (or `make test`) first")
		os.Exit(1)
	}
	var err error
	sharedEngine, err = NewEngine(Config{
		CacheDir: testkit.CacheDir(),
		Logger:   slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		panic(err)
	}
	code := m.Run()
	_ = sharedEngine.Close(context.Background())
	os.Exit(code)
}

// badPluginDir holds the deliberately broken modules (bad-*).
const badPluginDir = "../../testdata/plugins-bad"

// hostilePluginDir holds the modules that try to exhaust the host
// (hostile-*), built from testdata/hostile/*.wat.
const hostilePluginDir = "../../testdata/plugins-hostile"

// kitPluginDir holds the guest kit's plugin in each language (kit-LANG),
// each serving kit-echo and the rest of testdata/kit/README.md.
const kitPluginDir = "../../testdata/plugins-kit"

func readPlugin(t testing.TB, name string) []byte {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	dir := pluginDir
	switch {
	case strings.HasPrefix(name, "bad-"):
		dir = badPluginDir
	case strings.HasPrefix(name, "hostile-"):
		dir = hostilePluginDir
	case strings.HasPrefix(name, "kit-"):
		dir = kitPluginDir
	}
	b, err := os.ReadFile(filepath.Join(dir, name+".wasm"))
	if err != nil {
		t.Fatalf("reading test plugin: %v (run `make plugins`)", err)
	}
	return b
}

// load loads a test plugin under its own name and closes it with the test.
func load(t testing.TB, name string, cfg PluginConfig) *Plugin {
	t.Helper()
	return loadAs(t, name, name, cfg)
}

// loadAs loads the test plugin file under another plugin name, so tests
// that count get variables of their own.
func loadAs(t testing.TB, file, name string, cfg PluginConfig) *Plugin {
	t.Helper()
	p, err := sharedEngine.Load(context.Background(), name, readPlugin(t, file), cfg)
	if err != nil {
		t.Fatalf("load %s: %v", file, err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func call(t testing.TB, p *Plugin, ctx context.Context, command, payload string) (*abi.Response, error) {
	t.Helper()
	return p.Invoke(ctx, &abi.Request{Command: command, Payload: []byte(payload), ContentType: "text/plain"})
}

func mustCall(t testing.TB, p *Plugin, command, payload string) *abi.Response {
	t.Helper()
	resp, err := call(t, p, context.Background(), command, payload)
	if err != nil {
		t.Fatalf("%s(%q): %v", command, payload, err)
	}
	return resp
}

// newFakeClock returns a clock the test moves by hand (testkit.Clock).
func newFakeClock() *testkit.Clock {
	return testkit.NewClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
}
