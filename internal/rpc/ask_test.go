package rpc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The ask extensions (ask.go), rule by rule on the executor's side: the
// request state machine, duplicates in each state, and how long terminal
// entries are kept. The invoker's side (retry until acked, cancel on
// context end) is in the invoker tests.

func withAck(p *packets.Publish) {
	p.Properties.User = append(p.Properties.User, packets.User{Key: propAck, Value: "1"})
}

// cancelOf is the cancel message of request p: its topic, correlation data
// and response topic, cmdhost-cancel: 1, no expiry.
func cancelOf(p *packets.Publish) *packets.Publish {
	return &packets.Publish{QoS: 1, Topic: p.Topic, Properties: &packets.Properties{
		CorrelationData: p.Properties.CorrelationData, ResponseTopic: p.Properties.ResponseTopic,
		User: []packets.User{{Key: "__protVer", Value: "1.0"}, {Key: propCancel, Value: "1"}},
	}}
}

func stat(p *packets.Publish) string { s, _ := user(p, "__stat"); return s }

// stats returns the __stat of every response published so far.
func (h *harness) stats() []string {
	var out []string
	for _, p := range h.broker.Published() {
		out = append(out, stat(p))
	}
	return out
}

func (h *harness) deliver(p *packets.Publish) {
	h.t.Helper()
	if _, err := h.broker.Deliver(p); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) waitPublished(n int) []*packets.Publish {
	h.t.Helper()
	pubs, err := h.broker.WaitPublished(ctx(h.t), n)
	if err != nil {
		h.t.Fatalf("waiting for %d responses (have %v): %v", n, h.stats(), err)
	}
	return pubs
}

// blocking is a handler that reports each call on started and returns
// when release is closed or its context ends; it records its context's
// cause.
type blocking struct {
	started chan struct{}
	ended   chan struct{} // a call ended by its context, after cause is set
	release chan struct{}
	ran     atomic.Int64
	cause   atomic.Pointer[error]
}

func newBlocking() *blocking {
	return &blocking{started: make(chan struct{}, 16), ended: make(chan struct{}, 16), release: make(chan struct{})}
}

func (b *blocking) handle(ctx context.Context, req *abi.Request) (*abi.Response, error) {
	b.ran.Add(1)
	b.started <- struct{}{}
	select {
	case <-b.release:
		return &abi.Response{Payload: []byte("done")}, nil
	case <-ctx.Done():
		err := context.Cause(ctx)
		b.cause.Store(&err)
		b.ended <- struct{}{}
		return nil, ctx.Err()
	}
}

// State machine: null → InProgress → Replied, with the ack first.
func TestAskAckThenReply(t *testing.T) {
	b := newBlocking()
	h := start(t, Config{}, Command{Name: "work", Handler: b.handle})
	h.deliver(req("rpc/exec-1/work", 1, withAck))
	<-b.started
	if got := stat(h.waitPublished(1)[0]); got != "202" {
		t.Fatalf("first response %s, want 202 on acceptance", got)
	}
	close(b.release)
	pubs := h.waitPublished(2)
	if got := stat(pubs[1]); got != "200" || string(pubs[1].Payload) != "done" {
		t.Fatalf("final response %s %q, want 200 done", got, pubs[1].Payload)
	}
	if string(pubs[0].Properties.CorrelationData) != string(pubs[1].Properties.CorrelationData) {
		t.Error("the 202 must carry the request's correlation data")
	}
}

// Plain v1.0: no extension property, no 202 (and the handler never sees
// the extension properties as metadata).
func TestPlainRequestGetsNoAck(t *testing.T) {
	var meta atomic.Pointer[map[string]string]
	h := start(t, Config{}, Command{Name: "echo", Handler: func(ctx context.Context, r *abi.Request) (*abi.Response, error) {
		meta.Store(&r.Metadata)
		return echoHandler(ctx, r)
	}})
	resp := h.roundTrip(req("rpc/exec-1/echo", 1), 1)
	if stat(resp) != "200" {
		t.Fatalf("%s, want 200", stat(resp))
	}
	h.roundTrip(req("rpc/exec-1/echo", 2, withAck), 3) // 202 + 200
	if got := h.stats(); fmt.Sprint(got) != "[200 202 200]" {
		t.Fatalf("responses %v, want [200 202 200]", got)
	}
	if m := *meta.Load(); m[propAck] != "" {
		t.Errorf("the handler saw %s in its metadata %v", propAck, m)
	}
}

