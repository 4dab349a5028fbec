package host_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/plugins"
)

// TestOperatorTimeoutPrecedence: host.Served gives each command the
// operator file's per-command timeout, else its plugin-level one, else
// the module's declared one, else the host's; and the operator file's
// concurrency, else its pool, else the host's pool size.
func TestOperatorTimeoutPrecedence(t *testing.T) {
	dir := t.TempDir()
	probe, err := os.ReadFile(filepath.Join(pluginDir, "probe.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "probe.wasm"), probe, 0o644); err != nil {
		t.Fatal(err)
	}
	m := plugins.NewManager(plugins.Config{Dir: dir, Engine: sharedEngine(t)})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = m.Close(ctx)
	}()
	const hostTimeout, hostPool = 10 * time.Second, 4

	// probe-request declares 3 s; probe-status and probe-env declare none.
	cases := []struct {
		name, operator       string // operator: "" for no file
		request, status, env time.Duration
		concurrency          int
	}{
		{"no operator file", "", 3 * time.Second, hostTimeout, hostTimeout, hostPool},
		{"per-command", `{"commands": {"probe-status": {"timeout": "500ms"}}}`,
			3 * time.Second, 500 * time.Millisecond, hostTimeout, hostPool},
		{"plugin-level and per-command", `{"timeout": "2s", "commands": {"probe-status": {"timeout": "500ms"}}, "concurrency": 7}`,
			2 * time.Second, 500 * time.Millisecond, 2 * time.Second, 7},
		{"plugin-level over a longer declared one", `{"timeout": "5s", "pool": 2}`,
			5 * time.Second, 5 * time.Second, 5 * time.Second, 2},
		{"concurrency over pool", `{"pool": 2, "concurrency": 6}`, 3 * time.Second, hostTimeout, hostTimeout, 6},
	}
	opPath := filepath.Join(dir, "probe.json")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.operator == "" {
				if err := os.Remove(opPath); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(opPath, []byte(c.operator), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := m.Reload(context.Background(), "probe"); err != nil {
				t.Fatal(err)
			}
			want := map[string]time.Duration{"probe-request": c.request, "probe-status": c.status, "probe-env": c.env}
			seen := 0
			for _, cmd := range host.Served(m, hostTimeout, hostPool) {
				if cmd.Concurrency != c.concurrency {
					t.Errorf("%s: concurrency %d, want %d", cmd.Name, cmd.Concurrency, c.concurrency)
				}
				if w, ok := want[cmd.Name]; ok {
					seen++
					if cmd.Timeout != w {
						t.Errorf("%s: timeout %v, want %v", cmd.Name, cmd.Timeout, w)
					}
				}
			}
			if seen != len(want) {
				t.Errorf("found %d of the commands %v", seen, want)
			}
		})
	}
}
