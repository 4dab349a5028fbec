package rpc

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/rpc/rpctest"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

type harness struct {
	t      *testing.T
	broker *rpctest.Broker
	exec   *Executor
	clock  *testkit.Clock
}

func echoHandler(_ context.Context, req *abi.Request) (*abi.Response, error) {
	return &abi.Response{Payload: req.Payload, ContentType: req.ContentType, Metadata: req.Metadata}, nil
}

// start runs an executor with cmds against a fake broker and a clock
// frozen at a fixed time.
func start(t *testing.T, cfg Config, cmds ...Command) *harness {
	t.Helper()
	return startOn(t, rpctest.NewBroker(), cfg, cmds...)
}

// startOn is start against broker b, set up as the test needs.
func startOn(t *testing.T, b *rpctest.Broker, cfg Config, cmds ...Command) *harness {
	t.Helper()
	h := &harness{t: t, broker: b, clock: testkit.NewClock(time.Unix(1_800_000_000, 0))}
	if cfg.ExecutorID == "" {
		cfg.ExecutorID = "exec-1"
	}
	cfg.Session.Broker, _ = url.Parse("mqtt://fake:1883")
	cfg.Session.Dial = h.broker.Dial
	cfg.Clock = h.clock
	cfg.Session.ReconnectDelay = 10 * time.Millisecond
	for i := range cmds {
		if cmds[i].Topic == "" {
			cmds[i].Topic = DefaultTopic
		}
	}
	exec, err := NewExecutor(cfg, cmds)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := exec.Start(ctx); err != nil {
		t.Fatal(err)
	}
	h.exec = exec
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = exec.Stop(ctx)
		_ = h.broker.Close()
	})
	return h
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// req builds a valid request to topic; mods adjust it.
func req(topic string, corr byte, mods ...func(*packets.Publish)) *packets.Publish {
	exp := uint32(10)
	p := &packets.Publish{
		QoS: 1, Topic: topic, Payload: []byte("hello"),
		Properties: &packets.Properties{
			CorrelationData: []byte{corr, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
			ResponseTopic:   "resp/" + topic,
			MessageExpiry:   &exp,
			ContentType:     "text/plain",
			User:            []packets.User{{Key: "__protVer", Value: "1.0"}, {Key: "__srcId", Value: "inv-1"}},
		},
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func user(p *packets.Publish, key string) (string, bool) {
	for _, u := range p.Properties.User {
		if u.Key == key {
			return u.Value, true
		}
	}
	return "", false
}

// roundTrip delivers p and returns the n-th response published (1-based
// count of all responses so far).
func (h *harness) roundTrip(p *packets.Publish, n int) *packets.Publish {
	h.t.Helper()
	if _, err := h.broker.Deliver(p); err != nil {
		h.t.Fatal(err)
	}
	pubs, err := h.broker.WaitPublished(ctx(h.t), n)
	if err != nil {
		h.t.Fatalf("waiting for response %d: %v", n, err)
	}
	return pubs[n-1]
}

func TestEchoRequest(t *testing.T) {
	h := start(t, Config{}, Command{Name: "echo", Handler: echoHandler})
	if err := h.broker.WaitSubscribed(ctx(t), "rpc/exec-1/echo"); err != nil {
		t.Fatal(err)
	}
	resp := h.roundTrip(req("rpc/exec-1/echo", 1, func(p *packets.Publish) {
		p.Properties.User = append(p.Properties.User, packets.User{Key: "color", Value: "red"})
	}), 1)
	if string(resp.Payload) != "hello" || resp.Topic != "resp/rpc/exec-1/echo" || resp.Properties.ContentType != "text/plain" {
		t.Fatalf("response %+v", resp)
	}
	for k, want := range map[string]string{"__stat": "200", "__protVer": "1.0", "__srcId": "exec-1", "color": "red"} {
		if got, _ := user(resp, k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if ts, ok := user(resp, "__ts"); !ok {
		t.Error("no __ts")
	} else if _, err := hlc.Parse(ts); err != nil {
		t.Errorf("__ts %q: %v", ts, err)
	}
	if string(resp.Properties.CorrelationData) != string(req("", 1).Properties.CorrelationData) {
		t.Error("correlation data not copied")
	}
	// Frozen clock: the whole 10 s of the request's expiry remain.
	if resp.Properties.MessageExpiry == nil || *resp.Properties.MessageExpiry != 10 {
		t.Errorf("response expiry %v, want the 10 s remaining", resp.Properties.MessageExpiry)
	}
	if _, err := h.broker.WaitAcks(ctx(t), 1); err != nil {
		t.Fatal(err)
	}
}

// Header rules of PROTOCOL.md "Request", each with its status.
func TestHeaderRules(t *testing.T) {
	cases := []struct {
		name     string
		mod      func(*packets.Publish)
		status   string
		propName string
		propVal  string
	}{
		{"no correlation data", func(p *packets.Publish) { p.Properties.CorrelationData = nil }, "400", "Correlation Data", ""},
		{"5-byte correlation data", func(p *packets.Publish) { p.Properties.CorrelationData = []byte("short") }, "400", "Correlation Data", "short"},
		{"no expiry", func(p *packets.Publish) { p.Properties.MessageExpiry = nil }, "400", "Message Expiry", ""},
		{"protocol 2.0", func(p *packets.Publish) { p.Properties.User[0].Value = "2.0" }, "505", "", ""},
		{"unparsable protocol", func(p *packets.Publish) { p.Properties.User[0].Value = "one" }, "505", "", ""},
		{"bad timestamp", func(p *packets.Publish) {
			p.Properties.User = append(p.Properties.User, packets.User{Key: "__ts", Value: "NotValid"})
		}, "400", "__ts", "NotValid"},
		{"format indicator 2", func(p *packets.Publish) { f := byte(2); p.Properties.PayloadFormat = &f }, "415", "Payload Format Indicator", "2"},
		{"clock drift", func(p *packets.Publish) {
			far := hlc.Timestamp{Millis: time.Unix(1_800_000_000, 0).Add(time.Hour).UnixMilli(), NodeID: "inv"}
			p.Properties.User = append(p.Properties.User, packets.User{Key: "__ts", Value: far.String()})
		}, "503", "MaxClockDrift", ""},
		{"no protocol version is 1.0", func(p *packets.Publish) { p.Properties.User = p.Properties.User[1:] }, "200", "", ""},
		{"no content type", func(p *packets.Publish) { p.Properties.ContentType = "" }, "200", "", ""},
	}
	var ran atomic.Int64
	h := start(t, Config{}, Command{Name: "echo", Handler: func(ctx context.Context, r *abi.Request) (*abi.Response, error) {
		ran.Add(1)
		return echoHandler(ctx, r)
	}})
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			resp := h.roundTrip(req("rpc/exec-1/echo", byte(i), c.mod), i+1)
			if got, _ := user(resp, "__stat"); got != c.status {
				t.Fatalf("__stat %q, want %s", got, c.status)
			}
			name, hasName := user(resp, "__propName")
			if name != c.propName || hasName != (c.propName != "") {
				t.Errorf("__propName %q, want %q", name, c.propName)
			}
			if val, _ := user(resp, "__propVal"); val != c.propVal {
				t.Errorf("__propVal %q, want %q", val, c.propVal)
			}
			if c.status == "505" {
				sup, _ := user(resp, "__supProtMajVer")
				reqVer, _ := user(resp, "__requestProtVer")
				if sup != "1" || reqVer == "" {
					t.Errorf("505 needs __supProtMajVer=1 and __requestProtVer, got %q %q", sup, reqVer)
				}
			}
			if _, isAppErr := user(resp, "__apErr"); isAppErr {
				t.Error("a header error is not an application error")
			}
		})
	}
	if got := ran.Load(); got != 2 {
		t.Errorf("the handler ran %d times; only the two good requests may run", got)
	}
	if _, err := h.broker.WaitAcks(ctx(t), len(cases)); err != nil {
		t.Fatalf("every request is acked: %v", err)
	}
}

// No response topic, or an invalid one: acked, nothing published.
func TestNoResponseTopic(t *testing.T) {
	h := start(t, Config{}, Command{Name: "echo", Handler: echoHandler})
	for i, topic := range []string{"", "resp/+/x"} {
		p := req("rpc/exec-1/echo", byte(i), func(p *packets.Publish) { p.Properties.ResponseTopic = topic })
		if _, err := h.broker.Deliver(p); err != nil {
			t.Fatal(err)
		}
	}
	// A third, good request proves the first two were passed over.
	h.roundTrip(req("rpc/exec-1/echo", 9), 1)
	if _, err := h.broker.WaitAcks(ctx(t), 3); err != nil {
		t.Fatal(err)
	}
	if n := len(h.broker.Published()); n != 1 {
		t.Fatalf("%d responses, want only the good request's", n)
	}
}

func TestApplicationErrorAndHostFault(t *testing.T) {
	h := start(t, Config{},
		Command{Name: "fail", Handler: func(context.Context, *abi.Request) (*abi.Response, error) {
			return &abi.Response{Status: abi.StatusInternalError, AppError: true, Message: "it broke"}, nil
		}},
		Command{Name: "fault", Handler: func(context.Context, *abi.Request) (*abi.Response, error) {
			return nil, errors.New("trap in the guest")
		}},
		Command{Name: "busy", Handler: func(context.Context, *abi.Request) (*abi.Response, error) {
			return nil, &StatusError{Status: abi.StatusServiceUnavailable, Message: "reloading"}
		}},
	)
	resp := h.roundTrip(req("rpc/exec-1/fail", 1), 1)
	if s, _ := user(resp, "__stat"); s != "500" {
		t.Fatalf("fail: __stat %s", s)
	}
	if a, _ := user(resp, "__apErr"); a != "true" {
		t.Error("an application error carries __apErr=true")
	}
	if m, _ := user(resp, "__stMsg"); m != "it broke" {
		t.Errorf("__stMsg %q", m)
	}
	resp = h.roundTrip(req("rpc/exec-1/fault", 2), 2)
	if s, _ := user(resp, "__stat"); s != "500" {
		t.Fatalf("fault: __stat %s", s)
	}
	if _, a := user(resp, "__apErr"); a {
		t.Error("a host fault is not an application error")
	}
	resp = h.roundTrip(req("rpc/exec-1/busy", 3), 3)
	if s, _ := user(resp, "__stat"); s != "503" {
		t.Fatalf("busy: __stat %s", s)
	}
}

// Execution timeout → 408 with ExecutionTimeout and an ISO 8601 duration;
// the late result is dropped. Expiry shorter than the timeout → nothing.
func TestTimeouts(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	stall := func(ctx context.Context, _ *abi.Request) (*abi.Response, error) {
		<-release // ignores ctx, like a handler that will not stop
		return &abi.Response{Payload: []byte("late")}, nil
	}
	h := start(t, Config{}, Command{Name: "stall", Timeout: 200 * time.Millisecond, Handler: stall},
		Command{Name: "long", Timeout: time.Hour, Handler: func(ctx context.Context, _ *abi.Request) (*abi.Response, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}})
	resp := h.roundTrip(req("rpc/exec-1/stall", 1), 1)
	for k, want := range map[string]string{"__stat": "408", "__propName": "ExecutionTimeout", "__propVal": "PT0.2S"} {
		if got, _ := user(resp, k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	// The request expires (1 s) long before the 1 h execution timeout:
	// no response, but an ack.
	one := uint32(1)
	if _, err := h.broker.Deliver(req("rpc/exec-1/long", 2, func(p *packets.Publish) { p.Properties.MessageExpiry = &one })); err != nil {
		t.Fatal(err)
	}
	if _, err := h.broker.WaitAcks(ctx(t), 2); err != nil {
		t.Fatal(err)
	}
	if n := len(h.broker.Published()); n != 1 {
		t.Fatalf("%d responses; an expired request gets none", n)
	}
}

// A duplicate (same correlation data and response topic) runs once and
// gets the same reply; another response topic is another request.
func TestDuplicateRunsOnce(t *testing.T) {
	var n atomic.Int64
	gate := make(chan struct{})
	h := start(t, Config{}, Command{Name: "counter", Handler: func(context.Context, *abi.Request) (*abi.Response, error) {
		<-gate
		return &abi.Response{Payload: []byte(strconv.FormatInt(n.Add(1), 10))}, nil
	}})
	first := req("rpc/exec-1/counter", 1)
	for range 2 { // the second arrives while the first runs
		if _, err := h.broker.Deliver(req("rpc/exec-1/counter", 1)); err != nil {
			t.Fatal(err)
		}
	}
	close(gate)
	pubs, err := h.broker.WaitPublished(ctx(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	h.clock.Add(5 * time.Second) // after completion, before expiry
	// A broker redelivering 5 s later decrements the expiry to 5 s.
	five := uint32(5)
	first.Properties.MessageExpiry = &five
	late := h.roundTrip(first, 3)
	other := h.roundTrip(req("rpc/exec-1/counter", 1, func(p *packets.Publish) { p.Properties.ResponseTopic = "resp/other" }), 4)
	for i, p := range []*packets.Publish{pubs[0], pubs[1], late} {
		if string(p.Payload) != "1" {
			t.Errorf("duplicate %d got %q, want the first execution's 1", i, p.Payload)
		}
	}
	if late.Properties.MessageExpiry == nil || *late.Properties.MessageExpiry != 5 {
		t.Errorf("a late duplicate's response carries its own remaining expiry 5, got %v", late.Properties.MessageExpiry)
	}
	if string(other.Payload) != "2" {
		t.Errorf("another response topic is another request: got %q", other.Payload)
	}
	if n.Load() != 2 {
		t.Errorf("executions %d, want 2", n.Load())
	}
}

// Requests that complete out of order are acked in receipt order.
func TestAcksInReceiptOrder(t *testing.T) {
	gate := make(chan struct{})
	h := start(t, Config{},
		Command{Name: "slow", Handler: func(context.Context, *abi.Request) (*abi.Response, error) {
			<-gate
			return &abi.Response{}, nil
		}},
		Command{Name: "fast", Handler: echoHandler})
	idSlow, _ := h.broker.Deliver(req("rpc/exec-1/slow", 1))
	idFast, _ := h.broker.Deliver(req("rpc/exec-1/fast", 2))
	if _, err := h.broker.WaitPublished(ctx(t), 1); err != nil {
		t.Fatal(err)
	}
	if acks := h.broker.Acks(); len(acks) != 0 {
		t.Fatalf("the fast request's ack must wait for the slow one's: acks %v", acks)
	}
	close(gate)
	acks, err := h.broker.WaitAcks(ctx(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	if acks[0] != idSlow || acks[1] != idFast {
		t.Fatalf("acks %v, want receipt order %d, %d", acks, idSlow, idFast)
	}
}

// A full queue answers 503 rather than dropping anything.
func TestFullQueue(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	h := start(t, Config{MaxPending: 1}, Command{Name: "slow", Concurrency: 1, Handler: func(context.Context, *abi.Request) (*abi.Response, error) {
		<-gate
		return &abi.Response{}, nil
	}})
	if _, err := h.broker.Deliver(req("rpc/exec-1/slow", 1)); err != nil {
		t.Fatal(err)
	}
	resp := h.roundTrip(req("rpc/exec-1/slow", 2), 1)
	if s, _ := user(resp, "__stat"); s != "503" {
		t.Fatalf("__stat %s, want 503 for a full queue", s)
	}
}

// Topic tokens left unresolved subscribe as "+" and reach the handler;
// the share group prefixes the filter.
func TestTopicTokensAndShare(t *testing.T) {
	var tokens map[string]string
	h := start(t, Config{ShareGroup: "g1"}, Command{Name: "dev", Topic: "devices/{deviceId}/{commandName}", Handler: func(_ context.Context, r *abi.Request) (*abi.Response, error) {
		tokens = r.TopicTokens
		return &abi.Response{}, nil
	}})
	if err := h.broker.WaitSubscribed(ctx(t), "$share/g1/devices/+/dev"); err != nil {
		t.Fatal(err)
	}
	h.roundTrip(req("devices/pump-7/dev", 1), 1)
	if tokens["deviceId"] != "pump-7" {
		t.Fatalf("tokens %v", tokens)
	}
}

func TestSubscribeRefused(t *testing.T) {
	b := rpctest.NewBroker()
	defer b.Close()
	b.FailNextSuback(0x87)
	u, _ := url.Parse("mqtt://fake:1883")
	exec, err := NewExecutor(Config{ExecutorID: "x", Session: session.Config{Broker: u, Dial: b.Dial}}, []Command{{Name: "echo", Topic: DefaultTopic, Handler: echoHandler}})
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Stop(context.Background())
	if err := exec.Start(ctx(t)); err == nil {
		t.Fatal("Start must fail when the broker refuses the subscription")
	}
}

// A duplicate arriving after the original request's expiry is dead on
// arrival: acked, not run, not answered, even when it carries a fresh
// expiry of its own.
func TestLateDuplicateDiscarded(t *testing.T) {
	var n atomic.Int64
	h := start(t, Config{}, Command{Name: "counter", Handler: func(context.Context, *abi.Request) (*abi.Response, error) {
		return &abi.Response{Payload: []byte(strconv.FormatInt(n.Add(1), 10))}, nil
	}})
	h.roundTrip(req("rpc/exec-1/counter", 1), 1)
	h.clock.Add(11 * time.Second) // the first request's 10 s are over
	if _, err := h.broker.Deliver(req("rpc/exec-1/counter", 1)); err != nil {
		t.Fatal(err)
	}
	// A new request afterwards proves the duplicate was passed over.
	if got := h.roundTrip(req("rpc/exec-1/counter", 2), 2); string(got.Payload) != "2" {
		t.Fatalf("the next request: %q", got.Payload)
	}
	if _, err := h.broker.WaitAcks(ctx(t), 3); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 2 || len(h.broker.Published()) != 2 {
		t.Fatalf("executions %d, responses %d; the late duplicate must get neither", n.Load(), len(h.broker.Published()))
	}
}

// Ready follows the connection: nil once connected and subscribed, an
// error while the broker is away, nil again once it is back, an error
// once Stop began.
func TestReadyFollowsTheConnection(t *testing.T) {
	h := start(t, Config{}, Command{Name: "echo", Handler: echoHandler})
	if err := h.exec.Ready(); err != nil {
		t.Fatalf("a started executor: %v", err)
	}
	until := func(what string, cond func(error) bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute) // hang guard
		for !cond(h.exec.Ready()) {
			if time.Now().After(deadline) {
				t.Fatalf("Ready never said %s: %v", what, h.exec.Ready())
			}
			time.Sleep(5 * time.Millisecond) // autopaho reports the loss from its own goroutine
		}
	}
	h.broker.RefuseConnections(true)
	h.broker.Disconnect()
	until("not connected", func(err error) bool { return err != nil && strings.Contains(err.Error(), "not connected") })
	h.broker.RefuseConnections(false)
	until("ready", func(err error) bool { return err == nil })
	_ = h.exec.Stop(context.Background())
	if err := h.exec.Ready(); err == nil || !strings.Contains(err.Error(), "stopping") {
		t.Errorf("after Stop: %v", err)
	}
}