// State machine: InProgress → Cancelled while running: the context closes
// with the cancel as its cause, the reply is 499, the late result is
// suppressed.
func TestCancelWhileRunning(t *testing.T) {
	b := newBlocking()
	h := start(t, Config{}, Command{Name: "work", Handler: b.handle})
	r := req("rpc/exec-1/work", 1, withAck)
	h.deliver(r)
	<-b.started
	h.waitPublished(1) // 202
	h.deliver(cancelOf(r))
	pubs := h.waitPublished(2)
	if got := stat(pubs[1]); got != "499" {
		t.Fatalf("after cancel: %s, want 499", got)
	}
	<-b.ended // the 499 does not wait for the handler to return
	if c := b.cause.Load(); c == nil || !errors.Is(*c, errCancelled) {
		t.Fatalf("handler context cause %v, want the cancel", c)
	}
	// Both the request and the cancel are acked.
	if _, err := h.broker.WaitAcks(ctx(t), 2); err != nil {
		t.Fatal(err)
	}
	// A duplicate after Cancelled gets 499 again, not a run.
	if got := stat(h.roundTrip(req("rpc/exec-1/work", 1, withAck), 3)); got != "499" {
		t.Fatalf("duplicate after Cancelled: %s, want 499", got)
	}
	if b.ran.Load() != 1 {
		t.Fatalf("ran %d times", b.ran.Load())
	}
}

// A cancel while the request waits for a slot: 499, never executed.
func TestCancelWhileQueued(t *testing.T) {
	b := newBlocking()
	defer close(b.release)
	h := start(t, Config{}, Command{Name: "work", Concurrency: 1, Handler: b.handle})
	h.deliver(req("rpc/exec-1/work", 1))
	<-b.started
	queued := req("rpc/exec-1/work", 2, withAck)
	h.deliver(queued)
	h.waitPublished(1) // its 202
	h.deliver(cancelOf(queued))
	if got := stat(h.waitPublished(2)[1]); got != "499" {
		t.Fatalf("%s, want 499", got)
	}
	if b.ran.Load() != 1 {
		t.Fatalf("the cancelled request ran (%d runs)", b.ran.Load())
	}
}

// The first terminal state wins: a cancel after the reply is ignored, and
// a late result after Cancelled is suppressed.
func TestFirstTerminalStateWins(t *testing.T) {
	t.Run("cancel after reply", func(t *testing.T) {
		h := start(t, Config{}, Command{Name: "echo", Handler: echoHandler})
		r := req("rpc/exec-1/echo", 1)
		h.roundTrip(r, 1)
		h.deliver(cancelOf(r))
		if _, err := h.broker.WaitAcks(ctx(t), 2); err != nil { // the cancel is acked, after
			t.Fatal(err)
		}
		if got := stat(h.roundTrip(req("rpc/exec-1/echo", 1), 2)); got != "200" {
			t.Fatalf("duplicate after Replied: %s, want the replayed 200", got)
		}
		if got := h.stats(); len(got) != 2 {
			t.Fatalf("responses %v: the cancel must not produce one", got)
		}
	})
	t.Run("late result after cancel", func(t *testing.T) {
		release := make(chan struct{})
		started := make(chan struct{})
		h := start(t, Config{}, Command{Name: "stubborn", Handler: func(context.Context, *abi.Request) (*abi.Response, error) {
			close(started)
			<-release // ignores its context
			return &abi.Response{Payload: []byte("late")}, nil
		}})
		r := req("rpc/exec-1/stubborn", 1)
		h.deliver(r)
		<-started
		h.deliver(cancelOf(r))
		if got := stat(h.waitPublished(1)[0]); got != "499" {
			t.Fatalf("%s, want 499", got)
		}
		close(release)
		if got := stat(h.roundTrip(req("rpc/exec-1/stubborn", 1), 2)); got != "499" {
			t.Fatalf("duplicate after the late result: %s, want 499", got)
		}
		for _, p := range h.broker.Published() {
			if string(p.Payload) == "late" {
				t.Fatal("the late result was published")
			}
		}
	})
}

// A duplicate in progress is acked again (when it asks), and answered
// with the reply when it comes; without the property, no 202.
func TestDuplicateInProgressIsAcked(t *testing.T) {
	b := newBlocking()
	h := start(t, Config{}, Command{Name: "work", Handler: b.handle})
	h.deliver(req("rpc/exec-1/work", 1, withAck))
	<-b.started
	h.waitPublished(1)
	h.deliver(req("rpc/exec-1/work", 1, withAck)) // a retry of the invoker
	if got := stat(h.waitPublished(2)[1]); got != "202" {
		t.Fatalf("duplicate in progress: %s, want 202", got)
	}
	h.deliver(req("rpc/exec-1/work", 1)) // a broker redelivery, no extension
	close(b.release)
	pubs := h.waitPublished(5) // 202, 202, then the 200 for each of three receipts
	got := fmt.Sprint(h.stats())
	if got != "[202 202 200 200 200]" {
		t.Fatalf("responses %s", got)
	}
	_ = pubs
	if b.ran.Load() != 1 {
		t.Fatalf("ran %d times", b.ran.Load())
	}
}

