package cache

import (
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// newRedisReuse is a reuse cache of strings on url with its clock,
// closed with the test.
func newRedisReuse(t *testing.T, url string, clock *testkit.Clock) *RedisReuse[string] {
	t.Helper()
	c, err := NewRedisReuse(RedisReuseConfig[string]{URL: url, Local: ReuseConfig{MaxBytes: 1 << 20, Clock: clock},
		Encode: func(v string) ([]byte, error) { return []byte(v), nil },
		Decode: func(b []byte) (string, error) { return string(b), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// A reply set on one replica is reused by another, from Redis once and
// from its own memory after that, until its TTL passes by the replica's
// clock; another key misses.
func TestRedisReuseShared(t *testing.T) {
	url := testkit.StartRedis(t).URL
	clock := newClock()
	a, b := newRedisReuse(t, url, clock), newRedisReuse(t, url, clock)
	key := ReuseKey([]byte("lookup"), []byte("payload"))

	if _, ok := b.Get(key); ok {
		t.Fatal("a hit before any Set")
	}
	a.Set(key, "reply", 5, time.Minute)
	a.Wait()
	for i := range 2 {
		if v, ok := b.Get(key); !ok || v != "reply" {
			t.Fatalf("Get %d on the other replica: %q %v", i, v, ok)
		}
		b.Wait() // the reply found in Redis is kept in memory
	}
	if s := b.Stats(); s.Hits != 2 || s.SharedHits != 1 || s.Misses != 1 || s.SharedErrors != 0 {
		t.Errorf("the other replica's stats: %+v, want 2 hits (1 shared), 1 miss", s)
	}
	if _, ok := b.Get(ReuseKey([]byte("lookup"), []byte("other"))); ok {
		t.Error("another key hits")
	}

	clock.Add(time.Minute)
	for name, c := range map[string]*RedisReuse[string]{"a": a, "b": b} {
		if v, ok := c.Get(key); ok {
			t.Errorf("%s reuses %q past its TTL", name, v)
		}
	}
	c := newRedisReuse(t, url, clock) // a replica started later: Redis holds it, expired
	if v, ok := c.Get(key); ok {
		t.Errorf("a new replica reuses %q past its TTL", v)
	}
}

// With Redis gone, the cache is its memory tier: Sets and Gets work
// there, each failed Redis call is counted, and once Redis is back (and
// the back-off over) replies are shared again.
func TestRedisReuseUnavailable(t *testing.T) {
	r := testkit.StartRedis(t)
	clock := newClock()
	a, b := newRedisReuse(t, r.URL, clock), newRedisReuse(t, r.URL, clock)
	wall := newClock() // the back-off's clock: it moves only when the test says
	a.wall, b.wall = wall.Now, wall.Now
	r.Kill()

	key := ReuseKey([]byte("down"))
	if !a.Set(key, "local", 5, time.Minute) {
		t.Fatal("the memory tier refused the Set")
	}
	a.Wait()
	if v, ok := a.Get(key); !ok || v != "local" {
		t.Errorf("the memory tier lost the reply: %q %v", v, ok)
	}
	if _, ok := b.Get(key); ok {
		t.Error("the other replica found a reply Redis never got")
	}
	if a.Stats().SharedErrors != 1 || b.Stats().SharedErrors != 1 {
		t.Errorf("failed calls: a %d, b %d, want 1 each", a.Stats().SharedErrors, b.Stats().SharedErrors)
	}
	b.Get(key) // within b's back-off: Redis is not asked
	if n := b.Stats().SharedErrors; n != 1 {
		t.Errorf("b asked Redis during its back-off: %d failures", n)
	}

	r.Restart(t)
	wall.Add(redisReuseBackoff) // the back-off is over
	key2 := ReuseKey([]byte("back"))
	a.Set(key2, "shared", 6, time.Minute)
	if v, ok := b.Get(key2); !ok || v != "shared" {
		t.Errorf("after the back-off, with Redis back, a reply is not shared: %q %v (failures a %d, b %d)",
			v, ok, a.Stats().SharedErrors, b.Stats().SharedErrors)
	}
}

// One process keeps at most its MaxBytes in Redis: replies past that are
// reused from its memory only, and counted, whatever a client sends.
func TestRedisReuseBudget(t *testing.T) {
	url := testkit.StartRedis(t).URL
	c, err := NewRedisReuse(RedisReuseConfig[string]{URL: url, Local: ReuseConfig{MaxBytes: 4 << 10, Clock: newClock()},
		Encode: func(v string) ([]byte, error) { return []byte(v), nil },
		Decode: func(b []byte) (string, error) { return string(b), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	other := newRedisReuse(t, url, newClock())
	big := string(make([]byte, 1500))
	shared := 0
	for i := range 10 {
		key := ReuseKey([]byte{byte(i)})
		c.Set(key, big, int64(len(big)), time.Hour)
		if _, ok := other.Get(key); ok {
			shared++
		}
	}
	if shared != 2 || c.Stats().SharedOverBudget != 8 {
		t.Errorf("%d of 10 replies of 1.5 KiB reached Redis (%d over budget), want 2 within 4 KiB", shared, c.Stats().SharedOverBudget)
	}
}

// The budget frees what has expired.
func TestSharedBudgetReleasesExpired(t *testing.T) {
	b := sharedBudget{max: 100}
	t0 := time.Unix(1_800_000_000, 0)
	if !b.take(60, t0, t0.Add(time.Minute)) || b.take(60, t0, t0.Add(time.Minute)) {
		t.Fatal("a budget of 100 takes 60, then refuses 60 more")
	}
	if !b.take(60, t0.Add(time.Minute), t0.Add(2*time.Minute)) {
		t.Error("the first 60 expired, but the budget did not free them")
	}
}
