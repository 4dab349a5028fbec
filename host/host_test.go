package host_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/host/rpc"
	"github.com/cmdhost/cmdhost/host/wasm"
)

// LoadDir loads every test plugin with no problem, and each broken module
// of testdata/plugins-bad is reported with its cause while the others
// load. (`make test` also runs this without -race first: it warms the
// compilation cache for the race run.)
func TestAllPluginsLoad(t *testing.T) {
	plugins, problems := host.LoadDir(context.Background(), sharedEngine(t), pluginDir, wasm.PluginConfig{PoolSize: 1})
	defer closeAll(plugins)
	if len(problems) != 0 || len(plugins) < 11 {
		t.Fatalf("%d plugins, problems %v", len(plugins), problems)
	}
	cmds := host.Commands(plugins, 0, 1)
	for _, c := range cmds {
		if c.Topic != rpc.DefaultTopic || c.Concurrency != 1 {
			t.Errorf("%s: topic %q, concurrency %d", c.Name, c.Topic, c.Concurrency)
		}
		if c.Name == "probe-request" && c.Timeout.Seconds() != 3 {
			t.Errorf("probe-request declares a 3 s timeout, got %v", c.Timeout)
		}
	}

	bad, problems := host.LoadDir(context.Background(), sharedEngine(t), "../testdata/plugins-bad", wasm.PluginConfig{PoolSize: 1, LoadTimeout: 200e6})
	defer closeAll(bad)
	if len(bad) != 2 || len(problems) != 9 {
		t.Fatalf("plugins-bad: %d loaded (want badresp and nohandle), %d problems: %v", len(bad), len(problems), problems)
	}
	for _, p := range problems {
		if !strings.HasPrefix(p.Error(), "loading plugin bad-") {
			t.Errorf("a problem must name its plugin: %v", p)
		}
	}
}

// A command served by two plugins stays with the first; the second is
// refused with a message naming both.
func TestCommandClash(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a-echo", "b-echo"} {
		copyFile(t, pluginDir+"/echo.wasm", dir+"/"+name+".wasm")
	}
	plugins, problems := host.LoadDir(context.Background(), sharedEngine(t), dir, wasm.PluginConfig{PoolSize: 1})
	defer closeAll(plugins)
	if len(plugins) != 1 || plugins[0].Name() != "a-echo" || len(problems) != 1 ||
		!strings.Contains(problems[0].Error(), "command echo is already served by plugin a-echo; b-echo not loaded") {
		t.Fatalf("plugins %d, problems %v", len(plugins), problems)
	}
}

func closeAll(ps []*wasm.Plugin) {
	for _, p := range ps {
		_ = p.Close(context.Background())
	}
}