// Under -race: reply, cancel and execution timeout race; whatever
// happens, each request gets exactly one terminal reply, and every later
// duplicate gets the same one.
func TestTerminalRace(t *testing.T) {
	const n = 60
	h := start(t, Config{}, Command{Name: "race", Timeout: 3 * time.Millisecond,
		Handler: func(ctx context.Context, r *abi.Request) (*abi.Response, error) {
			d := time.Duration(r.Payload[0]) * 100 * time.Microsecond
			select {
			case <-time.After(d):
				return &abi.Response{Payload: []byte("ok")}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}})
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		r := req("rpc/exec-1/race", byte(i), func(p *packets.Publish) { p.Payload = []byte{byte(rng.IntN(60))} })
		h.deliver(r)
		time.Sleep(time.Duration(rng.IntN(40)) * 100 * time.Microsecond) // jitter, not synchronisation
		h.deliver(cancelOf(r))
	}
	if _, err := h.broker.WaitAcks(ctx(t), 2*n); err != nil {
		t.Fatal(err)
	}
	first := map[byte]string{}
	for _, p := range h.broker.Published() {
		c := p.Properties.CorrelationData[0]
		if _, dup := first[c]; dup {
			t.Fatalf("request %d got a second reply %s", c, stat(p))
		}
		first[c] = stat(p)
	}
	seen := map[string]int{}
	for i := range n {
		s, ok := first[byte(i)]
		if !ok {
			t.Fatalf("request %d got no reply", i)
		}
		seen[s]++
		dup := h.roundTrip(req("rpc/exec-1/race", byte(i)), n+i+1)
		if stat(dup) != s {
			t.Fatalf("request %d: first %s, duplicate %s", i, s, stat(dup))
		}
	}
	t.Logf("terminal states: %v", seen)
	for s := range seen {
		if s != "200" && s != "408" && s != "499" {
			t.Fatalf("unexpected status %s", s)
		}
	}
}

// At the executor, with a full dedup store, a terminal entry past its
// request's expiry gives way to a new request (no 503); in-progress ones
// never do.
func TestTerminalEntriesBounded(t *testing.T) {
	b := newBlocking()
	defer close(b.release)
	// One invoker fills the whole store here: no per-invoker share.
	h := start(t, Config{MaxDedupEntries: 2, MaxDedupPerInvoker: -1},
		Command{Name: "echo", Handler: echoHandler}, Command{Name: "work", Handler: b.handle})
	long := uint32(60)
	h.deliver(req("rpc/exec-1/work", 1, func(p *packets.Publish) { p.Properties.MessageExpiry = &long }))
	<-b.started
	h.roundTrip(req("rpc/exec-1/echo", 2), 1)
	if got := stat(h.roundTrip(req("rpc/exec-1/echo", 3), 2)); got != "503" {
		t.Fatalf("full store, nothing expired: %s, want 503", got)
	}
	h.clock.Add(11 * time.Second) // past the echo's expiry (10 s), within its keep window
	if got := stat(h.roundTrip(req("rpc/exec-1/echo", 4), 3)); got != "200" {
		t.Fatalf("terminal entry past expiry should give way: %s, want 200", got)
	}
	if got := stat(h.roundTrip(req("rpc/exec-1/echo", 5), 4)); got != "503" {
		t.Fatalf("only the in-progress entry and a fresh one left: %s, want 503", got)
	}
}

// With the shared store, claims leave the receive goroutine (claims.go):
// a cancel that arrives right behind its request, before the request's
// claim is back from Redis, still finds it queued: 499, never run.
func TestCancelRightBehindItsRequestWithSharedStore(t *testing.T) {
	b := newBlocking()
	h := start(t, Config{Stores: RedisStores(RedisConfig{URL: testkit.StartRedis(t).URL})}, Command{Name: "work", Concurrency: 1, Handler: b.handle})
	h.deliver(req("rpc/exec-1/work", 1))
	select {
	case <-b.started:
	case <-ctx(t).Done():
		t.Fatalf("the first request never started; replies %v", h.stats())
	}
	queued := req("rpc/exec-1/work", 2)
	h.deliver(queued)
	h.deliver(cancelOf(queued))
	if got := stat(h.waitPublished(1)[0]); got != "499" {
		t.Fatalf("%s, want 499", got)
	}
	close(b.release)
	if got := stat(h.waitPublished(2)[1]); got != "200" {
		t.Fatalf("the first request: %s, want 200", got)
	}
	if b.ran.Load() != 1 {
		t.Fatalf("the cancelled request ran (%d runs)", b.ran.Load())
	}
}
