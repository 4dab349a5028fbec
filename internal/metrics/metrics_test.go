package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/rpc/rpctest"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// scrape returns the text format lines of h's /metrics.
func scrape(t *testing.T, h http.Handler) map[string]bool {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("content type %q, want the text format", ct)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(rec.Body.String(), "\n") {
		lines[l] = true
	}
	return lines
}

func expect(t *testing.T, lines map[string]bool, want ...string) {
	t.Helper()
	for _, w := range want {
		if !lines[w] {
			t.Errorf("missing line %q", w)
		}
	}
	if t.Failed() {
		var got []string
		for l := range lines {
			if strings.HasPrefix(l, "cmdhost_") {
				got = append(got, l)
			}
		}
		t.Logf("cmdhost lines:\n%s", strings.Join(got, "\n"))
	}
}

func absent(t *testing.T, lines map[string]bool, prefix string) {
	t.Helper()
	for l := range lines {
		if strings.HasPrefix(l, prefix) {
			t.Errorf("unexpected line %q", l)
		}
	}
}

// value returns the value of the sample line named name (labels included).
func value(t *testing.T, lines map[string]bool, name string) float64 {
	t.Helper()
	for l := range lines {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return f
		}
	}
	t.Fatalf("no sample %s", name)
	return 0
}

