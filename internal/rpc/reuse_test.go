package rpc

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"

	"github.com/cmdhost/cmdhost/abi"
)

// countingHandler replies "<payload>:<n>", n counting its runs, so a reply
// shows whether it came from a run or from the cache; adjust may change each
// response.
func countingHandler(runs *atomic.Int64, adjust func(*abi.Response)) Handler {
	return func(_ context.Context, r *abi.Request) (*abi.Response, error) {
		resp := &abi.Response{Payload: []byte(string(r.Payload) + ":" + strconv.FormatInt(runs.Add(1), 10)), ContentType: r.ContentType}
		if adjust != nil {
			adjust(resp)
		}
		return resp, nil
	}
}

func from(id string) func(*packets.Publish) {
	return func(p *packets.Publish) {
		for i, u := range p.Properties.User {
			if u.Key == "__srcId" {
				p.Properties.User[i].Value = id
			}
		}
		p.Properties.ResponseTopic = "resp/" + id
	}
}

func payload(s string) func(*packets.Publish) {
	return func(p *packets.Publish) { p.Payload = []byte(s) }
}

// The rules for answering from a cache (reuse only for an equivalent
// request to an idempotent command within its reply's positive TTL, dedup
// only within the request's expiry, never an error, never another invoker's
// private reply), each case named after its rule: two requests, the second
// after `advance`; how many times the handler ran and whether the second got
// a reply.
func TestReuseRules(t *testing.T) {
	idem := func(ttl time.Duration) Command { return Command{Name: "tag", Idempotent: true, ResponseTTL: ttl} }
	appError := func(r *abi.Response) { r.Status, r.AppError = abi.StatusInternalError, true }
	zeroTTL := func(r *abi.Response) { zero := time.Duration(0); r.TTL = &zero }
	cases := []struct {
		rule        string
		cmd         Command
		adjust      func(*abi.Response)
		second      []func(*packets.Publish)
		sameCorr    bool
		advance     time.Duration
		wantRuns    int64
		wantReply2  bool
		wantPayload string // of the second reply, when one is wanted
	}{
		{rule: "MUST: a non-duplicated, non-equivalent request is not retrieved from the cache",
			cmd: idem(time.Hour), second: []func(*packets.Publish){payload("other")}, wantRuns: 2, wantReply2: true, wantPayload: "other:2"},
		{rule: "MUST: an equivalent request for a non-idempotent command is not retrieved from the cache",
			cmd: Command{Name: "tag"}, wantRuns: 2, wantReply2: true, wantPayload: "hello:2"},
		{rule: "MUST: an equivalent request for an idempotent command with a TTL of 0 is not retrieved from the cache",
			cmd: idem(0), wantRuns: 2, wantReply2: true, wantPayload: "hello:2"},
		{rule: "MUST: an equivalent request whose reply was given a TTL of 0 by its handler is not retrieved from the cache",
			cmd: idem(time.Hour), adjust: zeroTTL, wantRuns: 2, wantReply2: true, wantPayload: "hello:2"},
		{rule: "MUST: an equivalent request whose response TTL has elapsed is not retrieved from the cache",
			cmd: idem(time.Hour), advance: time.Hour + time.Second, wantRuns: 2, wantReply2: true, wantPayload: "hello:2"},
		{rule: "MUST: a duplicate request for a non-idempotent command within the request expiration is retrieved from the cache",
			cmd: Command{Name: "tag"}, sameCorr: true, advance: 5 * time.Second, wantRuns: 1, wantReply2: true, wantPayload: "hello:1"},
		{rule: "MAY (we do): an equivalent request within the response TTL is retrieved from the cache",
			cmd: idem(time.Hour), advance: 30 * time.Minute, wantRuns: 1, wantReply2: true, wantPayload: "hello:1"},
		{rule: "MAY (we do): a duplicate request for an idempotent command within the TTL or the request expiration is retrieved from the cache",
			cmd: idem(time.Hour), sameCorr: true, advance: 5 * time.Second, wantRuns: 1, wantReply2: true, wantPayload: "hello:1"},
		{rule: "MAY (we do not): a duplicate request outside the request expiration is dead on arrival: neither run nor answered",
			cmd: Command{Name: "tag"}, sameCorr: true, advance: 11 * time.Second, wantRuns: 1, wantReply2: false},
		{rule: "error replies are never reused",
			cmd: idem(time.Hour), adjust: appError, wantRuns: 2, wantReply2: true},
		{rule: "privacy: an executor-specific request of another invoker is not answered from the cache",
			cmd: idem(time.Hour), second: []func(*packets.Publish){from("inv-2")}, wantRuns: 2, wantReply2: true, wantPayload: "hello:2"},
		{rule: "privacy: a service-wide request of another invoker is answered from the cache",
			cmd:    Command{Name: "tag", Topic: "svc/{commandName}", Idempotent: true, ResponseTTL: time.Hour},
			second: []func(*packets.Publish){from("inv-2")}, wantRuns: 1, wantReply2: true, wantPayload: "hello:1"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			var runs atomic.Int64
			c.cmd.Handler = countingHandler(&runs, c.adjust)
			h := start(t, Config{}, c.cmd)
			topic := "rpc/exec-1/tag"
			if c.cmd.Topic != "" && c.cmd.Topic != DefaultTopic {
				topic = "svc/tag"
			}
			h.roundTrip(req(topic, 1, payload("hello")), 1)
			h.clock.Add(c.advance)
			corr := byte(2)
			if c.sameCorr {
				corr = 1
			}
			second := req(topic, corr, append([]func(*packets.Publish){payload("hello")}, c.second...)...)
			if c.sameCorr && c.advance > 0 && c.advance < 10*time.Second {
				left := uint32(10 - c.advance/time.Second) // as a broker decrements it
				second.Properties.MessageExpiry = &left
			}
			if _, err := h.broker.Deliver(second); err != nil {
				t.Fatal(err)
			}
			if _, err := h.broker.WaitAcks(ctx(t), 2); err != nil {
				t.Fatal(err)
			}
			if c.wantReply2 {
				pubs, err := h.broker.WaitPublished(ctx(t), 2)
				if err != nil {
					t.Fatal(err)
				}
				if c.wantPayload != "" && string(pubs[1].Payload) != c.wantPayload {
					t.Errorf("second reply %q, want %q", pubs[1].Payload, c.wantPayload)
				}
			} else if n := len(h.broker.Published()); n != 1 {
				t.Errorf("%d replies, want only the first", n)
			}
			if got := runs.Load(); got != c.wantRuns {
				t.Errorf("the handler ran %d times, want %d", got, c.wantRuns)
			}
		})
	}
}

