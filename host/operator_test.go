package host_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/commands"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/plugins"
)

// TestOperatorTimeoutPrecedence: the commands served give each command the
// operator file's per-command timeout, else its plugin-level one, else
// the module's declared one, else the host's; and the operator file's
// concurrency, else its pool, else the host's pool size.
func TestOperatorTimeoutPrecedence(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	dir := t.TempDir()
	probe, err := os.ReadFile(filepath.Join(pluginDir, "probe.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "probe.wasm"), probe, 0o644); err != nil {
		t.Fatal(err)
	}
	const hostTimeout, hostPool = 10 * time.Second, 4
	m := plugins.NewManager(plugins.Config{Dir: dir, Engine: sharedEngine(t),
		Defaults: plugins.Defaults{ExecTimeout: hostTimeout, Concurrency: hostPool}})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = m.Close(ctx)
	}()

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
			for _, cmd := range commands.Served(m, false) {
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

// TestOperatorOnTimeout: the operator file's on_timeout policy reaches
// rpc.Command.TimeoutRetries (per command over plugin
// level), the executor accepts the commands, a reload of the operator file
// changes the policy, and a retry on a non-idempotent command never gets
// that far: the plugin is refused at load.
func TestOperatorOnTimeout(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	dir := t.TempDir()
	for _, name := range []string{"counter", "counter-idem"} {
		bin, err := os.ReadFile(filepath.Join(pluginDir, name+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".wasm"), bin, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const hostTimeout = 10 * time.Second
	m := plugins.NewManager(plugins.Config{Dir: dir, Engine: sharedEngine(t), Defaults: plugins.Defaults{ExecTimeout: hostTimeout}})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = m.Close(ctx)
	}()
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatal(errs)
	}
	broker, _ := url.Parse("mqtt://127.0.0.1:1")
	served := func(t *testing.T) map[string]rpc.Command {
		t.Helper()
		cmds := commands.Served(m, false)
		exec, err := rpc.NewExecutor(rpc.Config{ExecutorID: "t", Session: session.Config{Broker: broker}, ReuseMaxBytes: -1}, cmds)
		if err != nil {
			t.Fatalf("the executor refuses the commands: %v", err)
		}
		_ = exec.Stop(context.Background()) // never started
		out := map[string]rpc.Command{}
		for _, c := range cmds {
			out[c.Name] = c
		}
		return out
	}
	write := func(t *testing.T, name, content string) error {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return m.Reload(context.Background(), name)
	}

	if c := served(t)["counter-idem"]; c.TimeoutRetries != 0 || c.Timeout != hostTimeout {
		t.Errorf("no operator file: %+v, want policy fail and the host's timeout", c)
	}
	for _, c := range []struct {
		operator string
		retries  int
		timeout  time.Duration
	}{
		{`{"onTimeout": "retry", "retries": 2}`, 2, hostTimeout},
		{`{"onTimeout": "retry", "retries": 2, "commands": {"counter-idem": {"onTimeout": "retry", "retries": 4, "timeout": "300ms"}}}`, 4, 300 * time.Millisecond},
		{`{"onTimeout": "retry", "retries": 2, "commands": {"counter-idem": {"onTimeout": "fail"}}}`, 0, hostTimeout},
		{`{"timeout": "1s", "commands": {"counter-idem": {"onTimeout": "retry", "retries": 1}}}`, 1, time.Second},
	} {
		if err := write(t, "counter-idem", c.operator); err != nil {
			t.Fatalf("%s: %v", c.operator, err)
		}
		if got := served(t)["counter-idem"]; got.TimeoutRetries != c.retries || got.Timeout != c.timeout || !got.Idempotent {
			t.Errorf("%s: TimeoutRetries %d, Timeout %v; want %d, %v", c.operator, got.TimeoutRetries, got.Timeout, c.retries, c.timeout)
		}
	}

	// counter is not idempotent: retry is refused at load, at either
	// level, and the version serving keeps policy fail.
	for _, operator := range []string{`{"onTimeout": "retry", "retries": 1}`, `{"commands": {"counter": {"onTimeout": "retry", "retries": 1}}}`} {
		if err := write(t, "counter", operator); err == nil || !strings.Contains(err.Error(), "does not declare counter idempotent") {
			t.Errorf("%s: Reload = %v, want a refusal", operator, err)
		}
		if c, ok := served(t)["counter"]; !ok || c.TimeoutRetries != 0 {
			t.Errorf("%s: counter served %v as %+v, want the old version with policy fail", operator, ok, c)
		}
	}
}