func TestObserverAndSources(t *testing.T) {
	c := New(Sources{
		DedupLen: func() int { return 3 },
		Dedup:    func() cache.DedupStats { return cache.DedupStats{Bytes: 4096, Digested: 2} },
		Reuse: func() cache.ReuseStats {
			return cache.ReuseStats{Hits: 5, Misses: 7, Evictions: 2, Rejections: 1, CostUsed: 1234, Entries: 4, SharedHits: 4, SharedErrors: 6, SharedOverBudget: 3}
		},
		Broker: func() broker.Stats {
			return broker.Stats{ClientsRefused: 11, ClientsDropped: 12, MessagesDropped: 13, PacketsTooLarge: 14, HeldBytes: 4096}
		},
		GuestMemory: func() wasm.GuestMemoryStats {
			return wasm.GuestMemoryStats{Limit: 1 << 30, Reserved: 5 << 20, Refusals: 15}
		},
		Plugins: func() []plugins.PluginStatus {
			return []plugins.PluginStatus{
				{Name: "echo", State: plugins.StateServing, Instances: 2, Reloads: 1, Calls: 40, MountRefusals: 9,
					Fuel: wasm.FuelStats{Calls: 40, Sum: 123456, Buckets: [len(wasm.FuelBuckets)]int64{0, 30, 40, 40, 40, 40, 40, 40, 40}}},
				{Name: "broken", State: plugins.StateFailed, LoadFailures: 3},
			}
		},
	})
	var obs rpc.Observer = c
	obs.Request("echo", 200, true, 300*time.Microsecond)
	obs.Request("echo", 200, true, 3*time.Millisecond)
	obs.Request("echo", 0, false, 40*time.Second)
	obs.Request("slow", 408, true, 2*time.Second)
	var sink events.Sink = c
	sink.Emit(events.Event{Kind: events.KindTimeout, Command: "slow", Type: events.TypeExecution, Policy: events.PolicyFail})
	sink.Emit(events.Event{Kind: events.KindTimeout, Command: "slow", Type: events.TypeQueue, Policy: events.PolicyNone})
	sink.Emit(events.Event{Kind: events.KindTimeout, Command: "slow", Type: events.TypeQueue, Policy: events.PolicyNone})
	sink.Emit(events.Event{Kind: events.KindTimeout, Command: "fan", Type: events.TypeSync, Policy: events.PolicyProceedWithAvailable})
	sink.Emit(events.Event{Kind: events.KindBudgetWarning, Command: "slow", Type: events.TypeExecution})

	lines := scrape(t, c.Handler())
	expect(t, lines,
		"# TYPE cmdhost_requests_total counter",
		`cmdhost_requests_total{command="echo",status="200"} 2`,
		`cmdhost_requests_total{command="echo",status="none"} 1`,
		`cmdhost_requests_total{command="slow",status="408"} 1`,
		"# TYPE cmdhost_request_duration_seconds histogram",
		`cmdhost_request_duration_seconds_bucket{command="echo",le="0.0005"} 1`,
		`cmdhost_request_duration_seconds_bucket{command="echo",le="0.0025"} 1`,
		`cmdhost_request_duration_seconds_bucket{command="echo",le="0.005"} 2`,
		`cmdhost_request_duration_seconds_bucket{command="echo",le="30"} 2`,
		`cmdhost_request_duration_seconds_bucket{command="echo",le="+Inf"} 3`,
		`cmdhost_request_duration_seconds_count{command="echo"} 3`,
		`cmdhost_request_duration_seconds_sum{command="echo"} 40.0033`,
		`cmdhost_request_duration_seconds_bucket{command="slow",le="1"} 0`,
		`cmdhost_request_duration_seconds_bucket{command="slow",le="2.5"} 1`,
		`cmdhost_timeouts_total{command="slow",policy="fail",type="execution"} 1`,
		`cmdhost_timeouts_total{command="slow",policy="none",type="queue"} 2`,
		`cmdhost_timeouts_total{command="fan",policy="proceed_with_available",type="sync"} 1`,
		`cmdhost_budget_warnings_total{command="slow",type="execution"} 1`,
		"# TYPE cmdhost_dedup_entries gauge",
		"cmdhost_dedup_entries 3",
		"# TYPE cmdhost_dedup_bytes gauge",
		"cmdhost_dedup_bytes 4096",
		"# TYPE cmdhost_dedup_digests_total counter",
		"cmdhost_dedup_digests_total 2",
		"# TYPE cmdhost_reuse_hits_total counter",
		"cmdhost_reuse_hits_total 5",
		"cmdhost_reuse_misses_total 7",
		"cmdhost_reuse_evictions_total 2",
		"# TYPE cmdhost_reuse_cost_bytes gauge",
		"cmdhost_reuse_cost_bytes 1234",
		"cmdhost_reuse_shared_hits_total 4",
		"cmdhost_reuse_shared_errors_total 6",
		"cmdhost_reuse_shared_over_budget_total 3",
		"# TYPE cmdhost_plugin_instances gauge",
		`cmdhost_plugin_instances{plugin="echo"} 2`,
		`cmdhost_plugin_instances{plugin="broken"} 0`,
		"# TYPE cmdhost_plugin_reloads_total counter",
		`cmdhost_plugin_reloads_total{plugin="echo"} 1`,
		`cmdhost_plugin_reloads_total{plugin="broken"} 0`,
		`cmdhost_plugin_load_failures_total{plugin="echo"} 0`,
		`cmdhost_plugin_load_failures_total{plugin="broken"} 3`,
		`cmdhost_plugin_calls_total{plugin="echo"} 40`,
		`cmdhost_plugin_calls_total{plugin="broken"} 0`,
		`cmdhost_plugin_mount_refusals_total{plugin="echo"} 9`,
		"# TYPE cmdhost_plugin_fuel_units histogram",
		`cmdhost_plugin_fuel_units_bucket{plugin="echo",le="10000"} 30`,
		`cmdhost_plugin_fuel_units_bucket{plugin="echo",le="+Inf"} 40`,
		`cmdhost_plugin_fuel_units_sum{plugin="echo"} 123456`,
		"# TYPE cmdhost_broker_clients_refused_total counter",
		"cmdhost_broker_clients_refused_total 11",
		"cmdhost_broker_clients_dropped_total 12",
		"cmdhost_broker_messages_dropped_total 13",
		"cmdhost_broker_packets_too_large_total 14",
		"# TYPE cmdhost_broker_held_bytes gauge",
		"cmdhost_broker_held_bytes 4096",
		"# TYPE cmdhost_guest_memory_limit_bytes gauge",
		"cmdhost_guest_memory_limit_bytes 1.073741824e+09",
		"cmdhost_guest_memory_reserved_bytes 5.24288e+06",
		"cmdhost_guest_memory_refusals_total 15",
	)
	absent(t, lines, `cmdhost_timeouts_total{command="slow",policy="none",type="expiry"}`)
	absent(t, lines, `cmdhost_requests_total{command="slow",status="none"}`)
	if !lines["# TYPE go_goroutines gauge"] {
		t.Error("the Go collector is missing")
	}
}