// A reply from the reuse cache is the executed one but for a fresh __ts,
// the new request's correlation data and its remaining expiry.
func TestReusedReplyOnTheWire(t *testing.T) {
	var runs atomic.Int64
	h := start(t, Config{}, Command{Name: "tag", Idempotent: true, ResponseTTL: time.Hour,
		Handler: countingHandler(&runs, func(r *abi.Response) { r.Metadata = map[string]string{"k": "v"} })})
	first := h.roundTrip(req("rpc/exec-1/tag", 1), 1)
	h.clock.Add(time.Second)
	seven := uint32(7)
	second := h.roundTrip(req("rpc/exec-1/tag", 2, func(p *packets.Publish) { p.Properties.MessageExpiry = &seven }), 2)
	if runs.Load() != 1 {
		t.Fatalf("ran %d times", runs.Load())
	}
	if string(second.Payload) != string(first.Payload) || second.Properties.ContentType != first.Properties.ContentType {
		t.Fatalf("payload/content type differ: %q vs %q", second.Payload, first.Payload)
	}
	if *second.Properties.MessageExpiry != 7 || second.Properties.CorrelationData[0] != 2 {
		t.Errorf("expiry %d, correlation %x: want the new request's", *second.Properties.MessageExpiry, second.Properties.CorrelationData)
	}
	ts1, _ := user(first, "__ts")
	ts2, _ := user(second, "__ts")
	if ts1 == ts2 {
		t.Error("a reused reply needs a fresh __ts")
	}
	for _, u := range first.Properties.User {
		if u.Key == "__ts" {
			continue
		}
		if got, _ := user(second, u.Key); got != u.Value {
			t.Errorf("%s: reused %q, executed %q", u.Key, got, u.Value)
		}
	}
	if st := h.exec.ReuseStats(); st.Hits != 1 || st.Misses != 1 {
		t.Errorf("stats %+v, want 1 hit and 1 miss", st)
	}
}

// Filling the reuse cache far beyond its bound evicts (or refuses) replies
// and keeps its size bounded, while duplicates of a non-idempotent command
// are still deduplicated exactly: the strict store never feels the
// pressure.
func TestReusePressureLeavesDedupAlone(t *testing.T) {
	const bound = 64 << 10
	var bigRuns, tagRuns atomic.Int64
	big := bytes8k()
	h := start(t, Config{ReuseMaxBytes: bound, MaxPending: 4096},
		Command{Name: "big", Idempotent: true, ResponseTTL: time.Hour, Concurrency: 4,
			Handler: func(context.Context, *abi.Request) (*abi.Response, error) {
				bigRuns.Add(1)
				return &abi.Response{Payload: big}, nil
			}},
		Command{Name: "tag", Concurrency: 4, Handler: countingHandler(&tagRuns, nil)})
	const fills, dups = 1280, 64 // 10 MiB of distinct idempotent replies
	sent := 0
	for i := range fills {
		if _, err := h.broker.Deliver(req("rpc/exec-1/big", 0, payload(strconv.Itoa(i)), corrN(10_000+i))); err != nil {
			t.Fatal(err)
		}
		sent++
		if i%(fills/dups) == 0 { // a non-idempotent request and its duplicate
			for range 2 {
				if _, err := h.broker.Deliver(req("rpc/exec-1/tag", 0, payload("t"+strconv.Itoa(i)), corrN(i))); err != nil {
					t.Fatal(err)
				}
				sent++
			}
		}
	}
	if _, err := h.broker.WaitAcks(ctx(t), sent); err != nil {
		t.Fatal(err)
	}
	h.exec.reuse.Wait()
	st := h.exec.ReuseStats()
	if st.Evictions+st.Rejections == 0 || st.CostUsed > bound {
		t.Errorf("reuse under pressure: %+v (bound %d)", st, bound)
	}
	if got := tagRuns.Load(); got != dups {
		t.Errorf("non-idempotent duplicates ran %d times for %d requests: dedup must be exact", got, dups)
	}
	// The cache's own memory is bounded (its heap under pressure is tested
	// in package cache); the dedup store holds every reply until its
	// request expires, as it must.
	if max := int64(bound/len(big)) + 1; st.Entries > max {
		t.Errorf("%d replies held in a %d KiB cache of 8 KiB replies", st.Entries, bound>>10)
	}
	t.Logf("reuse %+v, big ran %d times", st, bigRuns.Load())
}

func bytes8k() []byte {
	b := make([]byte, 8<<10)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}

// corrN gives a request correlation data unique to n.
func corrN(n int) func(*packets.Publish) {
	return func(p *packets.Publish) {
		c := make([]byte, 16)
		copy(c, strconv.Itoa(n))
		p.Properties.CorrelationData = c
	}
}
