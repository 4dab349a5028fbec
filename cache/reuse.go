package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/ristretto/v2"

	"github.com/cmdhost/cmdhost/internal/clock"
)

// DefaultReuseMaxBytes is the cost bound of a ReuseCache whose ReuseConfig
// leaves MaxBytes at zero.
const DefaultReuseMaxBytes int64 = 64 << 20

const (
	// reuseAvgReply is the average reply size assumed to size ristretto's
	// admission counters: about MaxBytes/reuseAvgReply entries fit.
	reuseAvgReply = 1 << 10
	// reuseMinCounters and reuseMaxCounters clamp NumCounters. Ristretto
	// advises about 10 counters per entry the cache holds when full; each
	// counter costs about 3 bytes, so the upper clamp (for MaxBytes of
	// 1.6 GiB and more) keeps the sketch near 40 MiB.
	reuseMinCounters = 10_000
	reuseMaxCounters = 1 << 24
	// reuseBufferItems is the size of ristretto's Get buffers; 64 is its
	// documented good default.
	reuseBufferItems = 64
)

// ReuseConfig configures a ReuseCache. NewReuseCache copies it, so changing a
// config after the call has no effect on the cache.
type ReuseConfig struct {
	// MaxBytes bounds the sum of the costs of the entries held, where the
	// cost of an entry is the size of its reply in bytes as given to Set;
	// zero or less means DefaultReuseMaxBytes.
	//
	// The bound is on payload bytes only: each entry also takes about 300
	// bytes that are not counted (measured: about 250 bytes of ristretto's
	// store item, policy, expiry and metrics maps, plus the 32-byte key), so
	// with 1 KiB replies the heap holds about 1.3 × MaxBytes when full. The
	// cache also has a fixed overhead of about 3 bytes per admission counter
	// (see NewReuseCache) and ristretto's 32768-slot set buffer (256 KiB).
	// Size MaxBytes for the replies and leave headroom for the rest.
	MaxBytes int64
	// Clock decides expiry; nil means the system clock. Tests inject a
	// fake one (testkit.Clock).
	Clock clock.Clock
}

// withDefaults resolves the zero fields (package setting's rule).
func (c ReuseConfig) withDefaults() ReuseConfig {
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultReuseMaxBytes
	}
	c.Clock = clock.OrSystem(c.Clock)
	return c
}

// ReuseStats is a snapshot of a ReuseCache's counters. The counters are read
// one after another while the cache runs, so a snapshot taken during
// concurrent use is approximate; after Wait, with no concurrent calls, it is
// exact.
type ReuseStats struct {
	// Hits counts the Gets that returned a reply.
	Hits int64 `json:"hits"`
	// Misses counts the Gets that returned none: absent, or held but expired
	// by the injected clock.
	Misses int64 `json:"misses"`
	// Evictions counts the entries ristretto's eviction policy removed to make
	// room for others (cost pressure) while they were still fresh. Removals
	// because a TTL passed are not evictions: see ReuseCache.
	Evictions int64 `json:"evictions"`
	// Rejections counts the Sets that stored nothing: refused by ristretto's
	// admission policy (reported after the fact, through OnReject), larger
	// than MaxBytes, or dropped at once because ristretto's set buffer was
	// full (Set returned false). A Set with ttl <= 0 is not counted: storing
	// nothing is what it asks for.
	Rejections int64 `json:"rejections"`
	// CostUsed is the sum of the costs of the entries held, as ristretto's
	// eviction policy accounts it.
	CostUsed int64 `json:"costUsed"`
	// Entries counts the entries held, including expired ones that
	// ristretto's TTL sweep has not removed yet.
	Entries int64 `json:"entries"`
	// SharedHits counts the hits (in Hits too) found in a shared tier
	// (RedisReuse) rather than in memory; SharedErrors, the calls to that
	// tier that failed. Both are zero without one.
	SharedHits   int64 `json:"sharedHits"`
	SharedErrors int64 `json:"sharedErrors"`
	// SharedOverBudget counts the replies kept out of the shared tier
	// because this process's share of it was full (see RedisReuse).
	SharedOverBudget int64 `json:"sharedOverBudget"`
}

// reuseEntry is what the ReuseCache stores in ristretto for one key.
type reuseEntry[V any] struct {
	// key is compared on Get: ristretto identifies keys by two 64-bit hashes,
	// and a reply reused for another request would break the rule that a
	// non-equivalent request is never answered from the cache. The compare is
	// cheap (a ReuseKey is 32 bytes) and makes that rule exact.
	key   string
	value V
	// expiresAt is checked on Get by the injected clock: ristretto's own TTL
	// runs on the wall clock and is swept in 5-second buckets, so it only
	// reclaims memory; it cannot be trusted to hide an expired reply.
	expiresAt time.Time
}

