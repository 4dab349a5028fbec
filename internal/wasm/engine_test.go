package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

func TestEchoRoundTrip(t *testing.T) {
	p := load(t, "echo", PluginConfig{})
	resp := mustCall(t, p, "echo", "hello")
	if string(resp.Payload) != "hello" || resp.ContentType != "text/plain" || resp.Code() != abi.StatusOK {
		t.Fatalf("echo: got %+v", resp)
	}
	d := p.Description()
	if len(d.Commands) != 1 || d.Commands[0].Name != "echo" || d.Commands[0].Idempotent {
		t.Fatalf("description: %+v", d)
	}
}

// The ABI is language-neutral: a module hand-written in WebAssembly text
// loads and echoes like the Go one.
func TestNonGoPlugin(t *testing.T) {
	p := load(t, "wat-echo", PluginConfig{})
	if caps := p.Capabilities(); len(caps) != 0 {
		t.Errorf("wat-echo imports no WASI, got capabilities %v", caps)
	}
	for _, payload := range []string{"hello", "", strings.Repeat("x", 200<<10)} {
		resp := mustCall(t, p, "wat-echo", payload)
		if string(resp.Payload) != payload || resp.ContentType != "text/plain" {
			t.Fatalf("wat-echo(%d bytes): got %d bytes, content type %q", len(payload), len(resp.Payload), resp.ContentType)
		}
	}
}

func TestDescriptionOptions(t *testing.T) {
	idem := load(t, "counter-idem", PluginConfig{})
	c := idem.Description().Command("counter-idem")
	if c == nil || !c.Idempotent || c.ResponseTTL != time.Hour {
		t.Fatalf("counter-idem declares idempotent with a 1 h TTL, got %+v", c)
	}
	probe := load(t, "probe", PluginConfig{})
	r := probe.Description().Command("probe-request")
	if r == nil || r.Timeout != 3*time.Second || !r.Accepts("application/json") || r.Accepts("image/png") {
		t.Fatalf("probe-request declares a 3 s timeout and two content types, got %+v", r)
	}
}

