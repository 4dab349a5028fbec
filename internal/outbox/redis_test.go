package outbox

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// redisHost is a replica's outbox in a test's Redis: its dedup store
// (whose client the outbox uses), its state store and its outbox.
type redisHost struct {
	d  *cache.RedisDedup[string]
	rs *cache.RedisState
	ob *cache.RedisOutbox
}

func newRedisHost(t *testing.T, url, consumer string, claimIdle time.Duration) *redisHost {
	t.Helper()
	d, err := cache.NewRedisDedup(cache.RedisConfig[string]{URL: url, Name: consumer,
		Encode:    func(v string) ([]byte, error) { return []byte(v), nil },
		Decode:    func(b []byte) (string, error) { return string(b), nil },
		OwnerGone: func(bool) string { return "gone" }})
	if err != nil {
		t.Fatal(err)
	}
	h := &redisHost{d: d, rs: d.State(state.Limits{})}
	h.ob = d.Outbox(cache.RedisOutboxConfig{Group: "host", Consumer: consumer, ClaimIdle: claimIdle})
	return h
}

// commit commits n messages, ids prefix-0…, as a non-idempotent call's.
func (h *redisHost) commit(t *testing.T, prefix string, n int) []string {
	t.Helper()
	var ids []string
	var ms []state.Message
	for i := range n {
		id := fmt.Sprintf("%s-%d", prefix, i)
		ids = append(ids, id)
		body := encodeBody("p", time.Now(), &abi.Message{Topic: "events/" + id, Payload: []byte(id)})
		ms = append(ms, state.Message{ID: id, Body: body, NS: state.PluginNamespace("p")})
	}
	if _, err := h.rs.Commit(context.Background(), &state.Commit{Messages: ms}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// receiver counts the messages sent, by id.
type receiver struct {
	mu  sync.Mutex
	got map[string]int
}

func (r *receiver) send(_ context.Context, m rpc.Message) error {
	for _, p := range m.Properties {
		if p.Key == abi.MessageIDProperty {
			r.mu.Lock()
			r.got[p.Value]++
			r.mu.Unlock()
		}
	}
	return nil
}

func (r *receiver) copies(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[id]
}

// TestRedisOutboxSentByTwoHosts: two replicas of a host set share the
// outbox in one Redis, each sending what it reads; a third read its
// messages and died (kill -9) after the broker acknowledged some of them
// and before it took them out. Every message the two committed is sent
// once; the dead one's are taken over (after ClaimIdle) and sent, once,
// but for those it had sent already: again, with the same id.
func TestRedisOutboxSentByTwoHosts(t *testing.T) {
	url := testkit.StartRedis(t).URL
	const claimIdle = time.Second
	a, b := newRedisHost(t, url, "replica-a", claimIdle), newRedisHost(t, url, "replica-b", claimIdle)
	defer a.d.Close()
	defer b.d.Close()
	rec := &receiver{got: map[string]int{}}

	// The dead replica: it read its 20 messages, sent 5, and died.
	dead := newRedisHost(t, url, "replica-c", claimIdle)
	deadIDs := dead.commit(t, "c", 20)
	q, err := dead.ob.Queued(context.Background(), 100)
	if err != nil || len(q) != 20 {
		t.Fatalf("the replica to kill read %d messages: %v", len(q), err)
	}
	for _, m := range q[:5] {
		rec.got[m.ID]++
	}
	dead.d.Close()

	idsA, idsB := a.commit(t, "a", 50), b.commit(t, "b", 50)
	idem := func(string) bool { return false }
	oa := New(Config{Store: a.ob, Send: rec.send, Idempotent: idem, ExecutorID: "host"})
	ob := New(Config{Store: b.ob, Send: rec.send, Idempotent: idem, ExecutorID: "host"})
	defer oa.Close()
	defer ob.Close()
	all := append(append(append([]string{}, idsA...), idsB...), deadIDs...)
	testkit.WaitFor(t, "every message sent", func() bool {
		for _, id := range all {
			if rec.copies(id) == 0 {
				return false
			}
		}
		return true
	})
	testkit.WaitFor(t, "the outbox empty", func() bool { return a.ob.OutboxMessages()+b.ob.OutboxMessages() == 0 })
	for _, id := range append(idsA, idsB...) {
		if n := rec.copies(id); n != 1 {
			t.Errorf("%s sent %d times", id, n)
		}
	}
	for i, id := range deadIDs {
		want := 1
		if i < 5 {
			want = 2 // sent by the dead replica, and again by the one that took it over
		}
		if n := rec.copies(id); n != want {
			t.Errorf("%s (the dead replica's) sent %d times, want %d", id, n, want)
		}
	}
	sa, sb := oa.Stats(), ob.Stats()
	if sa.TakenOver+sb.TakenOver != 20 || sa.Sent+sb.Sent != 120 {
		t.Errorf("taken over %d+%d, want 20; sent %d+%d, want 120", sa.TakenOver, sb.TakenOver, sa.Sent, sb.Sent)
	}
	t.Logf("replica a sent %d (%d taken over), b %d (%d taken over)", sa.Sent, sa.TakenOver, sb.Sent, sb.TakenOver)
}

// A send that fails (the broker not connected) is tried again: the
// message stays with its reader and goes out once the broker takes it,
// counted as a retry.
func TestRedisOutboxRetries(t *testing.T) {
	url := testkit.StartRedis(t).URL
	h := newRedisHost(t, url, "replica-a", time.Minute)
	defer h.d.Close()
	rec := &receiver{got: map[string]int{}}
	var mu sync.Mutex
	failing := true
	send := func(ctx context.Context, m rpc.Message) error {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			return fmt.Errorf("not connected")
		}
		return rec.send(ctx, m)
	}
	o := New(Config{Store: h.ob, Send: send, Idempotent: func(string) bool { return false }, ExecutorID: "host"})
	defer o.Close()
	ids := h.commit(t, "m", 3)
	testkit.WaitFor(t, "a failed send", func() bool { return o.Stats().Retries > 0 })
	mu.Lock()
	failing = false
	mu.Unlock()
	testkit.WaitFor(t, "the messages sent", func() bool { return rec.copies(ids[2]) == 1 })
	for _, id := range ids {
		if n := rec.copies(id); n != 1 {
			t.Errorf("%s sent %d times", id, n)
		}
	}
}