// ReuseCache is the executor's cache for reusing the reply of an idempotent
// command for an equivalent request (same command, topic, payload and content
// type, new correlation data). It is a ristretto cache weighted by reply
// bytes and bounded by ReuseConfig.MaxBytes, with a TTL per reply.
//
// Reuse is an optimization, never a correctness requirement: an idempotent
// command may run again at no cost but time. So this cache may drop any entry
// at any time: ristretto's TinyLFU admission may refuse a new reply, and its
// sampled-LFU eviction removes the least used replies when the costs would
// exceed MaxBytes. Its only duty is never to return a reply whose TTL has
// passed (or one stored under another key); Get checks both itself.
//
// Deduplication of repeated requests (same correlation data) is the strict
// DedupStore's job, which must never forget an entry early. The two are
// separate types with separate memory bounds, so size pressure here can never
// touch a deduplication entry.
//
// Ristretto applies Sets asynchronously, through a buffer drained by one
// goroutine: a Set is visible to Get only once applied (Wait forces that),
// and a Set under heavy contention may be dropped. Both are fine for reuse.
// Gets never wait for Sets: they take only the read side of a lock that
// Close alone takes for writing.
//
// Values are stored and returned as is: a reply such as a []byte must not be
// modified after Set, since Gets share it.
//
// Counting (from ristretto v2.4.2's source): ristretto reports through
// OnEvict the victims of its cost policy, the entries its TTL sweep removes,
// and on Close everything it clears. Only the first kind is counted in
// ReuseStats.Evictions. A policy victim is reported with a zero Expiration
// and its cost (ristretto builds it from the policy's key and cost), whereas
// the sweep reports the entry's expiration, never zero since this cache
// always sets a TTL, and Close's clearing reports a zero cost; reports once
// Close began are ignored anyway. A victim that was already past its
// expiresAt lost nothing, so it is not counted either.
type ReuseCache[V any] struct {
	rc       *ristretto.Cache[string, reuseEntry[V]]
	now      func() time.Time
	maxBytes int64

	// stale counts the ristretto hits that Get did not return (expired by
	// c.now, or another key under the same hashes): ristretto counted them
	// as hits, ReuseStats counts them as misses.
	stale      atomic.Int64
	evictions  atomic.Int64
	rejections atomic.Int64

	// mu lets Close run while Gets and Sets are still in flight (an
	// executor stopping on a deadline): ristretto's Close closes channels
	// that its Get and Set send on, so calls hold mu for reading and Close
	// takes it for writing. Its cost is two atomic adds per call; in-flight
	// counters striped by key measured the same on two cores (within noise),
	// so the plain lock stays.
	mu        sync.RWMutex
	closing   bool // guarded by mu: no call reaches ristretto once set
	closeOnce sync.Once
	// closed is set once final holds Close's snapshot, before ristretto's
	// Close clears every entry: OnEvict and OnReject then count nothing.
	closed atomic.Bool
	final  ReuseStats
}

// NewReuseCache returns an empty cache configured by cfg.
//
// Ristretto's NumCounters (its admission frequency counters) is set to about
// 10 per entry the cache holds when full, assuming 1 KiB replies: MaxBytes/1
// KiB × 10, at least 10,000 and at most 2^24. Its metrics are enabled: they
// give Hits, Misses and Entries from counters striped across cache lines,
// cheaper under parallel Gets than one shared atomic.
func NewReuseCache[V any](cfg ReuseConfig) (*ReuseCache[V], error) {
	cfg = cfg.withDefaults()
	c := &ReuseCache[V]{now: cfg.Clock.Now, maxBytes: cfg.MaxBytes}
	rc, err := ristretto.NewCache(&ristretto.Config[string, reuseEntry[V]]{
		NumCounters: reuseCounters(c.maxBytes),
		MaxCost:     c.maxBytes,
		BufferItems: reuseBufferItems,
		Metrics:     true,
		// The cost given to Set is the reply size; adding ristretto's
		// per-item overhead would make MaxBytes a mix of payload and
		// bookkeeping bytes. ReuseConfig.MaxBytes documents the overhead.
		IgnoreInternalCost: true,
		OnEvict:            c.onEvict,
		OnReject:           c.onReject,
	})
	if err != nil {
		return nil, fmt.Errorf("cache: reuse cache: %w", err)
	}
	c.rc = rc
	return c, nil
}

// reuseCounters returns the NumCounters for a cache bounded by maxBytes.
func reuseCounters(maxBytes int64) int64 {
	n := maxBytes / reuseAvgReply * 10
	return min(max(n, reuseMinCounters), reuseMaxCounters)
}

// Get returns the reply stored under key, if it is held and its TTL has not
// passed by the configured clock: at its expiry instant an entry is already
// expired, since reuse is optional and erring towards running the command is
// safe. It counts a hit or a miss.
func (c *ReuseCache[V]) Get(key string) (V, bool) {
	var zero V
	c.mu.RLock()
	if c.closing {
		c.mu.RUnlock()
		return zero, false
	}
	e, ok := c.rc.Get(key) // counts the hit or miss in ristretto's metrics
	c.mu.RUnlock()
	if !ok {
		return zero, false
	}
	if e.key != key || !c.now().Before(e.expiresAt) {
		c.stale.Add(1) // turns ristretto's hit into a miss
		return zero, false
	}
	return e.value, true
}

