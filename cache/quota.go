package cache

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Per-caller quotas (the operator file's "quota": N calls per second or
// per minute, per caller). A quota counts calls in fixed windows aligned
// on the clock (each second, each minute): the call that makes a window's
// count exceed its limit is refused, and told how long until the window
// ends. QuotaStore is where the counts live: in memory (MemoryQuota, one
// host) or in Redis (RedisQuota, every replica naming it).

// QuotaStore counts calls against quotas.
type QuotaStore interface {
	// Take counts one call of key in the window of length per holding
	// now. ok reports whether it is within limit; when it is not,
	// retryAfter is how long until the window ends. An error (the store
	// unreachable or full) counts nothing.
	Take(ctx context.Context, key string, limit int, per time.Duration, now time.Time) (ok bool, retryAfter time.Duration, err error)
}

// ErrQuotaFull is MemoryQuota's error when it counts MaxKeys keys in
// their windows already: a caller beyond is refused rather than let
// through uncounted, and the store's memory stays bounded.
var ErrQuotaFull = errors.New("too many callers counted at once")

// DefaultQuotaKeys is MemoryQuota's bound when none is given.
const DefaultQuotaKeys = 100_000

// windowOf returns the end of the window of length per holding now.
func windowOf(now time.Time, per time.Duration) time.Time {
	return now.Truncate(per).Add(per)
}

// MemoryQuota is a QuotaStore in memory: the counts of one host. Safe for
// concurrent use (one mutex; a Take is a map lookup).
type MemoryQuota struct {
	maxKeys int

	mu     sync.Mutex
	counts map[quotaKey]*quotaCount
	// nextSweep is when the earliest window counted ends, as the last
	// sweep found it: a full map sweeps again only from then on, when a
	// sweep can free something (not at every new key).
	nextSweep time.Time
}

type quotaKey struct {
	key string
	per time.Duration
}

type quotaCount struct {
	n   int
	end time.Time // the end of the window counted
}

// NewMemoryQuota returns a MemoryQuota counting at most maxKeys keys at
// once (0: DefaultQuotaKeys).
func NewMemoryQuota(maxKeys int) *MemoryQuota {
	if maxKeys <= 0 {
		maxKeys = DefaultQuotaKeys
	}
	return &MemoryQuota{maxKeys: maxKeys, counts: make(map[quotaKey]*quotaCount)}
}

// Take implements QuotaStore.
func (q *MemoryQuota) Take(_ context.Context, key string, limit int, per time.Duration, now time.Time) (bool, time.Duration, error) {
	end := windowOf(now, per)
	k := quotaKey{key, per}
	q.mu.Lock()
	defer q.mu.Unlock()
	c, ok := q.counts[k]
	if !ok {
		if len(q.counts) >= q.maxKeys && !q.sweep(now) {
			return false, 0, ErrQuotaFull
		}
		c = &quotaCount{}
		q.counts[k] = c
		if !q.nextSweep.IsZero() && end.Before(q.nextSweep) {
			q.nextSweep = end // a shorter window than those the sweep saw
		}
	}
	if !c.end.Equal(end) { // a window that ended (or, the clock stepped back, another)
		c.n, c.end = 0, end
	}
	if c.n >= limit {
		return false, end.Sub(now), nil
	}
	c.n++
	return true, 0, nil
}

// sweep forgets the counts of windows that ended before now and reports
// whether that made room. It runs only when the map is full, and not
// before the earliest window it saw ends: one pass per window end at
// most, however many new keys arrive meanwhile.
func (q *MemoryQuota) sweep(now time.Time) bool {
	if now.Before(q.nextSweep) {
		return false
	}
	q.nextSweep = time.Time{}
	for k, c := range q.counts {
		if !c.end.After(now) {
			delete(q.counts, k)
		} else if q.nextSweep.IsZero() || c.end.Before(q.nextSweep) {
			q.nextSweep = c.end
		}
	}
	return len(q.counts) < q.maxKeys
}

// Len returns the number of keys counted (tests).
func (q *MemoryQuota) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.counts)
}
