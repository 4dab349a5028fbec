package trigger_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/topic"
	"github.com/cmdhost/cmdhost/internal/trigger"
)

// filter parses a trigger's filter.
func filter(t *testing.T, s string) topic.Filter {
	t.Helper()
	f, err := topic.ParseFilter(s, true)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sink keeps the events it is given.
type sink struct {
	mu  sync.Mutex
	evs []events.Event
	got chan events.Event
}

func newSink() *sink { return &sink{got: make(chan events.Event, 100)} }

func (s *sink) Emit(ev events.Event) {
	s.mu.Lock()
	s.evs = append(s.evs, ev)
	s.mu.Unlock()
	select {
	case s.got <- ev:
	default:
	}
}

// observer keeps what it is told.
type observer struct {
	mu       sync.Mutex
	outcomes map[string]int
	failures map[string]int
}

func (o *observer) TriggerMessage(trigger, outcome string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.outcomes == nil {
		o.outcomes = map[string]int{}
	}
	o.outcomes[trigger+"/"+outcome]++
}

func (o *observer) TriggerFailure(trigger, reason string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.failures == nil {
		o.failures = map[string]int{}
	}
	o.failures[trigger+"/"+reason]++
}

// start makes and starts a receiver on u serving ts, stopped when the
// test ends.
func start(t *testing.T, u *url.URL, cfg trigger.Config, ts ...trigger.Trigger) *trigger.Receiver {
	t.Helper()
	if cfg.ExecutorID == "" {
		cfg.ExecutorID = "host-1"
	}
	if cfg.Session.ClientID == "" {
		cfg.Session.ClientID = "host-1-triggers"
	}
	cfg.Session.Broker = u
	r, err := trigger.NewReceiver(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience())
	defer cancel()
	if err := r.SetTriggers(ctx, ts); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r.Stop(sctx)
	})
	return r
}

// untilHandled publishes p (again, each time round) until handled reports
// it: nothing tells when the receiver's subscription is made.
func untilHandled(t *testing.T, pub *testkit.Client, p *paho.Publish, handled <-chan *abi.Request) *abi.Request {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(testkit.Patience())
	for {
		pub.Publish(t, p)
		select {
		case req := <-handled:
			return req
		case <-tick.C:
		case <-deadline:
			t.Fatalf("no message on %s handled", p.Topic)
		}
	}
}

