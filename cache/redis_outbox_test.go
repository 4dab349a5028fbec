package cache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// msgs are n messages published in namespace ns, ids prefix-0….
func msgs(ns, prefix string, n int) []state.Message {
	out := make([]state.Message, n)
	for i := range out {
		out[i] = state.Message{ID: fmt.Sprintf("%s-%d", prefix, i), Body: []byte("body of " + prefix), NS: ns}
	}
	return out
}

// dedupWith is a dedup store of strings at cfg's URL, with cfg's name,
// TLS and password.
func dedupWith(t *testing.T, cfg RedisConfig[string]) *RedisDedup[string] {
	t.Helper()
	cfg.Encode = func(v string) ([]byte, error) { return []byte(v), nil }
	cfg.Decode = func(b []byte) (string, error) { return string(b), nil }
	cfg.OwnerGone = func(bool) string { return "gone" }
	d, err := NewRedisDedup(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func queuedIDs(q []state.Queued) string {
	ids := make([]string, len(q))
	for i, m := range q {
		ids[i] = m.ID
	}
	return strings.Join(ids, " ")
}

// A non-idempotent call's messages join the outbox in its outcome's
// script: there when the outcome is, in order, with their ids; none for
// a commit refused (a conflict), for a call that failed (Complete) or
// whose outcome another process stored first. A call that publishes and
// writes nothing commits its messages too. Sent and taken out
// (Dequeue), they are gone and their bytes given back.
func TestRedisOutboxCommitsWithOutcome(t *testing.T) {
	url := testkit.StartRedis(t).URL
	a := newRedisDedup(t, url, "a")
	defer a.Close()
	rs := a.State(state.Limits{})
	ob := a.Outbox(RedisOutboxConfig{Group: "host", Consumer: "a"})
	ctx := context.Background()
	rt := &roundTrips{}
	a.rdb.AddHook(rt)
	warmUp(t, a)

	e, op := claimFirst(t, a, "c1"), addOp(t, rs)
	trips := rt.n.Load()
	if got, err := a.CommitOutcome(e, "1", time.Time{}, []state.Op{op}, msgs(tallyNS, "c1", 2), "unknown"); err != nil || got != "1" {
		t.Fatalf("CommitOutcome: %q %v", got, err)
	}
	if trips = rt.n.Load() - trips; trips != 1 {
		t.Errorf("the commit with messages took %d round trips, want 1 (the outcome's)", trips)
	}
	select {
	case <-ob.OutboxReady():
	default:
		t.Error("a commit with messages did not signal the sender")
	}

	// A refused commit adds nothing: its stale write conflicts.
	e2 := claimFirst(t, a, "c2")
	stale := addOp(t, rs)
	if _, err := rs.Commit(ctx, &state.Commit{Ops: []state.Op{addOp(t, rs)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CommitOutcome(e2, "2", time.Time{}, []state.Op{stale}, msgs(tallyNS, "c2-stale", 1), "unknown"); !errors.Is(err, state.ErrConflict) {
		t.Fatalf("a stale write: %v", err)
	}
	// A call that failed: its outcome stored without its effects.
	a.Complete(e2, "failed", time.Time{})

	// Messages and no writes, in the publishing plugin's namespace.
	e3 := claimFirst(t, a, "c3")
	if _, err := a.CommitOutcome(e3, "3", time.Time{}, nil, msgs("plugin/other", "c3", 1), "unknown"); err != nil {
		t.Fatal(err)
	}

	q, err := ob.Queued(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := queuedIDs(q); got != "c1-0 c1-1 c3-0" && got != "c3-0 c1-0 c1-1" {
		t.Fatalf("queued %q, want c1-0 c1-1 and c3-0 (no message of the refused commit)", got)
	}
	if ob.OutboxBytes() == 0 || ob.OutboxMessages() != 3 {
		t.Fatalf("the outbox holds %d bytes, %d messages", ob.OutboxBytes(), ob.OutboxMessages())
	}
	if string(q[0].Body) == "" {
		t.Fatal("a message without its body")
	}
	// Read again before they are taken out: the same, pending with a.
	if again, _ := ob.Queued(ctx, 10); queuedIDs(again) != queuedIDs(q) {
		t.Fatalf("read again: %q, want %q", queuedIDs(again), queuedIDs(q))
	}
	keys := make([][]byte, len(q))
	for i := range q {
		keys[i] = q[i].Key
	}
	if err := ob.Dequeue(ctx, keys); err != nil {
		t.Fatal(err)
	}
	if again, err := ob.Queued(ctx, 10); err != nil || len(again) != 0 {
		t.Fatalf("after Dequeue: %q %v", queuedIDs(again), err)
	}
	if ob.OutboxBytes() != 0 || ob.OutboxMessages() != 0 {
		t.Fatalf("after Dequeue the outbox holds %d bytes, %d messages", ob.OutboxBytes(), ob.OutboxMessages())
	}
	// Taken out twice (a reader that took it over sent it too): nothing
	// more given back.
	if err := ob.Dequeue(ctx, keys); err != nil || ob.bytesIn(tallyNS) != 0 {
		t.Fatalf("a second Dequeue: %v, %d bytes", err, ob.bytesIn(tallyNS))
	}
}

// A trigger's commit (a marker, no request's claim) carries its
// messages too; without an outbox made, a commit with messages is
// refused, nothing written.
func TestRedisOutboxMarkerCommit(t *testing.T) {
	url := testkit.StartRedis(t).URL
	a := newRedisDedup(t, url, "a")
	defer a.Close()
	rs := a.State(state.Limits{})
	ctx := context.Background()
	op := state.Op{Kind: state.OpSet, NS: tallyNS, Key: []byte("k"), Value: []byte("v")}
	if _, err := rs.Commit(ctx, &state.Commit{Ops: []state.Op{op}, Messages: msgs(tallyNS, "t", 1)}); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("messages without an outbox: %v", err)
	}
	if c := counterKey(t, rs, "k"); c != "absent" {
		t.Fatalf("a refused commit wrote k = %s", c)
	}
	ob := a.Outbox(RedisOutboxConfig{Group: "host", Consumer: "a"})
	if _, err := rs.Commit(ctx, &state.Commit{Ops: []state.Op{op}, Messages: msgs(tallyNS, "t", 1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Commit(ctx, &state.Commit{Messages: msgs(tallyNS, "u", 1)}); err != nil {
		t.Fatal(err)
	}
	if q, err := ob.Queued(ctx, 10); err != nil || queuedIDs(q) != "t-0 u-0" {
		t.Fatalf("queued %q %v", queuedIDs(q), err)
	}
}

func counterKey(t *testing.T, rs *RedisState, key string) string {
	t.Helper()
	it, err := rs.Get(context.Background(), tallyNS, []byte(key))
	if errors.Is(err, state.ErrNotFound) {
		return "absent"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(it.Value)
}

// A full outbox (a namespace's stream at its bound of messages or bytes)
// refuses the commit whole, with a typed error that says which bound:
// the outcome and the writes are not stored, the request stays claimed
// (the executor answers it 503, nothing written). Once the sender takes
// messages out, commits go through again; the guest is told at publish
// (OutboxBytesIn) once the sender has seen the bytes.
func TestRedisOutboxFull(t *testing.T) {
	url := testkit.StartRedis(t).URL
	a := newRedisDedup(t, url, "a")
	defer a.Close()
	rs := a.State(state.Limits{MaxOutboxBytes: 1000})
	ob := a.Outbox(RedisOutboxConfig{Group: "host", Consumer: "a", MaxMessages: 2})
	ctx := context.Background()
	if _, err := a.CommitOutcome(claimFirst(t, a, "c1"), "1", time.Time{}, []state.Op{addOp(t, rs)}, msgs(tallyNS, "c1", 2), "unknown"); err != nil {
		t.Fatal(err)
	}
	e := claimFirst(t, a, "c2")
	_, err := a.CommitOutcome(e, "2", time.Time{}, []state.Op{addOp(t, rs)}, msgs(tallyNS, "c2", 1), "unknown")
	var qe *state.QuotaError
	if !errors.As(err, &qe) || qe.What != "outbox messages" || qe.Limit != 2 || qe.Namespace != tallyNS {
		t.Fatalf("a third message into an outbox of 2: %v", err)
	}
	if !strings.Contains(err.Error(), "outbox of namespace "+tallyNS+" is full") {
		t.Errorf("the error says %q", err)
	}
	if c := counter(t, rs); c != "1" {
		t.Fatalf("a refused commit applied its write: the counter is %s", c)
	}
	if v, _ := a.rdb.Get(ctx, redisKey(Key{"c2", "resp"})).Result(); v == "" || v[0] != claimMark {
		t.Fatalf("after a refused commit the key holds %q, want the claim", v)
	}
	// Bytes: a body over what is left.
	big := []state.Message{{ID: "big", Body: make([]byte, 990), NS: tallyNS}}
	q, _ := ob.Queued(ctx, 10)
	keys := [][]byte{q[0].Key, q[1].Key}
	if err := ob.Dequeue(ctx, keys); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CommitOutcome(e, "2", time.Time{}, []state.Op{addOp(t, rs)}, msgs(tallyNS, "c2", 1), "unknown"); err != nil {
		t.Fatalf("after the outbox drained: %v", err)
	}
	e3 := claimFirst(t, a, "c3")
	if _, err := a.CommitOutcome(e3, "3", time.Time{}, nil, big, "unknown"); !errors.As(err, &qe) || qe.What != "outbox bytes" {
		t.Fatalf("a message over the bytes left: %v", err)
	}
	if _, err := ob.Queued(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if got := rs.OutboxBytesIn(tallyNS); got != int64(len("c2-0")+len("body of c2")) {
		t.Fatalf("OutboxBytesIn = %d", got)
	}
	// The guest is told at publish, in its namespace only.
	tx := state.NewTxn(rs, rs.Limits(), time.Now)
	if err := tx.Publish(tallyNS, make([]byte, 990)); !errors.As(err, &qe) {
		t.Fatalf("a publish over what the outbox has left: %v", err)
	}
	if err := tx.Publish("plugin/other", make([]byte, 990)); err != nil {
		t.Fatalf("a publish into another namespace's outbox: %v", err)
	}
}

// The streams, their counters and the index of a host set are keys of
// the namespace's hash tag (the stream and counter: one slot with the
// namespace's keys on a cluster).
func TestRedisOutboxKeys(t *testing.T) {
	for _, c := range []struct{ ns, group, stream, counter string }{
		{"plugin/a}b", "g1", "cmdhost:state:{plugin/a%7Db}:q:g1", "cmdhost:state:{plugin/a%7Db}:qb:g1"},
		{"plugin/x:q:y", "host:q:z", "cmdhost:state:{plugin/x:q:y}:q:host:q:z", "cmdhost:state:{plugin/x:q:y}:qb:host:q:z"},
	} {
		o := &RedisOutbox{cfg: RedisOutboxConfig{Group: c.group}}
		stream, counter := o.streamOf(c.ns)
		if stream != c.stream || counter != c.counter || counterOf(stream) != counter {
			t.Errorf("%s, %s: stream %s, counter %s (%s from the stream)", c.ns, c.group, stream, counter, counterOf(stream))
		}
	}
}

// On a Redis Cluster each namespace's stream is in its slot: a call's
// writes and messages commit together there (the outcome after, in the
// request's slot), a trigger's messages alone too, and the sender reads
// and takes out the streams of every node.
func TestRedisOutboxOnCluster(t *testing.T) {
	rc := testkit.StartRedisCluster(t, 3)
	d := dedupWith(t, RedisConfig[string]{URL: rc.URL, Name: "a"})
	defer d.Close()
	rs := d.State(state.Limits{})
	ob := d.Outbox(RedisOutboxConfig{Group: "host", Consumer: "a"})
	ctx := context.Background()
	want := map[string]bool{}
	for i := range 12 {
		ns := fmt.Sprintf("plugin/p%d", i)
		op := state.Op{Kind: state.OpSet, NS: ns, Key: []byte("k"), Value: []byte("v")}
		ms := msgs(ns, fmt.Sprintf("call%d", i), 2)
		if i%2 == 0 {
			e, first, err := d.Claim("inv", Key{fmt.Sprintf("c%d", i), "resp"}, time.Now().Add(time.Minute), false)
			if err != nil || !first {
				t.Fatalf("claim: %v", err)
			}
			if got, err := d.CommitOutcome(e, "ok", time.Time{}, []state.Op{op}, ms, "unknown"); err != nil || got != "ok" {
				t.Fatalf("CommitOutcome in %s: %q %v", ns, got, err)
			}
		} else if _, err := rs.Commit(ctx, &state.Commit{Messages: ms}); err != nil {
			t.Fatalf("a commit of messages alone in %s: %v", ns, err)
		}
		for _, m := range ms {
			want[m.ID] = true
		}
	}
	q, err := ob.Queued(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([][]byte, 0, len(q))
	for _, m := range q {
		if !want[m.ID] {
			t.Errorf("queued %s: not committed, or twice", m.ID)
		}
		delete(want, m.ID)
		keys = append(keys, m.Key)
	}
	if len(want) > 0 {
		t.Fatalf("not queued: %v", want)
	}
	if err := ob.Dequeue(ctx, keys); err != nil {
		t.Fatal(err)
	}
	if again, err := ob.Queued(ctx, 100); err != nil || len(again) != 0 || ob.OutboxBytes() != 0 {
		t.Fatalf("after Dequeue: %q %v, %d bytes", queuedIDs(again), err, ob.OutboxBytes())
	}
}

// Over rediss:// as an ACL user allowed only the keys cmdhost:* (the
// set-up docs/operations.md gives), the outbox commits, reads and takes
// out its messages: every key it uses is one of those.
func TestRedisOutboxOverTLS(t *testing.T) {
	pki := testkit.NewPKI(t)
	r := testkit.StartSecureRedis(t, testkit.RedisOptions{TLS: pki, Users: map[string]string{"cmdhost": "pw"}})
	d := dedupWith(t, RedisConfig[string]{URL: strings.Replace(r.URL, "rediss://", "rediss://cmdhost@", 1), Name: "a",
		TLS: tlsTo(t, pki, "", ""), Password: func() (string, error) { return "pw", nil }})
	defer d.Close()
	rs := d.State(state.Limits{})
	ob := d.Outbox(RedisOutboxConfig{Group: "host", Consumer: "a", ClaimIdle: time.Millisecond})
	e := claimFirst(t, d, "c1")
	if _, err := d.CommitOutcome(e, "1", time.Time{}, []state.Op{addOp(t, rs)}, msgs(tallyNS, "c1", 2), "unknown"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	q, err := ob.Queued(ctx, 10) // a takeover round too (ClaimIdle 1 ms): XAUTOCLAIM, XINFO CONSUMERS
	if err != nil || queuedIDs(q) != "c1-0 c1-1" {
		t.Fatalf("queued %q %v", queuedIDs(q), err)
	}
	if err := ob.Dequeue(ctx, [][]byte{q[0].Key, q[1].Key}); err != nil {
		t.Fatal(err)
	}
	if again, err := ob.Queued(ctx, 10); err != nil || len(again) != 0 {
		t.Fatalf("after Dequeue: %q %v", queuedIDs(again), err)
	}
}
