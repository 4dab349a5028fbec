package host_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/commands"
	"github.com/cmdhost/cmdhost/internal/nested"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/setting"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// newManager loads dir into a plugins manager closed with the test.
func newManager(t *testing.T, dir string, cfg wasm.PluginConfig) (*plugins.Manager, []error) {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	m := plugins.NewManager(plugins.Config{Dir: dir, Engine: sharedEngine(t), Plugin: cfg})
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m, m.LoadAll(context.Background())
}

// serving counts the plugins serving.
func serving(m *plugins.Manager) int {
	n := 0
	for _, st := range m.Status() {
		if st.State == plugins.StateServing {
			n++
		}
	}
	return n
}

// Every test plugin loads with no problem and its commands get the host's
// defaults; each broken module of testdata/plugins-bad is reported with
// its cause while the others load. (`make test` also runs this without
// -race first: it warms the compilation cache for the race run.)
func TestAllPluginsLoad(t *testing.T) {
	m, problems := newManager(t, pluginDir, wasm.PluginConfig{PoolSize: 1})
	if len(problems) != 0 || serving(m) < 11 {
		t.Fatalf("%d plugins serving, problems %v", serving(m), problems)
	}
	for _, c := range commands.Served(m, false) {
		if c.Topic != rpc.DefaultTopic || c.Concurrency != 1 {
			t.Errorf("%s: topic %q, concurrency %d", c.Name, c.Topic, c.Concurrency)
		}
		if c.Name == "probe-request" && c.Timeout.Seconds() != 3 {
			t.Errorf("probe-request declares a 3 s timeout, got %v", c.Timeout)
		}
	}

	bad, problems := newManager(t, "../testdata/plugins-bad", wasm.PluginConfig{PoolSize: 1, LoadTimeout: 200e6})
	if serving(bad) != 2 || len(problems) != 10 { // bad-topic loads but is not served
		t.Fatalf("plugins-bad: %d serving (want badresp and nohandle), %d problems: %v", serving(bad), len(problems), problems)
	}
	for _, p := range problems {
		if !strings.Contains(p.Error(), "plugin bad-") {
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
	m, problems := newManager(t, dir, wasm.PluginConfig{PoolSize: 1})
	if serving(m) != 1 || len(problems) != 1 ||
		!strings.Contains(problems[0].Error(), "command echo is already served by plugin a-echo; b-echo not loaded") {
		t.Fatalf("%d serving, problems %v", serving(m), problems)
	}
	if p, ok := m.Lookup("echo"); !ok || p.Name() != "a-echo" {
		t.Fatal("the first plugin keeps the command")
	}
}

// host.DefaultMaxDepth, which Config's documentation and serve's
// --max-depth show, is the one the nested calls apply.
func TestDefaultMaxDepthIsNested(t *testing.T) {
	if host.DefaultMaxDepth != nested.DefaultMaxDepth {
		t.Fatalf("host.DefaultMaxDepth %d, nested.DefaultMaxDepth %d", host.DefaultMaxDepth, nested.DefaultMaxDepth)
	}
}

// host.Off, written as a literal so that go doc shows it, is the value
// every part's Config reads as off (package setting).
func TestOffIsTheSettingsOff(t *testing.T) {
	if host.Off != setting.Off {
		t.Fatalf("host.Off %d, setting.Off %d", host.Off, setting.Off)
	}
}
