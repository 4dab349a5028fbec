package host_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
)

// runTracedHost runs a host.Server serving copies of the plugins named,
// with its own tracer provider, until the test ends; broker nil starts
// its embedded broker. It returns once the host serves.
func runTracedHost(t *testing.T, id string, broker *host.Server, spans *testkit.Spans, plugins ...string) *host.Server {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	dir := t.TempDir()
	for _, name := range plugins {
		bin, err := os.ReadFile(filepath.Join(pluginDir, name+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".wasm"), bin, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := host.Config{
		PluginsDir: dir,
		ExecutorID: id,
		CacheDir:   testkit.CacheDir(),
		Embedded:   host.EmbeddedConfig{Listen: "127.0.0.1:0"},
		Limits: host.LimitsConfig{
			ExecTimeout: 10 * time.Second,
			Pool:        2,
			MaxExpiry:   time.Hour,
			Drain:       10 * time.Second,
			MaxDepth:    host.DefaultMaxDepth,
		},
		Observe: host.ObserveConfig{Tracing: spans},
	}
	if broker != nil {
		cfg.Broker.URL = broker.Broker()
	}
	return hosttest.Serve(t, cfg)
}

// fileDigest is the hex sha256 of a test plugin's module: its digest.
func fileDigest(t *testing.T, name string) string {
	testkit.Needs(t, testkit.Plugins)
	bin, err := os.ReadFile(filepath.Join(pluginDir, name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bin)
	return hex.EncodeToString(sum[:])
}

// callSpec and resultView are the parts of testdata/nest's JSON this test
// reads (internal/nested's tests have all of it).
type callSpec struct {
	Command  string `json:"command"`
	Executor string `json:"executor,omitempty"`
	Payload  string `json:"payload,omitempty"`
}

type resultView struct {
	Status  int    `json:"status"`
	Payload string `json:"payload"`
}

// One trace follows a request from its invoker through host A, a nested
// call from A's plugin to a command on host B through the broker, and B's
// run of it: each process has its own tracer provider, and the trace
// context goes from one to the next in the W3C user properties. The
// execute spans name the plugin and its module digest; a nested call to a
// local command is a span of A's.
func TestTraceAcrossNestedCallAndHosts(t *testing.T) {
	spansA, spansB, spansClient := testkit.NewSpans(t), testkit.NewSpans(t), testkit.NewSpans(t)
	a := runTracedHost(t, "trace-a", nil, spansA, "nest", "echo")
	runTracedHost(t, "trace-b", a, spansB, "echo")

	client, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: session.Config{Broker: a.Broker(), ClientID: "trace-client"},
		Tracer: spansClient.Tracer("client")})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	nest := func(spec callSpec) resultView {
		t.Helper()
		payload, _ := json.Marshal(spec)
		r, err := client.Invoke(ctxT(t), rpc.Call{Topic: "rpc/trace-a/nest", Payload: payload, ContentType: "application/json",
			Timeout: 20 * time.Second, Ack: true})
		if err != nil || r.Status != 200 {
			t.Fatalf("nest %+v: %+v %v", spec, r, err)
		}
		var v resultView
		if err := json.Unmarshal(r.Payload, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := nest(callSpec{Command: "echo", Executor: "trace-b", Payload: "hi"}); v.Status != 200 || v.Payload != "hi" {
		t.Fatalf("the remote nested call: %+v", v)
	}

	invoke := spansClient.Until(t, "cmdhost.invoke rpc/trace-a/nest")
	requestA := spansA.Until(t, "cmdhost.request nest")
	executeA := spansA.Until(t, "cmdhost.execute")
	toB := spansA.Until(t, "cmdhost.invoke rpc/trace-b/echo")
	requestB := spansB.Until(t, "cmdhost.request echo")
	executeB := spansB.Until(t, "cmdhost.execute")
	testkit.ChildOf(t, requestA, invoke)
	testkit.ChildOf(t, executeA, requestA)
	testkit.ChildOf(t, toB, executeA)
	testkit.ChildOf(t, requestB, toB)
	testkit.ChildOf(t, executeB, requestB)
	for _, c := range []struct {
		span           sdktrace.ReadOnlySpan
		plugin, digest string
	}{{executeA, "nest", fileDigest(t, "nest")}, {executeB, "echo", ""}} {
		if testkit.SpanAttr(c.span, "cmdhost.plugin") != c.plugin || testkit.SpanAttr(c.span, "cmdhost.attempt") != "1" ||
			len(testkit.SpanAttr(c.span, "cmdhost.plugin.digest")) != 64 || c.digest != "" && testkit.SpanAttr(c.span, "cmdhost.plugin.digest") != c.digest {
			t.Errorf("execute span of %s: %v", c.plugin, c.span.Attributes())
		}
		if fuel := testkit.SpanAttr(c.span, "cmdhost.fuel"); fuel != "" { // no budget: fuel is not counted (internal/wasm TestFuelOnTheSpan)
			t.Errorf("execute span of %s: cmdhost.fuel %s for a plugin with no fuel budget", c.plugin, fuel)
		}
	}
	// The verified caller: the client, as A's embedded broker stamps it;
	// B, on A's broker, does not trust that broker's stamps (serve
	// --trust-broker-identity would): its call has no verified caller.
	if got := testkit.SpanAttr(executeA, "cmdhost.caller.client_id"); got != "trace-client" {
		t.Errorf("A's execute span names the caller %q, want trace-client: %v", got, executeA.Attributes())
	}
	if got := testkit.SpanAttr(executeB, "cmdhost.caller.client_id"); got != "" {
		t.Errorf("B's execute span names the caller %q, a stamp of a broker it does not trust: %v", got, executeB.Attributes())
	}

	// A local nested call never crosses the broker: a span of A's, under
	// the run of the command that made it.
	if v := nest(callSpec{Command: "echo", Payload: "local"}); v.Status != 200 || v.Payload != "local" {
		t.Fatalf("the local nested call: %+v", v)
	}
	local := spansA.Until(t, "cmdhost.nested echo")
	second := spansA.UntilFunc(t, "execute of the second nest", func(s sdktrace.ReadOnlySpan) bool {
		return s.Name() == "cmdhost.execute" && s.SpanContext().SpanID() == local.Parent().SpanID()
	})
	if second.SpanContext().TraceID() == executeA.SpanContext().TraceID() || testkit.SpanAttr(local, "cmdhost.plugin") != "echo" || testkit.SpanAttr(local, "cmdhost.status") != "200" {
		t.Errorf("the local nested call's span: %v under %v", local.Attributes(), second.Attributes())
	}
}