// Set offers v as the reply under key for ttl, weighing cost bytes (a cost
// below 1 counts as 1). It also gives ristretto the TTL, so that ristretto's
// sweep reclaims the memory of expired replies nobody asks for again.
//
// A ttl <= 0 stores nothing (the command's reply is not cacheable) and
// returns false. Set also returns false when the reply is larger than
// MaxBytes, when ristretto's set buffer is full, or after Close. It returns
// true when the reply was handed to ristretto: the reply may still be
// refused by the admission policy (counted in ReuseStats.Rejections) or
// evicted later. Setting a held key replaces its reply, TTL and cost.
func (c *ReuseCache[V]) Set(key string, v V, cost int64, ttl time.Duration) bool {
	if ttl <= 0 {
		return false
	}
	if cost < 1 {
		cost = 1
	}
	if cost > c.maxBytes { // ristretto would reject it too, later
		c.rejections.Add(1)
		return false
	}
	e := reuseEntry[V]{key: key, value: v, expiresAt: c.now().Add(ttl)}
	c.mu.RLock()
	if c.closing {
		c.mu.RUnlock()
		return false
	}
	ok := c.rc.SetWithTTL(key, e, cost, ttl)
	c.mu.RUnlock()
	if !ok {
		c.rejections.Add(1)
	}
	return ok
}

// Wait blocks until every Set made before it has been applied (admitted,
// rejected or used as an update), so that a Get after Wait sees it. Tests use
// it; the executor never needs to.
func (c *ReuseCache[V]) Wait() {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.closing {
		c.rc.Wait()
	}
}

// Stats returns a snapshot of the cache's counters. After Close it returns
// the snapshot Close took.
func (c *ReuseCache[V]) Stats() ReuseStats {
	if c.closed.Load() {
		return c.final
	}
	return c.snapshot()
}

// snapshot reads the counters. Each subtrahend is read before the counter it
// is subtracted from, and is always incremented after it, so the
// differences are never negative.
func (c *ReuseCache[V]) snapshot() ReuseStats {
	m := c.rc.Metrics
	stale := c.stale.Load()
	evicted := m.KeysEvicted()
	s := ReuseStats{
		Hits:       int64(m.Hits()) - stale,
		Misses:     int64(m.Misses()) + stale,
		Evictions:  c.evictions.Load(),
		Rejections: c.rejections.Load(),
		// Ristretto's policy tracks the cost it enforces MaxCost with;
		// counting it again here would need to know which buffered Sets
		// the policy admitted, which it decides later and elsewhere.
		CostUsed: c.rc.MaxCost() - c.rc.RemainingCost(),
		// keys-evicted counts every removal from the policy: cost
		// victims, TTL sweeps and deletes.
		Entries: int64(m.KeysAdded() - evicted),
	}
	return s
}

// Close stops ristretto's goroutines and releases every entry, after the
// Gets, Sets and Waits in flight have returned and the buffered Sets have
// been applied; it keeps a last snapshot for Stats. Calls during or after
// Close do nothing: Get misses, Set returns false. It is safe to call Close
// concurrently with them, and again.
func (c *ReuseCache[V]) Close() {
	c.closeOnce.Do(func() {
		c.mu.Lock() // waits for the calls in flight
		defer c.mu.Unlock()
		c.closing = true
		c.rc.Wait()
		c.final = c.snapshot()
		c.closed.Store(true)
		c.rc.Close()
	})
}

// onEvict is ristretto's OnEvict. It counts the cost-policy victims that were
// still fresh; see ReuseCache for how they are told from TTL removals.
func (c *ReuseCache[V]) onEvict(it *ristretto.Item[reuseEntry[V]]) {
	if !it.Expiration.IsZero() || it.Cost <= 0 || c.closed.Load() {
		return // TTL sweep (with a cost of -1 for a key already gone), or Close
	}
	if !c.now().Before(it.Value.expiresAt) {
		return // expired already: dropping it lost nothing
	}
	c.evictions.Add(1)
}

// onReject is ristretto's OnReject: the admission policy refused a buffered
// Set.
func (c *ReuseCache[V]) onReject(*ristretto.Item[reuseEntry[V]]) {
	if !c.closed.Load() {
		c.rejections.Add(1)
	}
}

// ReuseKey returns the cache key of a request made of parts: a 32-byte
// SHA-256 digest (a binary string, not for display) of the parts, each
// prefixed by its length as 8 bytes, so that different sequences of parts
// never encode alike (["ab", "c"] and ["a", "bc"] differ, as do [] and [""]).
//
// The executor passes what makes requests equivalent (PROTOCOL.md, "Dedup
// and reuse"): the command name, the request topic, the content type and the
// payload, and for a request addressed to one specific executor also the
// invoker's identity, so that its replies are reused only for that invoker.
func ReuseKey(parts ...[]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	var sum [sha256.Size]byte
	return string(h.Sum(sum[:0]))
}
