package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// A replica slower than a WAIT (connected, in sync, but stalled 2 s, as
// a loaded machine can make it) does not make a commit the primary
// applied answer "unknown": a commit with its request's outcome
// (CommitOutcome), a plain commit with an outcome (RedisState.Commit),
// an outcome stored alone and an outcome stored by Complete each wait
// for the replica, in rounds, and succeed with their results once it
// confirms them.
func TestRedisCommitWaitsForASlowReplica(t *testing.T) {
	rs := testkit.StartRedisSentinel(t)
	d := newRedisDedup(t, rs.URL, "slow-commit")
	defer d.Close()
	testkit.WaitFor(t, "the replica online", func() bool { return d.waitingFor() == 1 })
	warmUp(t, d)
	st := d.State(state.Limits{})
	ctx := context.Background()
	withOutcome := claimFirst(t, d, "with-outcome")
	completed := claimFirst(t, d, "completed")
	set := func(key string) state.Op {
		return state.Op{Kind: state.OpSet, NS: "slow", Key: []byte(key), Value: []byte("v"), If: state.Cond{Absent: true}}
	}
	outcome := func(corr string) *state.Outcome {
		return &state.Outcome{ID: state.OutcomeID{Correlation: corr, ResponseTopic: "r"}, Value: []byte("done " + corr), KeepUntil: time.Now().Add(time.Minute)}
	}

	stall := rs.StallReplica(t, 2)
	var wg sync.WaitGroup
	var got string
	var gotErr, commitErr, aloneErr error
	var res []state.Result
	wg.Add(4)
	go func() {
		defer wg.Done()
		got, gotErr = d.CommitOutcome(withOutcome, "ran", time.Time{}, []state.Op{set("a")}, nil, "unknown")
	}()
	go func() {
		defer wg.Done()
		res, commitErr = st.Commit(ctx, &state.Commit{Ops: []state.Op{set("b")}, Outcome: outcome("plain")})
	}()
	go func() {
		defer wg.Done()
		_, aloneErr = st.Commit(ctx, &state.Commit{Outcome: outcome("alone")})
	}()
	go func() {
		defer wg.Done()
		d.Complete(completed, "ran completed", time.Time{})
	}()
	wg.Wait()
	if err := <-stall; err != nil {
		t.Fatal(err)
	}
	if gotErr != nil || got != "ran" {
		t.Errorf("CommitOutcome while the replica stalls 2 s: %q, %v; want ran", got, gotErr)
	}
	if commitErr != nil || len(res) != 1 || res[0].Existed || res[0].Version == 0 {
		t.Errorf("Commit while the replica stalls 2 s: %+v, %v; want the write's result", res, commitErr)
	}
	if aloneErr != nil {
		t.Errorf("an outcome stored alone while the replica stalls 2 s: %v", aloneErr)
	}
	if v := completed.value; v != "ran completed" {
		t.Errorf("Complete while the replica stalls 2 s: %q", v)
	}
	if n := d.Len(); n != 0 {
		t.Errorf("%d outcomes left to store again after the replica confirmed them; want none", n)
	}
	for _, k := range []string{"a", "b"} {
		if it, err := st.Get(ctx, "slow", []byte(k)); err != nil || string(it.Value) != "v" {
			t.Errorf("%s after the commit: %q, %v", k, it.Value, err)
		}
	}
	for _, corr := range []string{"plain", "alone"} {
		if v, ok, err := st.Outcome(ctx, outcome(corr).ID); err != nil || !ok || string(v) != "done "+corr {
			t.Errorf("the outcome %s: %q %v %v", corr, v, ok, err)
		}
	}
}

