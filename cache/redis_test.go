package cache

import (
	"errors"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// newRedisDedup is a store of strings on url, closed with the test unless
// the test closes it.
func newRedisDedup(t *testing.T, url, name string) *RedisDedup[string] {
	t.Helper()
	s, err := NewRedisDedup(RedisConfig[string]{URL: url, Name: name,
		Encode: func(v string) ([]byte, error) { return []byte(v), nil },
		Decode: func(b []byte) (string, error) { return string(b), nil },
		OwnerGone: func(idempotent bool) string {
			if idempotent {
				return "send again"
			}
			return "outcome unknown"
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitDone waits for e's outcome (hang guard: a minute).
func waitDone(t *testing.T, e *Entry[string]) string {
	t.Helper()
	select {
	case <-e.Done():
		return e.Value()
	case <-time.After(time.Minute):
		t.Fatal("no outcome within a minute")
		return ""
	}
}

// Two processes share the store: the first receipt on one, a duplicate
// on the other waits for its outcome and gets it; a later duplicate gets
// it at once; another key is a first receipt.
func TestRedisDedupShared(t *testing.T) {
	url := testkit.StartRedis(t).URL
	a, b := newRedisDedup(t, url, "a"), newRedisDedup(t, url, "b")
	defer a.Close()
	defer b.Close()
	key, expiry := Key{"corr-1", "resp"}, time.Now().Add(time.Minute)

	first, ok, err := a.Claim("inv", key, expiry, false)
	if err != nil || !ok {
		t.Fatalf("first receipt: %v %v", ok, err)
	}
	dup, ok, err := b.Claim("inv", key, expiry, false)
	if err != nil || ok {
		t.Fatalf("duplicate on b: first=%v %v", ok, err)
	}
	select {
	case <-dup.Done():
		t.Fatal("the duplicate has an outcome before the first receipt")
	default:
	}
	a.Complete(first, "reply 1", time.Time{})
	if got := waitDone(t, dup); got != "reply 1" {
		t.Errorf("the duplicate on b got %q", got)
	}
	for _, s := range []*RedisDedup[string]{a, b} {
		late, ok, err := s.Claim("inv", key, expiry, false)
		if err != nil || ok || waitDone(t, late) != "reply 1" {
			t.Errorf("a late duplicate on %s: first=%v %v", s.instance, ok, err)
		}
		if e := s.Lookup(key); e == nil || waitDone(t, e) != "reply 1" {
			t.Errorf("Lookup on %s: %v", s.instance, e)
		}
	}
	if _, ok, _ := b.Claim("inv", Key{"corr-2", "resp"}, expiry, false); !ok {
		t.Error("another key is not a first receipt")
	}
	if a.Len() != 0 || b.Len() != 1 {
		t.Errorf("Len a %d b %d, want 0 and 1 (b's corr-2 in progress)", a.Len(), b.Len())
	}
}

// A process that stops without an outcome: a duplicate of its
// non-idempotent request, waiting or new, gets OwnerGone's stored outcome
// and it never runs again; its idempotent request is claimed again and
// runs.
func TestRedisDedupOwnerGone(t *testing.T) {
	url := testkit.StartRedis(t).URL
	gone, b := newRedisDedup(t, url, "gone"), newRedisDedup(t, url, "b")
	defer b.Close()
	expiry := time.Now().Add(time.Minute)
	nonIdem, idem := Key{"corr-n", "resp"}, Key{"corr-i", "resp"}
	if _, ok, err := gone.Claim("inv", nonIdem, expiry, false); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, ok, err := gone.Claim("inv", idem, expiry, true); !ok || err != nil {
		t.Fatal(ok, err)
	}
	waiting, ok, err := b.Claim("inv", nonIdem, expiry, false)
	if ok || err != nil {
		t.Fatal(ok, err)
	}
	waitingIdem, ok, err := b.Claim("inv", idem, expiry, true)
	if ok || err != nil {
		t.Fatal(ok, err)
	}
	gone.Close() // its heartbeat goes: it is gone at once

	if got := waitDone(t, waiting); got != "outcome unknown" {
		t.Errorf("the waiting duplicate: %q", got)
	}
	if got := waitDone(t, waitingIdem); got != "send again" {
		t.Errorf("the waiting duplicate of the idempotent request: %q", got)
	}
	if e, ok, err := b.Claim("inv", nonIdem, expiry, false); ok || err != nil || waitDone(t, e) != "outcome unknown" {
		t.Errorf("a later duplicate: first=%v %v", ok, err)
	}
	again, ok, err := b.Claim("inv", idem, expiry, true)
	if !ok || err != nil {
		t.Fatalf("the idempotent request sent again: first=%v %v, want it claimed anew", ok, err)
	}
	b.Complete(again, "ran again", time.Time{})
	if e, ok, _ := b.Claim("inv", idem, expiry, true); ok || waitDone(t, e) != "ran again" {
		t.Error("the idempotent request's new outcome is not stored")
	}
}

// Redis down: Claim fails with ErrStoreUnavailable and records nothing;
// Redis back (empty, on the same port): the store serves again after its
// next heartbeat.
func TestRedisDedupUnavailable(t *testing.T) {
	r := testkit.StartRedis(t)
	s := newRedisDedup(t, r.URL, "a")
	defer s.Close()
	r.Kill()
	_, _, err := s.Claim("inv", Key{"corr", "resp"}, time.Now().Add(time.Minute), false)
	if !errors.Is(err, ErrStoreUnavailable) {
		t.Fatalf("Claim with Redis down: %v, want ErrStoreUnavailable", err)
	}
	r.Restart(t)
	// Back: the store serves again once its next heartbeat gets through.
	for deadline := time.Now().Add(time.Minute); ; { // hang guard
		_, ok, err := s.Claim("inv", Key{"corr", "resp"}, time.Now().Add(time.Minute), false)
		if ok && err == nil {
			break
		}
		if !errors.Is(err, ErrStoreUnavailable) || time.Now().After(deadline) {
			t.Fatalf("Claim with Redis back: first=%v %v", ok, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Redis down between a claim and its outcome: the outcome is delivered
// here, a duplicate here gets it, and it is stored once Redis is back
// (persistent), where another process finds it. A claim of this process
// that it holds no receipt for (its Claim's answer was lost with Redis)
// is the next receipt's: it runs, rather than wait for itself.
func TestRedisDedupOutcomeWhileDown(t *testing.T) {
	r := testkit.StartPersistentRedis(t)
	a := newRedisDedup(t, r.URL, "a")
	defer a.Close()
	key, expiry := Key{"corr-down", "resp"}, time.Now().Add(time.Minute)
	e, ok, err := a.Claim("inv", key, expiry, false)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	r.Kill()
	a.Complete(e, "done while down", time.Time{})
	if waitDone(t, e) != "done while down" {
		t.Fatal("the outcome is not delivered")
	}
	if dup, ok, err := a.Claim("inv", key, expiry, false); ok || err != nil || waitDone(t, dup) != "done while down" {
		t.Errorf("a duplicate here while Redis is down: first=%v %v", ok, err)
	}
	r.Restart(t)
	b := newRedisDedup(t, r.URL, "b")
	defer b.Close()
	for deadline := time.Now().Add(time.Minute); ; { // hang guard
		if e := b.Lookup(key); e != nil && waitDone(t, e) == "done while down" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the outcome was not stored when Redis came back")
		}
		time.Sleep(10 * time.Millisecond)
	}

	orphan := Key{"corr-orphan", "resp"}
	if err := a.rdb.Set(t.Context(), redisKey(orphan), formatRedisValue(claimMark, expiry, a.instance), time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := a.Claim("inv", orphan, expiry, false); !ok || err != nil {
		t.Errorf("an orphan claim of this process: first=%v %v, want this receipt to run", ok, err)
	}
}