// A trigger runs for each message on its filter with the message's
// topic, tokens, payload, content type, __srcId, correlation data and
// user properties (CloudEvents attributes included, the protocol's not);
// messages on other topics never reach it; a message of an unsupported
// protocol version, a bad __ts or another content type is dropped unrun;
// once the trigger is no longer served its messages are not handled.
func TestTriggerRuns(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		got := make(chan *abi.Request, 100)
		obs := &observer{}
		temp := trigger.Trigger{Name: "on-temp", Plugin: "p", Filter: filter(t, "sensors/{device}/temp"), Topic: filter(t, "sensors/+/temp"),
			ContentTypes: []string{"application/json"},
			Handler: func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
				got <- req
				return nil, nil
			}}
		r := start(t, u, trigger.Config{Observer: obs}, temp)
		pub := testkit.Dial(t, u, "sensor-1")
		corr := []byte("0123456789abcdef")
		msg := &paho.Publish{QoS: 1, Topic: "sensors/d1/temp", Payload: []byte(`{"c":21.5}`), Properties: &paho.PublishProperties{
			ContentType: "application/json", CorrelationData: corr,
			User: paho.UserProperties{{Key: "__protVer", Value: "1.0"}, {Key: "__srcId", Value: "sensor-1"}, {Key: "__ts", Value: "000000000000001:00000:sensor-1"},
				{Key: "specversion", Value: "1.0"}, {Key: "type", Value: "reading"}, {Key: "source", Value: "/s/1"}, {Key: "site", Value: "north"},
				{Key: "__other", Value: "x"}}}}
		req := untilHandled(t, pub, msg, got)
		want := map[string]string{"specversion": "1.0", "type": "reading", "source": "/s/1", "site": "north"}
		if req.Command != "on-temp" || req.Topic != "sensors/d1/temp" || req.TopicTokens["device"] != "d1" || string(req.Payload) != `{"c":21.5}` ||
			req.ContentType != "application/json" || req.InvokerID != "sensor-1" || string(req.CorrelationID) != string(corr) ||
			req.ExecutorID != "host-1" || req.Attempt != 1 || req.Deadline.IsZero() || fmt.Sprint(req.Metadata) != fmt.Sprint(want) {
			t.Errorf("the handler got %+v", req)
		}
		for len(got) > 0 { // the copies sent before the subscription was made
			<-got
		}

		// Dropped before running: each is counted, the handler never sees
		// one. The last message, a good one, comes after them all.
		bad := []*paho.Publish{
			{QoS: 1, Topic: "sensors/d2/temp", Properties: &paho.PublishProperties{ContentType: "application/json",
				User: paho.UserProperties{{Key: "__protVer", Value: "2.0"}}}},
			{QoS: 1, Topic: "sensors/d2/temp", Properties: &paho.PublishProperties{ContentType: "application/json",
				User: paho.UserProperties{{Key: "__ts", Value: "not a clock"}}}},
			{QoS: 1, Topic: "sensors/d2/temp", Properties: &paho.PublishProperties{ContentType: "text/plain"}},
			{QoS: 1, Topic: "sensors/d2/hum", Properties: &paho.PublishProperties{ContentType: "application/json"}},
		}
		before := r.Counters("on-temp")
		for _, p := range bad {
			pub.Publish(t, p)
		}
		pub.Publish(t, &paho.Publish{QoS: 1, Topic: "sensors/d3/temp", Properties: &paho.PublishProperties{ContentType: "application/json"}})
		if req := <-got; req.Topic != "sensors/d3/temp" {
			t.Fatalf("handled %s: a message that should have been dropped", req.Topic)
		}
		testkit.WaitFor(t, "the drops counted", func() bool { return r.Counters("on-temp").Dropped-before.Dropped == 3 })
		if c := r.Counters("on-temp"); c.Handled-before.Handled != 1 || c.Failures != 0 {
			t.Errorf("counters %+v (before %+v)", c, before)
		}

		// Unsubscribed: a message on its topic is no longer handled (a
		// marker on a second trigger says when to look).
		marker := trigger.Trigger{Name: "marker", Filter: filter(t, "marker"), Topic: filter(t, "marker"),
			Handler: func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
				got <- req
				return nil, nil
			}}
		ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience())
		defer cancel()
		if err := r.SetTriggers(ctx, []trigger.Trigger{marker}); err != nil {
			t.Fatal(err)
		}
		if f := r.Filters(); !slices.Equal(f, []string{"marker"}) {
			t.Fatalf("filters %v", f)
		}
		pub.Publish(t, &paho.Publish{QoS: 1, Topic: "sensors/d4/temp", Properties: &paho.PublishProperties{ContentType: "application/json"}})
		untilHandled(t, pub, &paho.Publish{QoS: 1, Topic: "marker"}, got)
		for len(got) > 0 {
			if req := <-got; req.Command != "marker" {
				t.Errorf("a message of a trigger no longer served was handled: %+v", req)
			}
		}
	})
}

// A message is acknowledged once its handler completed: one whose
// handler has not returned when the receiver goes comes again to the
// next receiver of the session; one handled does not.
func TestTriggerAckAfterCompletion(t *testing.T) {
	brokertest.ForEach(t, ackTest)
}

func ackTest(t *testing.T, u *url.URL) {
	got := make(chan *abi.Request, 100)
	release := make(chan struct{})
	hold := trigger.Trigger{Name: "hold", Filter: filter(t, "jobs/+"), Topic: filter(t, "jobs/+"), Concurrency: 4,
		Handler: func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
			got <- req
			if string(req.Payload) == "hold" {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return nil, nil
		}}
	cfg := trigger.Config{Session: session.Config{ClientID: "acker-triggers"}}
	r := start(t, u, cfg, hold)
	pub := testkit.Dial(t, u, "job-source")
	untilHandled(t, pub, &paho.Publish{QoS: 1, Topic: "jobs/ready", Payload: []byte("ready")}, got)
	for len(got) > 0 {
		<-got
	}
	pub.Publish(t, &paho.Publish{QoS: 1, Topic: "jobs/a", Payload: []byte("done")})
	if req := <-got; string(req.Payload) != "done" {
		t.Fatalf("got %q", req.Payload)
	}
	testkit.WaitFor(t, "the first messages handled", func() bool {
		c := r.Counters("hold")
		return c.InFlight == 0 && c.Handled == c.Messages
	})
	pub.Publish(t, &paho.Publish{QoS: 1, Topic: "jobs/b", Payload: []byte("hold")})
	if req := <-got; string(req.Payload) != "hold" {
		t.Fatalf("got %q", req.Payload)
	}
	// The receiver goes while the handler runs: no waiting.
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_ = r.Stop(gone)

	r2 := start(t, u, cfg, hold)
	pub.Publish(t, &paho.Publish{QoS: 1, Topic: "jobs/c", Payload: []byte("after")})
	seen := []string{string((<-got).Payload), string((<-got).Payload)}
	close(release)
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"after", "hold"}) {
		t.Errorf("the second receiver got %v, want the message whose handler had not completed (hold) and the next (after)", seen)
	}
	testkit.WaitFor(t, "the second receiver handled its messages", func() bool { return r2.Counters("hold").Handled == 2 })
	if c := r2.Counters("hold"); c.Messages != 2 {
		t.Errorf("the second receiver got %d messages: a message handled before came again", c.Messages)
	}
}