// A replica stalled past the bound (redisConfirmMax, or the request's
// expiry when sooner) leaves a commit the primary applied unconfirmed:
// it gives the error it gave before the rounds, once the bound has
// passed and not before — a plain commit state.ErrUnknown (it may have
// applied; it did, on the primary), a commit with its request's outcome
// ErrOutcomeUnknown (settled later), an outcome stored alone
// ErrUnavailable.
func TestRedisCommitPastTheReplicaBound(t *testing.T) {
	rs := testkit.StartRedisSentinel(t)
	d := newRedisDedup(t, rs.URL, "lagging-commit")
	defer d.Close()
	testkit.WaitFor(t, "the replica online", func() bool { return d.waitingFor() == 1 })
	warmUp(t, d)
	st := d.State(state.Limits{})
	e, first, err := d.Claim("inv", Key{"expiring", "resp"}, time.Now().Add(3*time.Second), false)
	if err != nil || !first {
		t.Fatalf("claim: %v %v", first, err)
	}

	stall := rs.StallReplica(t, 14)
	stalled := func(what string, took time.Duration) {
		t.Helper()
		select {
		case <-stall:
			t.Fatalf("%s came back after the replica's stall (%v)", what, took)
		default:
		}
	}
	// A request expiring sooner than redisConfirmMax waits until its
	// expiry.
	start := time.Now()
	_, err = d.CommitOutcome(e, "ran", time.Time{}, []state.Op{{Kind: state.OpSet, NS: "slow", Key: []byte("x")}}, nil, "unknown")
	took := time.Since(start)
	stalled("CommitOutcome", took)
	if !errors.Is(err, ErrOutcomeUnknown) || took >= redisConfirmMax {
		t.Errorf("CommitOutcome of a request expiring in 3 s: %v after %v; want %v at its expiry", err, took, ErrOutcomeUnknown)
	}
	// A commit whose context ends in 1 s: the rounds end then, and the
	// settling's tries find it applied, unconfirmed.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start = time.Now()
	_, err = st.Commit(ctx, &state.Commit{Ops: []state.Op{{Kind: state.OpSet, NS: "slow", Key: []byte("y")}}})
	took = time.Since(start)
	stalled("Commit", took)
	if !errors.Is(err, state.ErrUnknown) || took >= redisConfirmMax {
		t.Errorf("Commit with 1 s left: %v after %v; want %v", err, took, state.ErrUnknown)
	}
	// No expiry: redisConfirmMax.
	start = time.Now()
	_, err = st.Commit(context.Background(), &state.Commit{Outcome: &state.Outcome{ID: state.OutcomeID{Correlation: "alone", ResponseTopic: "r"}, Value: []byte("v"), KeepUntil: time.Now().Add(time.Minute)}})
	took = time.Since(start)
	stalled("an outcome stored alone", took)
	if !errors.Is(err, state.ErrUnavailable) || took < redisConfirmMax-10*time.Millisecond {
		t.Errorf("an outcome stored alone: %v after %v; want %v after %v", err, took, state.ErrUnavailable, redisConfirmMax)
	}
	if err := <-stall; err != nil {
		t.Fatal(err)
	}
}

// A round that finds the write gone from the primary (a failover lost
// it: the key holds nothing, or another value) reports it lost at once,
// writes nothing, and does not take Redis for down: the commit is then
// settled as one whose answer was lost, never confirmed in its place.
func TestRedisConfirmWriteFindsTheWriteGone(t *testing.T) {
	rs := testkit.StartRedisSentinel(t)
	d := newRedisDedup(t, rs.URL, "gone")
	defer d.Close()
	testkit.WaitFor(t, "the replica online", func() bool { return d.waitingFor() == 1 })
	ctx := context.Background()
	if err := d.rdb.Set(ctx, "other", "another value", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	short := fmt.Errorf("%w: 0 of 1 replicas", errNotReplicated)
	ours := func(v string) bool { return v == "ours" }
	for _, k := range []string{"missing", "other"} {
		err := d.confirmWrite(short, time.Now().Add(redisConfirmMax), touch(k, ours))
		if !errors.Is(err, errWriteLost) || redisDown(err) || d.down.Load() {
			t.Errorf("confirming %s: %v (down %v); want %v, not down", k, err, d.down.Load(), errWriteLost)
		}
	}
	if n, err := d.rdb.Exists(ctx, "missing").Result(); err != nil || n != 0 {
		t.Errorf("the round wrote the missing key: %d %v", n, err)
	}
	if v, err := d.rdb.Get(ctx, "other").Result(); err != nil || v != "another value" {
		t.Errorf("the other value after the round: %q %v", v, err)
	}
	// The value held: confirmed by the healthy replica.
	if err := d.rdb.Set(ctx, "held", "ours", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := d.confirmWrite(short, time.Now().Add(redisConfirmMax), touch("held", ours)); err != nil {
		t.Errorf("confirming a write the primary holds, replica healthy: %v", err)
	}
	if ttl, err := d.rdb.PTTL(ctx, "held").Result(); err != nil || ttl <= 0 {
		t.Errorf("the round kept the key's expiry: %v %v", ttl, err)
	}
}