// Every request field reaches the guest intact through the SDK.
func TestRequestRoundTrip(t *testing.T) {
	p := load(t, "probe", PluginConfig{})
	deadline := time.Now().Add(2 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	resp, err := p.Invoke(ctx, &abi.Request{
		Command: "probe-request", Payload: []byte("héllo"), ContentType: "application/json",
		Format: abi.FormatUTF8, Metadata: map[string]string{"a": "1", "b": ""},
		TopicTokens: map[string]string{"deviceId": "dev-7"}, InvokerID: "client-9",
		CorrelationID: []byte{1, 2, 3, 255}, ExecutorID: "host-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	var got requestView
	if err := json.Unmarshal(resp.Payload, &got); err != nil {
		t.Fatalf("probe-request reply %q: %v", resp.Payload, err)
	}
	want := requestView{
		Command: "probe-request", Payload: "héllo", ContentType: "application/json", Format: 1,
		Metadata: map[string]string{"a": "1", "b": ""}, TopicTokens: map[string]string{"deviceId": "dev-7"},
		InvokerID: "client-9", CorrelationID: "010203ff", ExecutorID: "host-1", DeadlineUnix: deadline.UnixNano(),
	}
	got.RemainingMs, want.RemainingMs = min(got.RemainingMs, 0), 0
	if !equalJSON(got, want) {
		t.Fatalf("request seen by the guest:\n got %+v\nwant %+v", got, want)
	}
	if resp.Metadata["probe"] != "yes" || resp.ContentType != "application/json" {
		t.Fatalf("response metadata/content type lost: %+v", resp)
	}
}

// requestView mirrors testdata/probe's reply.
type requestView struct {
	Command       string            `json:"command"`
	Payload       string            `json:"payload"`
	ContentType   string            `json:"contentType"`
	Format        int               `json:"format"`
	Metadata      map[string]string `json:"metadata"`
	TopicTokens   map[string]string `json:"topicTokens"`
	InvokerID     string            `json:"invokerId"`
	CorrelationID string            `json:"correlationId"`
	ExecutorID    string            `json:"executorId"`
	DeadlineUnix  int64             `json:"deadlineUnixNano"`
	RemainingMs   int64             `json:"remainingMs"`
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// A guest's statuses come back as responses.
func TestGuestStatuses(t *testing.T) {
	p := load(t, "probe", PluginConfig{})
	cases := []struct {
		payload  string
		status   abi.Status
		appError bool
		prop     string
	}{
		{"ok", abi.StatusOK, false, ""},
		{"204", abi.StatusNoContent, false, ""},
		{"400", abi.StatusBadRequest, false, ""},
		{"415", abi.StatusUnsupportedType, false, "Content Type"},
		{"500", abi.StatusInternalError, true, ""},
	}
	for _, c := range cases {
		resp := mustCall(t, p, "probe-status", c.payload)
		if resp.Code() != c.status || resp.AppError != c.appError || resp.PropName != c.prop {
			t.Errorf("probe-status %s: got %+v", c.payload, resp)
		}
	}
	resp := mustCall(t, p, "probe-status", "ttl0")
	if resp.TTL == nil || *resp.TTL != 0 {
		t.Errorf("a per-reply TTL of 0 must reach the host, got %v", resp.TTL)
	}
	// The Go SDK turns a status reserved for the host into an application
	// error that names the rule; a raw guest that sends one is bad output
	// (testdata/bad/badresp.wat, TestLoadAcceptsAndFailsAtCall).
	resp = mustCall(t, p, "probe-status", "reserved")
	if !resp.AppError || !strings.Contains(resp.Message, "reserved for the host") {
		t.Errorf("status 408 from a Go handler: want an application error naming the rule, got %+v", resp)
	}
}

// A command that declares content types refuses others with 415, naming
// the property, without running the guest.
func TestContentTypeRefused(t *testing.T) {
	p := load(t, "probe", PluginConfig{})
	resp, err := p.Invoke(context.Background(), &abi.Request{Command: "probe-request", ContentType: "image/png"})
	if err != nil || resp.Code() != abi.StatusUnsupportedType || resp.PropName != "Content Type" || resp.PropValue != "image/png" {
		t.Fatalf("got %+v, %v; want 415 naming the content type", resp, err)
	}
	if st := p.Stats(); st.Calls != 0 {
		t.Fatalf("the guest must not run: %+v", st)
	}
	if resp := mustCall(t, p, "probe-request", ""); resp.Code() != abi.StatusOK {
		t.Fatalf("text/plain is accepted: %+v", resp)
	}
}

func TestUnknownCommand(t *testing.T) {
	p := load(t, "echo", PluginConfig{})
	_, err := call(t, p, context.Background(), "nope", "")
	if KindOf(err) != KindUnknownCommand || !errors.Is(err, KindUnknownCommand) {
		t.Fatalf("want unknown command, got %v", err)
	}
}

func TestGuestLogsReachHostLog(t *testing.T) {
	p := load(t, "probe", PluginConfig{})
	mustCall(t, p, "probe-log", "marker-51")
	for _, want := range []string{"probe says marker-51", "probe stderr marker-51"} {
		if !logBuf.Contains(want) {
			t.Errorf("host log lacks %q", want)
		}
	}
	if !logBuf.Contains("plugin=probe source=guest") || !logBuf.Contains("plugin=probe source=stderr") {
		t.Errorf("guest log lines are not tagged with the plugin")
	}
}

// Guests get the real clocks and crypto random, not wazero's fakes (a wall
// clock stuck in 2022, instant sleeps, the same random bytes everywhere).
func TestRealClocksAndRandom(t *testing.T) {
	p := load(t, "probe", PluginConfig{PoolSize: 2})
	before := time.Now()
	f := strings.Fields(string(mustCall(t, p, "probe-time", "").Payload))
	var start, slept time.Duration
	if len(f) != 2 || json.Unmarshal([]byte(f[0]), (*int64)(&start)) != nil || json.Unmarshal([]byte(f[1]), (*int64)(&slept)) != nil {
		t.Fatalf("probe-time reply %q", f)
	}
	if skew := time.Unix(0, int64(start)).Sub(before); skew < -time.Second || skew > 5*time.Second {
		t.Errorf("guest wall clock is %v off the host's", skew)
	}
	if slept < 20*time.Millisecond {
		t.Errorf("guest sleep of 20 ms lasted %v: sleep is fake", slept)
	}
	// Calls on one instance, and the first call of a fresh instance, all differ.
	seen := map[string]bool{}
	for range 4 {
		seen[string(mustCall(t, p, "probe-rand", "").Payload)] = true
	}
	p.ReleaseIdle()
	seen[string(mustCall(t, p, "probe-rand", "").Payload)] = true
	if len(seen) != 5 {
		t.Errorf("random bytes repeat across calls and instances: %v", seen)
	}
}

func TestConfigValues(t *testing.T) {
	p := load(t, "probe", PluginConfig{Config: map[string]string{"greeting": strings.Repeat("hi", 300)}})
	if got := string(mustCall(t, p, "probe-config", "greeting").Payload); got != strings.Repeat("hi", 300) {
		t.Errorf("config value (600 bytes, larger than the SDK's first buffer): got %d bytes", len(got))
	}
	if resp := mustCall(t, p, "probe-config", "absent"); !resp.AppError {
		t.Errorf("an absent key must read as absent, got %+v", resp)
	}
}

// Every test plugin (testdata/plugins/*.wasm but the deliberately broken
// bad-*) loads and serves a command named after itself.
func TestAllPluginsLoad(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	paths, err := filepath.Glob(filepath.Join(pluginDir, "*.wasm"))
	if err != nil || len(paths) < 11 {
		t.Fatalf("test plugins: %v %v (run `make plugins`)", paths, err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".wasm")
		if strings.HasPrefix(name, "bad-") {
			continue
		}
		p := load(t, name, PluginConfig{PoolSize: 1})
		if p.Description().Command(name) == nil && name != "probe" {
			t.Errorf("%s does not serve a command named %s: %+v", name, name, p.Description())
		}
	}
}

func TestLatencyPercentiles(t *testing.T) {
	var w latencyWindow
	if p50, p99 := w.percentiles(); p50 != 0 || p99 != 0 {
		t.Fatal("an empty window reports zeros")
	}
	for i := 1; i <= 2000; i++ { // the ring keeps the last 1024: 977..2000
		w.record(time.Duration(i))
	}
	if p50, p99 := w.percentiles(); p50 != 1489 || p99 != 1990 {
		t.Fatalf("p50 %d p99 %d", p50, p99)
	}
	p := load(t, "echo", PluginConfig{})
	mustCall(t, p, "echo", "x")
	if st := p.Stats(); st.P50 <= 0 || st.P99 < st.P50 {
		t.Fatalf("stats after a call: %+v", st)
	}
}
