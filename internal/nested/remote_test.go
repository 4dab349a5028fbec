package nested_test

import (
	"encoding/json"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/commands"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/nested"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/wasm"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// serveNestHost serves h's plugins on the broker as executor h.id and
// gives its Nested an invoker on the same broker for remote branches.
func serveNestHost(t *testing.T, u *url.URL, h *nestHost, adjust ...func(*rpc.Config, *nested.Config)) {
	t.Helper()
	var modules []*wasm.Plugin
	for _, p := range h.plugins {
		modules = append(modules, p)
	}
	cfg := rpc.Config{ExecutorID: h.id, Session: session.Config{ClientID: h.id + "-" + strings.ReplaceAll(t.Name(), "/", "-"),
		Broker: u, ReconnectDelay: 50 * time.Millisecond},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	var ncfg nested.Config
	for _, f := range adjust {
		f(&cfg, &ncfg)
	}
	exec, err := rpc.NewExecutor(cfg, commands.Fixed(modules, pluginmgr.Defaults{ExecTimeout: 10 * time.Second, Concurrency: 4}))
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	inv, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: session.Config{Broker: u}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = inv.Close()
		_ = exec.Stop(ctxT(t))
	})
	ncfg.Remote = inv
	h.configure(ncfg)
}

// nestCaller returns a function that calls the nest command of executor
// through the broker with a spec and returns the nested result it reports.
func nestCaller(t *testing.T, u *url.URL, executor string) func(callSpec) resultView {
	t.Helper()
	client, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: session.Config{Broker: u}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return func(spec callSpec) resultView {
		t.Helper()
		payload, _ := json.Marshal(spec)
		r, err := client.Invoke(ctxT(t), rpc.Call{Topic: "rpc/" + executor + "/nest", Payload: payload,
			ContentType: "application/json", Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return decode[resultView](t)(&abi.Response{Status: r.Status, Payload: r.Payload, Message: r.Message}, nil)
	}
}

// A branch naming another executor goes through a real broker to it, as
// any protocol invoker's request: the child sees the chain and a deadline
// within the requested timeout (rounded up to whole seconds: MQTT's
// expiry); a cycle across hosts is refused; an executor that does not
// answer is timed_out at the nested deadline.
func TestNestedRemote(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		a := newNestHost(t, "host-a", "nest")
		b := newNestHost(t, "host-b", "nest", "probe")
		serveNestHost(t, u, a)
		serveNestHost(t, u, b)
		call := nestCaller(t, u, "host-a")

		v := call(callSpec{Command: "probe-request", Executor: "host-b", ContentType: "text/plain", Payload: "hi", TimeoutMs: 1500})
		var p probeView
		if err := json.Unmarshal([]byte(v.Payload), &p); v.Status != 200 || err != nil {
			t.Fatalf("%+v: %v", v, err)
		}
		if p.Metadata[abi.ChainKey] != "host-a/nest" || p.RemainingMs <= 0 || p.RemainingMs > 2000 || v.BudgetMs > 1500 {
			t.Fatalf("the remote child saw %+v (budget %v ms)", p, v.BudgetMs)
		}

		inner, _ := json.Marshal(callSpec{Command: "nest", Executor: "host-a"})
		v = call(callSpec{Command: "nest-relay", Executor: "host-b", Payload: string(inner)})
		var relayed resultView
		if err := json.Unmarshal([]byte(v.Payload), &relayed); err != nil || v.Status != 200 {
			t.Fatalf("%+v: %v", v, err)
		}
		if relayed.Reason != "cycle" || !strings.Contains(relayed.Error, "nested call cycle: host-a/nest → host-b/nest-relay → host-a/nest") {
			t.Fatalf("the cycle across hosts: %+v", relayed)
		}

		a.events.take("")
		start := time.Now()
		v = call(callSpec{Command: "echo", Executor: "host-z", TimeoutMs: 300})
		// Bounded by the branch's 300 ms, not by the 1 min default of a
		// remote call (NestedConfig.RemoteTimeout).
		if took := time.Since(start); v.Outcome != "timed_out" || v.Status != 408 || took >= 30*time.Second ||
			!strings.Contains(v.Message, "no response from executor host-z") {
			t.Fatalf("%+v after %v", v, took)
		}
		if evs := a.events.take(events.TypeNested); len(evs) != 1 || evs[0].Command != "echo" || evs[0].Budget != 300*time.Millisecond {
			t.Fatalf("%+v", evs)
		}
	})
}