// A failing handler runs again, up to its attempts, then its message is
// dropped: counted, reported, acknowledged; the trigger goes on with the
// messages after it, and a second trigger's messages are handled all
// the while.
func TestTriggerRetriedThenDropped(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		attempts := make(chan int, 100)
		var fails atomic.Bool
		fails.Store(true)
		flaky := trigger.Trigger{Name: "flaky", Filter: filter(t, "flaky"), Topic: filter(t, "flaky"), Attempts: 3,
			Handler: func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
				attempts <- req.Attempt
				switch {
				case string(req.Payload) == "ok":
					return nil, nil
				case req.Attempt == 2:
					return &abi.Response{Status: abi.StatusInternalError, Message: "bad day"}, nil
				}
				return nil, errors.New("trap: unreachable")
			}}
		ok := make(chan *abi.Request, 100)
		steady := trigger.Trigger{Name: "steady", Filter: filter(t, "steady"), Topic: filter(t, "steady"),
			Handler: func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
				ok <- req
				return nil, nil
			}}
		evs, obs := newSink(), &observer{}
		r := start(t, u, trigger.Config{Backoff: 20 * time.Millisecond, Events: evs, Observer: obs}, flaky, steady)
		pub := testkit.Dial(t, u, "source")
		untilHandled(t, pub, &paho.Publish{QoS: 1, Topic: "steady"}, ok)
		pub.Publish(t, &paho.Publish{QoS: 1, Topic: "flaky", Payload: []byte("bad")})
		for want := 1; want <= 3; want++ {
			if a := <-attempts; a != want {
				t.Fatalf("attempt %d, want %d", a, want)
			}
			// Meanwhile the other trigger's messages are handled.
			pub.Publish(t, &paho.Publish{QoS: 1, Topic: "steady"})
			<-ok
		}
		ev := <-evs.got
		if ev.Kind != events.KindTriggerDrop || ev.Command != "flaky" || ev.Attempt != 3 || !strings.Contains(ev.Reason, "trap: unreachable") {
			t.Errorf("drop event %+v", ev)
		}
		pub.Publish(t, &paho.Publish{QoS: 1, Topic: "flaky", Payload: []byte("ok")})
		if a := <-attempts; a != 1 {
			t.Fatalf("the message after the dropped one: attempt %d", a)
		}
		testkit.WaitFor(t, "the next message handled", func() bool { return r.Counters("flaky").Handled == 1 })
		if c := r.Counters("flaky"); c.Dropped != 1 || c.Failures != 3 || c.Messages != 2 || c.InFlight != 0 {
			t.Errorf("counters %+v", c)
		}
		obs.mu.Lock()
		defer obs.mu.Unlock()
		if obs.outcomes["flaky/dropped"] != 1 || obs.outcomes["flaky/handled"] != 1 || obs.failures["flaky/error"] != 3 {
			t.Errorf("observer %v %v", obs.outcomes, obs.failures)
		}
	})
}