// Without sources nor an executor the scrape-time metrics read zero and no
// plugin series exist.
func TestNoSources(t *testing.T) {
	c := New(Sources{})
	lines := scrape(t, c.Handler())
	expect(t, lines,
		"cmdhost_dedup_entries 0",
		"cmdhost_dedup_bytes 0",
		"cmdhost_reuse_hits_total 0",
		"cmdhost_reuse_misses_total 0",
		"cmdhost_reuse_evictions_total 0",
		"cmdhost_reuse_cost_bytes 0",
		"cmdhost_reuse_shared_hits_total 0",
		"cmdhost_broker_clients_dropped_total 0",
		"cmdhost_guest_memory_reserved_bytes 0",
	)
	absent(t, lines, "cmdhost_plugin_")
	absent(t, lines, "cmdhost_requests_total{")
}

func TestListen(t *testing.T) {
	c := New(Sources{DedupLen: func() int { return 9 }})
	var notReady atomic.Pointer[error]
	s, err := c.Listen("127.0.0.1:0", func() error {
		if p := notReady.Load(); p != nil {
			return *p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "\ncmdhost_dedup_entries 9\n") {
		t.Fatalf("GET %s: %d\n%s", s.URL(), resp.StatusCode, body)
	}
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + s.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get("/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz, ready: %d %q", code, body)
	}
	reason := errors.New("not connected and subscribed to the broker")
	notReady.Store(&reason)
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "not ready: not connected and subscribed") {
		t.Errorf("/readyz, not ready: %d %q", code, body)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz while not ready: %d, want 200 (the process lives)", code)
	}
	if resp, err := http.Get("http://" + s.Addr() + "/other"); err != nil || resp.StatusCode != 404 {
		t.Errorf("GET /other: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(s.URL()); err == nil {
		t.Error("still serving after Close")
	}
	if _, err := c.Listen("127.0.0.1:-1", nil); err == nil {
		t.Error("a bad address is an error")
	}
}

// request builds a valid request of the protocol to topic.
func request(topic string, corr byte, expiry uint32, responseTopic string) *packets.Publish {
	return &packets.Publish{
		QoS: 1, Topic: topic, Payload: []byte("hello"),
		Properties: &packets.Properties{
			CorrelationData: []byte{corr, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
			ResponseTopic:   responseTopic,
			MessageExpiry:   &expiry,
			ContentType:     "text/plain",
			User:            []packets.User{{Key: "__protVer", Value: "1.0"}, {Key: "__srcId", Value: "inv-1"}},
		},
	}
}

func status(p *packets.Publish) string {
	for _, u := range p.Properties.User {
		if u.Key == "__stat" {
			return u.Value
		}
	}
	return ""
}

// The collector as the Observer of a real executor (fake broker): the
// hooks report first receipts, not duplicates, and each kind of timeout.
func TestExecutorEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	blocked := func(ctx context.Context, _ *abi.Request) (*abi.Response, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	var exec *rpc.Executor // read at scrape time, set before the first scrape
	c := New(Sources{DedupLen: func() int { return exec.DedupLen() }, Reuse: func() cache.ReuseStats { return exec.ReuseStats() }})
	broker := rpctest.NewBroker()
	u, _ := url.Parse("mqtt://fake:1883")
	var err error
	exec, err = rpc.NewExecutor(rpc.Config{
		ExecutorID: "exec-1", Session: session.Config{Broker: u, Dial: broker.Dial, ReconnectDelay: 10 * time.Millisecond}, Observer: c, Events: c,
	}, []rpc.Command{
		{Name: "echo", Topic: rpc.DefaultTopic, Idempotent: true, ResponseTTL: time.Minute,
			Handler: func(_ context.Context, req *abi.Request) (*abi.Response, error) {
				return &abi.Response{Payload: req.Payload, ContentType: req.ContentType}, nil
			}},
		{Name: "slow", Topic: rpc.DefaultTopic, Timeout: 50 * time.Millisecond, Handler: blocked},
		{Name: "stuck", Topic: rpc.DefaultTopic, Concurrency: 1, Handler: blocked},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		_ = exec.Stop(sctx)
		_ = broker.Close()
	})

	roundTrip := func(p *packets.Publish, n int, want string) {
		t.Helper()
		if _, err := broker.Deliver(p); err != nil {
			t.Fatal(err)
		}
		pubs, err := broker.WaitPublished(ctx, n)
		if err != nil {
			t.Fatalf("response %d: %v", n, err)
		}
		if got := status(pubs[n-1]); got != want {
			t.Fatalf("response %d: status %s, want %s", n, got, want)
		}
	}
	roundTrip(request("rpc/exec-1/echo", 1, 10, "resp/1"), 1, "200") // reuse miss
	roundTrip(request("rpc/exec-1/echo", 2, 10, "resp/2"), 2, "200") // equivalent: reuse hit
	roundTrip(request("rpc/exec-1/echo", 1, 10, "resp/1"), 3, "200") // duplicate: not counted
	roundTrip(request("rpc/exec-1/slow", 3, 10, "resp/3"), 4, "408")
	for _, p := range []*packets.Publish{
		request("rpc/exec-1/echo", 4, 10, ""),       // no response topic: no reply
		request("rpc/exec-1/stuck", 5, 2, "resp/5"), // cut by its expiry after 2 s
		request("rpc/exec-1/stuck", 6, 1, "resp/6"), // expires after 1 s, queued behind 5
	} {
		if _, err := broker.Deliver(p); err != nil {
			t.Fatal(err)
		}
	}
	// Requests are acked after they are reported, and in receipt order.
	if _, err := broker.WaitAcks(ctx, 7); err != nil {
		t.Fatal(err)
	}

	lines := scrape(t, c.Handler())
	expect(t, lines,
		`cmdhost_requests_total{command="echo",status="200"} 2`,
		`cmdhost_requests_total{command="echo",status="none"} 1`,
		`cmdhost_requests_total{command="slow",status="408"} 1`,
		`cmdhost_requests_total{command="stuck",status="none"} 2`,
		`cmdhost_request_duration_seconds_count{command="echo"} 3`,
		`cmdhost_request_duration_seconds_count{command="slow"} 1`,
		`cmdhost_request_duration_seconds_count{command="stuck"} 2`,
		`cmdhost_request_duration_seconds_bucket{command="slow",le="0.025"} 0`,
		`cmdhost_request_duration_seconds_bucket{command="slow",le="1"} 1`,
		`cmdhost_timeouts_total{command="slow",policy="fail",type="execution"} 1`,
		`cmdhost_timeouts_total{command="stuck",policy="none",type="expiry"} 1`,
		`cmdhost_timeouts_total{command="stuck",policy="none",type="queue"} 1`,
		// 1, 2 and 3 (slow): the one without a response topic is not
		// deduplicated, 5 and 6 completed past their expiry are not kept.
		"cmdhost_dedup_entries 3",
		"cmdhost_reuse_hits_total 1",
		"cmdhost_reuse_misses_total 1",
		"cmdhost_reuse_evictions_total 0",
	)
	absent(t, lines, `cmdhost_timeouts_total{command="echo"`)
	if v := value(t, lines, "cmdhost_reuse_cost_bytes"); v <= 0 {
		t.Errorf("cmdhost_reuse_cost_bytes %v, want the cached reply's bytes", v)
	}
}
