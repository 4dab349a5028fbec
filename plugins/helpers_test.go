package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/wasmtest"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// pluginDir holds the test plugins that `make plugins` builds.
const pluginDir = "../testdata/plugins"

// engine is shared by the tests; its compilation cache is the one every
// package's tests share (compiling a Go guest under -race takes ~14 s, a
// cached one loads in about a second).
var engine *wasm.Engine

func TestMain(m *testing.M) {
	flag.Parse()
	// Under -short (make unit) the tests that read a plugin skip, and so
	// does Example, which loads one but cannot skip itself.
	if testing.Short() {
		skip := "^Example$"
		if s := flag.Lookup("test.skip").Value.String(); s != "" {
			skip = s + "|" + skip
		}
		_ = flag.Set("test.skip", skip)
	} else if _, err := os.Stat(filepath.Join(pluginDir, "echo.wasm")); err != nil {
		fmt.Fprintln(os.Stderr, "test plugins are missing: run `make plugins` (or `make test`) first")
		os.Exit(1)
	}
	var err error
	engine, err = wasmtest.NewEngine(wasm.Config{})
	if err != nil {
		panic(err)
	}
	code := m.Run()
	_ = engine.Close(context.Background())
	os.Exit(code)
}

// hostConcurrency is the test managers' default concurrency per command:
// a value no operator file in the tests sets, so that a command showing it
// shows the host's default applied.
const hostConcurrency = 7

// newManager returns a Manager of dir whose log the test can read; it is
// closed when the test ends.
func newManager(t *testing.T, dir string, debounce time.Duration) (*Manager, *testkit.LogBuffer) {
	t.Helper()
	logs := &testkit.LogBuffer{}
	m := NewManager(Config{
		Dir: dir, Engine: engine, Debounce: debounce, DrainTimeout: 20 * time.Second,
		Defaults: Defaults{ExecTimeout: NoTimeout, Concurrency: hostConcurrency},
		Logger:   slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			t.Logf("manager log:\n%s", logs)
		}
	})
	return m, logs
}

// watch runs m.Watch until the test ends.
func watch(t *testing.T, m *Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Watch(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch: %v", err)
		}
	})
	// Watch is running once its initial scan has been made; a file
	// written before the watcher is in place is still caught by that scan.
}

// readPlugin returns a test plugin's module.
func readPlugin(t testing.TB, name string) []byte {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	b, err := os.ReadFile(filepath.Join(pluginDir, name+".wasm"))
	if err != nil {
		t.Fatalf("reading test plugin: %v (run `make plugins`)", err)
	}
	return b
}

// variant returns module with a custom section appended: another file
// content (and digest) for the same code and commands. A custom section is
// valid anywhere after the header.
func variant(module []byte, tag string) []byte {
	if len(tag) > 100 {
		panic("tag too long")
	}
	out := append([]byte(nil), module...)
	out = append(out, 0, byte(1+len(tag)+1), byte(len(tag)))
	out = append(out, tag...)
	return append(out, 'x')
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// call looks command up and invokes it once.
func call(m *Manager, command, payload string) (*abi.Response, error) {
	p, ok := m.Lookup(command)
	if !ok {
		return nil, fmt.Errorf("command %s is not served", command)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return p.Invoke(ctx, &abi.Request{Command: command, Payload: []byte(payload)})
}

// mustEcho checks that command echoes.
func mustEcho(t *testing.T, m *Manager, command string) {
	t.Helper()
	resp, err := call(m, command, "ping")
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	if string(resp.Payload) != "ping" {
		t.Fatalf("%s answered %q, want ping", command, resp.Payload)
	}
}

// status returns the status of plugin name, or false.
func status(m *Manager, name string) (PluginStatus, bool) {
	for _, s := range m.Status() {
		if s.Name == name {
			return s, true
		}
	}
	return PluginStatus{}, false
}

// served renders Commands() as "plugin:command" strings.
func served(m *Manager) []string {
	var out []string
	for _, s := range m.Commands() {
		out = append(out, s.Plugin+":"+s.Name())
	}
	return out
}

// counter counts OnChange calls.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) inc() { c.mu.Lock(); c.n++; c.mu.Unlock() }

func (c *counter) get() int { c.mu.Lock(); defer c.mu.Unlock(); return c.n }

func onChanges(m *Manager) *counter {
	c := &counter{}
	m.OnChange(c.inc)
	return c
}
