package cache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// takeAll takes n calls of key at now and returns how many were allowed
// and the last refusal's retry hint.
func takeAll(t *testing.T, q QuotaStore, key string, limit, n int, per time.Duration, now time.Time) (allowed int, retry time.Duration) {
	t.Helper()
	for i := 0; i < n; i++ {
		ok, r, err := q.Take(context.Background(), key, limit, per, now)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			allowed++
		} else {
			retry = r
		}
	}
	return allowed, retry
}

// A quota of N a window lets N calls through and refuses the next, with
// the time left in the window; the next window counts from zero; keys and
// windows of another length count apart.
func testQuota(t *testing.T, q QuotaStore) {
	t0 := time.Unix(1_800_000_000, 250_000_000) // 250 ms into a second
	if n, retry := takeAll(t, q, "echo:alice", 3, 5, time.Second, t0); n != 3 || retry != 750*time.Millisecond {
		t.Errorf("5 calls at 3/s: %d allowed, retry %v; want 3, 750ms", n, retry)
	}
	if n, _ := takeAll(t, q, "echo:bob", 3, 3, time.Second, t0); n != 3 {
		t.Errorf("bob, beside alice: %d of 3 allowed", n)
	}
	if n, _ := takeAll(t, q, "echo:alice", 3, 1, time.Minute, t0); n != 1 {
		t.Errorf("alice per minute: %d of 1 allowed", n)
	}
	if n, _ := takeAll(t, q, "echo:alice", 3, 1, time.Second, t0.Add(749*time.Millisecond)); n != 0 {
		t.Errorf("alice at the window's last millisecond: %d allowed", n)
	}
	if n, _ := takeAll(t, q, "echo:alice", 3, 4, time.Second, t0.Add(750*time.Millisecond)); n != 3 {
		t.Errorf("alice in the next second: %d of 4 allowed, want 3", n)
	}
}

func TestMemoryQuota(t *testing.T) {
	testQuota(t, NewMemoryQuota(0))
}

// MemoryQuota counts at most its bound of keys: a new key beyond is
// refused with ErrQuotaFull until windows end, and then the ended ones
// are forgotten.
func TestMemoryQuotaBounded(t *testing.T) {
	q := NewMemoryQuota(2)
	t0 := time.Unix(1_800_000_000, 0)
	for _, k := range []string{"a", "b"} {
		if ok, _, err := q.Take(context.Background(), k, 1, time.Second, t0); !ok || err != nil {
			t.Fatalf("%s: %v, %v", k, ok, err)
		}
	}
	if _, _, err := q.Take(context.Background(), "c", 1, time.Second, t0); !errors.Is(err, ErrQuotaFull) {
		t.Fatalf("a third key: %v, want ErrQuotaFull", err)
	}
	if ok, _, err := q.Take(context.Background(), "c", 1, time.Second, t0.Add(time.Second)); !ok || err != nil || q.Len() != 1 {
		t.Fatalf("a third key a second later: %v, %v, %d keys; want it counted alone", ok, err, q.Len())
	}
}

// Two replicas sharing a real Redis count each caller's calls together,
// one round trip a call.
func TestRedisQuotaShared(t *testing.T) {
	r := testkit.StartRedis(t)
	opt, err := redis.ParseURL(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	a, b := redis.NewClient(opt), redis.NewClient(opt)
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	testQuota(t, NewRedisQuota(a))

	t0 := time.Unix(1_800_000_100, 0)
	qa, qb := NewRedisQuota(a), NewRedisQuota(b)
	na, _ := takeAll(t, qa, "shop:carol", 4, 3, time.Second, t0)
	nb, retry := takeAll(t, qb, "shop:carol", 4, 3, time.Second, t0.Add(100*time.Millisecond))
	if na+nb != 4 || retry != 900*time.Millisecond {
		t.Errorf("3 calls on each replica at 4/s: %d + %d allowed, retry %v; want 4 in all, 900ms", na, nb, retry)
	}
	keys, err := a.Keys(context.Background(), redisQuotaPrefix+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys: %v, %v", keys, err)
	}
	for _, k := range keys {
		if ttl := a.PTTL(context.Background(), k).Val(); ttl <= 0 {
			t.Errorf("%s has no expiry (%v)", k, ttl)
		}
	}
}

// An unreachable Redis counts nothing and says so.
func TestRedisQuotaUnreachable(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	if ok, _, err := NewRedisQuota(rdb).Take(context.Background(), "k", 1, time.Second, time.Now()); ok || err == nil {
		t.Fatalf("Take on no Redis: %v, %v; want an error", ok, err)
	}
}

// A full MemoryQuota sweeps again once its earliest window ends, and a
// key of a shorter window added after a sweep moves that time earlier.
func TestMemoryQuotaSweepsWhenAWindowEnds(t *testing.T) {
	q := NewMemoryQuota(2)
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0) // a whole minute
	if ok, _, err := q.Take(ctx, "a", 1, time.Minute, t0); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, _, err := q.Take(ctx, "x", 1, time.Second, t0); err != nil { // the map is not full yet
		t.Fatal(err)
	}
	if _, _, err := q.Take(ctx, "b", 1, time.Minute, t0.Add(2*time.Second)); err != nil {
		t.Fatalf("b after x's window ended: %v", err) // the sweep frees x
	}
	if _, _, err := q.Take(ctx, "c", 1, time.Minute, t0.Add(3*time.Second)); !errors.Is(err, ErrQuotaFull) {
		t.Fatalf("c with a and b counted: %v, want ErrQuotaFull", err)
	}
	if ok, _, err := q.Take(ctx, "c", 1, time.Minute, t0.Add(time.Minute)); !ok || err != nil {
		t.Fatalf("c once the minute ended: %v, %v", ok, err)
	}
}
