package host_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
)

// With StateAIO (serve --state aio), a host keeps its handlers' state in
// the state store of the broker it serves on, through the broker's
// protocol. Here another host's embedded broker serves the protocol
// (package statestore), as an Azure IoT Operations broker would; both
// hosts serve kit-go, so that their kit-state share one namespace,
// plugin/kit-go: what one writes the other reads, at the same version.
// What the protocol lacks (an add to a key that exists, a list, a write
// on a version) is refused as the guest's invalid; a failed call writes
// nothing; a request delivered again after the host restarted is
// answered from the outcome its state folder kept, not run again.
func TestStateAIO(t *testing.T) {
	a := serveState(t, nil) // executor "ss": its embedded broker serves the protocol
	dir := t.TempDir()
	testkit.InstallFile(t, "../testdata/plugins-kit/kit-go.wasm", dir, "kit-go.wasm")
	cfg := host.Config{
		PluginsDir: dir,
		ExecutorID: "sb",
		CacheDir:   testkit.CacheDir(),
		Broker:     host.BrokerConfig{URL: a.Broker()},
		Store:      host.StoreConfig{StateDir: t.TempDir(), StateAIO: true},
	}
	inv, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: newSession(a)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inv.Close() })
	call := func(t *testing.T, executor, payload string, corr []byte) *rpc.Result {
		t.Helper()
		r, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/" + executor + "/kit-state", Payload: []byte(payload), ContentType: "text/plain",
			Timeout: 10 * time.Second, Correlation: corr})
		if err != nil {
			t.Fatalf("%s kit-state %q: %v", executor, payload, err)
		}
		return r
	}
	kit := func(t *testing.T, executor, payload string) string {
		t.Helper()
		r := call(t, executor, payload, nil)
		if r.Status != 200 {
			t.Fatalf("%s kit-state %q: %d %s", executor, payload, r.Status, r.Message)
		}
		return string(r.Payload)
	}
	refused := func(t *testing.T, payload string) {
		t.Helper()
		if r := call(t, "sb", payload, nil); r.Status < 400 || !r.AppError || !strings.Contains(r.Message, "invalid") {
			t.Fatalf("kit-state %q on the broker's store: %d %q, want the guest's invalid", payload, r.Status, r.Message)
		}
	}
	corr := rpc.NewCorrelation()

	t.Run("serving", func(t *testing.T) {
		hosttest.Serve(t, cfg)
		if got := kit(t, "sb", "set k hello"); got != "ok" {
			t.Fatalf("set: %q", got)
		}
		got := kit(t, "ss", "get k")
		if !strings.HasPrefix(got, "hello@") || kit(t, "sb", "get k") != got {
			t.Fatalf("the other host reads %q, this one %q", got, kit(t, "sb", "get k"))
		}
		kit(t, "ss", "set j world")
		if got, want := kit(t, "sb", "get j"), kit(t, "ss", "get j"); got != want || !strings.HasPrefix(got, "world@") {
			t.Fatalf("the other host's write read as %q, want %q", got, want)
		}
		for payload, want := range map[string]string{"absent k x": "conflict", "absent n 1": "ok", "get nothing": "missing",
			"ttl t 2000 v": "ok", "del j": "1"} {
			if got := kit(t, "sb", payload); got != want {
				t.Fatalf("%q: %q, want %q", payload, got, want)
			}
		}
		if got := kit(t, "ss", "get t"); !strings.HasPrefix(got, "v@") {
			t.Fatalf("a key with a TTL before its time: %q", got)
		}
		if got := kit(t, "ss", "get j"); got != "missing" {
			t.Fatalf("a deleted key: %q", got)
		}
		testkit.WaitFor(t, "the key with a TTL to go", func() bool { return kit(t, "sb", "get t") == "missing" })
		if got := kit(t, "sb", "add c"); got != "1" {
			t.Fatalf("add to a new key: %q", got)
		}
		refused(t, "add c")
		refused(t, "list ")
		refused(t, "cas k 1 x")
		refused(t, "delv k 1")
		if r := call(t, "sb", "fail f", nil); !r.AppError || kit(t, "ss", "get f") != "missing" {
			t.Fatalf("a failed call: %+v, and it wrote %q", r, kit(t, "ss", "get f"))
		}
		if r := call(t, "sb", "add d", corr); string(r.Payload) != "1" {
			t.Fatalf("add d: %d %q %s", r.Status, r.Payload, r.Message)
		}
	})
	t.Run("restarted", func(t *testing.T) {
		hosttest.Serve(t, cfg)
		if r := call(t, "sb", "add d", corr); r.Status != 200 || string(r.Payload) != "1" {
			t.Fatalf("the request delivered again after the restart: %d %q %s, want its outcome 1", r.Status, r.Payload, r.Message)
		}
		refused(t, "add d") // what running it again would have answered
		if got := kit(t, "sb", "get k"); !strings.HasPrefix(got, "hello@") {
			t.Fatalf("after the restart: %q", got)
		}
	})
}

// StateAIO on the embedded broker, with a store, or without a state
// folder is refused, saying why.
func TestStateAIORefused(t *testing.T) {
	a := serveState(t, nil)
	base := host.Config{PluginsDir: t.TempDir(), ExecutorID: "sx", CacheDir: testkit.CacheDir(), Store: host.StoreConfig{StateDir: t.TempDir(), StateAIO: true}}
	for want, adjust := range map[string]func(*host.Config){
		"this host runs its embedded broker": func(c *host.Config) { c.Embedded.Listen = "127.0.0.1:0" },
		"--state aio and --store": func(c *host.Config) {
			c.Broker.URL, c.Store.URL, c.Store.StateDir = a.Broker(), "redis://127.0.0.1:1", ""
		},
		"give a --state-dir, not off": func(c *host.Config) { c.Broker.URL, c.Store.StateDir, c.Store.NoState = a.Broker(), "", true },
	} {
		cfg := base
		adjust(&cfg)
		if _, err := host.New(cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
}