// A trigger handles at most its concurrency of messages at once; the
// others wait their turn (taken in the order they came).
func TestTriggerConcurrency(t *testing.T) {
	u := brokertest.StartEmbedded(t)
	var running, most atomic.Int64
	release := make(chan struct{})
	started := make(chan string, 100)
	slow := trigger.Trigger{Name: "slow", Filter: filter(t, "slow/+"), Topic: filter(t, "slow/+"), Concurrency: 2,
		Handler: func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
			n := running.Add(1)
			defer running.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			started <- string(req.Payload)
			<-release
			return nil, nil
		}}
	r := start(t, u, trigger.Config{}, slow)
	pub := testkit.Dial(t, u, "source")
	got := make(chan *abi.Request, 1)
	probe := trigger.Trigger{Name: "probe", Filter: filter(t, "probe"), Topic: filter(t, "probe"),
		Handler: func(ctx context.Context, req *abi.Request) (*abi.Response, error) { got <- req; return nil, nil }}
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience())
	defer cancel()
	if err := r.SetTriggers(ctx, []trigger.Trigger{slow, probe}); err != nil {
		t.Fatal(err)
	}
	untilHandled(t, pub, &paho.Publish{QoS: 1, Topic: "probe"}, got)
	for i := range 6 {
		pub.Publish(t, &paho.Publish{QoS: 1, Topic: "slow/x", Payload: []byte(strconv.Itoa(i))})
	}
	first := []string{<-started, <-started}
	testkit.WaitFor(t, "six messages in flight", func() bool { return r.Counters("slow").InFlight == 6 })
	if running.Load() != 2 {
		t.Fatalf("%d handlers running, want 2", running.Load())
	}
	close(release)
	rest := []string{<-started, <-started, <-started, <-started}
	slices.Sort(first)
	slices.Sort(rest)
	if !slices.Equal(first, []string{"0", "1"}) || !slices.Equal(rest, []string{"2", "3", "4", "5"}) {
		t.Errorf("order %v then %v", first, rest)
	}
	testkit.WaitFor(t, "all handled", func() bool { return r.Counters("slow").Handled == 6 })
	if most.Load() != 2 {
		t.Errorf("at most %d at once, want 2", most.Load())
	}
}

// A message with an id is handled once: its state writes commit with its
// outcome, and a second delivery of it (the outbox's cmdhost-message-id,
// or a CloudEvent's id and source) runs nothing; a message without one is
// handled each time it comes (at least once).
func TestTriggerOnceByID(t *testing.T) {
	u := brokertest.StartEmbedded(t)
	store, err := state.OpenDisk(state.DiskConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	done := make(chan *abi.Request, 100)
	space := state.Space{NS: "p"}
	count := trigger.Trigger{Name: "count", Filter: filter(t, "count"), Topic: filter(t, "count"), Concurrency: 4,
		Handler: func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
			if _, err := state.TxnFrom(ctx).Add(ctx, space, []byte("n"), 1); err != nil {
				return nil, err
			}
			done <- req
			return nil, nil
		}}
	r := start(t, u, trigger.Config{State: store}, count)
	pub := testkit.Dial(t, u, "source")
	untilHandled(t, pub, &paho.Publish{QoS: 1, Topic: "count", Properties: &paho.PublishProperties{
		User: paho.UserProperties{{Key: abi.MessageIDProperty, Value: "first"}}}}, done)
	sends := []paho.UserProperties{
		{{Key: abi.MessageIDProperty, Value: "first"}},
		{{Key: abi.MessageIDProperty, Value: "m-1"}},
		{{Key: abi.MessageIDProperty, Value: "m-1"}},
		{{Key: "specversion", Value: "1.0"}, {Key: "id", Value: "e-1"}, {Key: "source", Value: "/a"}},
		{{Key: "specversion", Value: "1.0"}, {Key: "id", Value: "e-1"}, {Key: "source", Value: "/a"}},
		{{Key: "specversion", Value: "1.0"}, {Key: "id", Value: "e-1"}, {Key: "source", Value: "/b"}}, // another source's e-1
		{{Key: "id", Value: "plain"}},                                                                 // no CloudEvent: no id
		{{Key: "id", Value: "plain"}},
		{{Key: "last", Value: "1"}},
	}
	for _, props := range sends {
		pub.Publish(t, &paho.Publish{QoS: 1, Topic: "count", Properties: &paho.PublishProperties{User: props}})
	}
	testkit.WaitFor(t, "every message done", func() bool {
		c := r.Counters("count")
		return c.Handled+c.Duplicates >= int64(len(sends))+1 && c.InFlight == 0
	})
	it, err := store.Get(context.Background(), "p", []byte("n"))
	if err != nil {
		t.Fatal(err)
	}
	// first, m-1, e-1 of /a, e-1 of /b, plain twice, last: 7.
	if string(it.Value) != "7" {
		t.Errorf("counter %s, want 7", it.Value)
	}
	if c := r.Counters("count"); c.Duplicates < 3 {
		t.Errorf("duplicates %d, want at least 3 (first, m-1, e-1 of /a)", c.Duplicates)
	}
}
