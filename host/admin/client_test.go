package admin_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
	"github.com/cmdhost/cmdhost/plugins"
)

const pluginDir = "../../testdata/plugins"

// runHost runs a host serving a copy of the echo plugin with the admin
// token "secret" on its embedded broker until the test ends, and returns
// its broker and plugins folder once it serves.
func runHost(t *testing.T, id string) (*url.URL, string) {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	dir := t.TempDir()
	bin, err := os.ReadFile(filepath.Join(pluginDir, "echo.wasm"))
	if err != nil {
		t.Fatalf("%v (run `make plugins`)", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "echo.wasm"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := hosttest.Serve(t, host.Config{
		PluginsDir: dir,
		ExecutorID: id,
		CacheDir:   testkit.CacheDir(),
		Embedded:   host.EmbeddedConfig{Listen: "127.0.0.1:0"},
		Limits: host.LimitsConfig{
			ExecTimeout: 10 * time.Second,
			Pool:        1,
			MaxExpiry:   time.Hour,
			Drain:       10 * time.Second,
		},
		Admin: host.AdminConfig{Token: "secret"},
	})
	return srv.Broker(), dir
}

func dial(t *testing.T, cfg admin.ClientConfig) *admin.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := admin.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// The client runs each op on a real host: the reading ops without a
// token, reload and remove with it; without it they are a HostError with
// StatusForbidden, and a host that is not there is ErrNoExecutor.
func TestClientOps(t *testing.T) {
	u, dir := runHost(t, "admin-client")
	ctx := context.Background()
	open := dial(t, admin.ClientConfig{Broker: u, ExecutorID: "admin-client"})
	views, err := open.List(ctx)
	if err != nil || len(views) != 1 || views[0].Name != "echo" || views[0].State != plugins.StateServing {
		t.Fatalf("list: %+v, %v", views, err)
	}
	v, err := open.Inspect(ctx, "echo")
	if err != nil || v.Name != "echo" || len(v.Declared) == 0 || len(v.Timeouts) == 0 {
		t.Fatalf("inspect: %+v, %v", v, err)
	}
	var hostErr *admin.HostError
	if _, err := open.Inspect(ctx, "nope"); !errors.As(err, &hostErr) || hostErr.Status != 400 {
		t.Fatalf("inspect of no plugin: %v, want a HostError 400", err)
	}
	st, err := open.Stats(ctx)
	if err != nil || len(st.Plugins) != 1 || st.Build.Version == "" {
		t.Fatalf("stats: %+v, %v", st, err)
	}
	if _, err := open.Reload(ctx, "echo"); !errors.As(err, &hostErr) || hostErr.Status != admin.StatusForbidden {
		t.Fatalf("reload without the token: %v, want a HostError 403", err)
	}

	withToken := dial(t, admin.ClientConfig{Broker: u, ExecutorID: "admin-client", Token: "secret"})
	if v, err := withToken.Reload(ctx, "echo"); err != nil || v.Name != "echo" || v.Reloads != 1 {
		t.Fatalf("reload: %+v, %v", v, err)
	}
	if err := withToken.Remove(ctx, "echo"); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "echo.wasm")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the removed plugin's file: %v", err)
	}
	views, err = withToken.List(ctx) // it may still drain
	if err != nil || len(views) > 1 || len(views) == 1 && (views[0].State == plugins.StateServing || len(views[0].Commands) != 0) {
		t.Fatalf("list after remove: %+v, %v", views, err)
	}

	absent := dial(t, admin.ClientConfig{Broker: u, ExecutorID: "no-such-host"})
	if _, err := absent.List(ctx); !errors.Is(err, admin.ErrNoExecutor) {
		t.Fatalf("a host that is not there: %v, want ErrNoExecutor", err)
	}
}

func TestDialChecks(t *testing.T) {
	u, _ := url.Parse("mqtt://127.0.0.1:1")
	for _, cfg := range []admin.ClientConfig{{ExecutorID: "h"}, {Broker: u}, {Broker: u, ExecutorID: "a/+"}} {
		if c, err := admin.Dial(context.Background(), cfg); err == nil {
			c.Close()
			t.Errorf("%+v: dialled", cfg)
		}
	}
}
