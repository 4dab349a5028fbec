package rpc

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// Two executors sharing one Redis, the dedup store carrying the reuse
// cache's calls (cache.ReuseCarrier): a reply computed by one is reused
// by the other for an equivalent request, from Redis (looked up in the
// claim's round trip, stored in the outcome's); the command runs once.
func TestReuseCarriedThroughTheSharedStore(t *testing.T) {
	stores := RedisStores(RedisConfig{URL: testkit.StartRedis(t).URL})
	var runs atomic.Int64
	cmd := func() Command {
		return Command{Name: "tag", Topic: "svc/{commandName}", Idempotent: true, ResponseTTL: time.Hour, Handler: countingHandler(&runs, nil)}
	}
	a := start(t, Config{ExecutorID: "exec-a", Stores: stores}, cmd())
	b := start(t, Config{ExecutorID: "exec-b", Stores: stores}, cmd())
	if a.exec.carrier == nil || b.exec.carrier == nil {
		t.Fatal("the dedup store does not carry the reuse cache")
	}
	first := a.roundTrip(req("svc/tag", 1), 1)
	second := b.roundTrip(req("svc/tag", 2), 1)
	if runs.Load() != 1 {
		t.Fatalf("ran %d times, want once: the other executor reuses the reply", runs.Load())
	}
	if string(second.Payload) != string(first.Payload) {
		t.Errorf("reused %q, executed %q", second.Payload, first.Payload)
	}
	if st := b.exec.ReuseStats(); st.SharedHits != 1 {
		t.Errorf("the second executor's stats %+v, want 1 shared hit", st)
	}
	// A duplicate of the first request (same correlation data) on the
	// second executor gets its outcome, stored with the reply.
	if dup := b.roundTrip(req("svc/tag", 1), 2); string(dup.Payload) != string(first.Payload) || runs.Load() != 1 {
		t.Errorf("the duplicate: %q, %d runs", dup.Payload, runs.Load())
	}
}
