package cache

import (
	"errors"
	"time"
)

// Dedup is the executor's deduplication store: DedupStore, in memory (the
// default), or RedisDedup, shared by the replicas of a host and by its
// restarts. Both keep the same rule: a request's entry is never forgotten
// before its expiry, and a duplicate gets its first receipt's outcome.
type Dedup[V any] interface {
	// Claim records the first receipt of key (first is true: run it and
	// Complete the entry), or returns the entry of an earlier receipt,
	// whose Done is closed once its outcome is known. idempotent says
	// whether the request's command may run again: a shared store runs
	// it again when the executor that claimed it stopped without an
	// outcome, and answers a non-idempotent one with an outcome of its
	// own (RedisConfig.OwnerGone). invoker names who sent it (see
	// BeginFrom).
	Claim(invoker string, key Key, expiry time.Time, idempotent bool) (e *Entry[V], first bool, err error)
	// Complete stores v as the outcome of the first receipt e (see
	// DedupStore.Complete).
	Complete(e *Entry[V], v V, keepUntil time.Time)
	// Lookup returns the entry of key, nil when there is none; it
	// records nothing.
	Lookup(key Key) *Entry[V]
	// Len is the number of entries this process holds.
	Len() int
	// Stats returns the byte counters of the outcomes this process
	// holds (DedupStats).
	Stats() DedupStats
	// Close stops the store's background work.
	Close()
}

// ErrStoreUnavailable is wrapped by a shared store's Claim when the store
// cannot be reached: nothing is recorded, so a non-idempotent command must
// not run (the executor answers 503), while an idempotent one may run
// without dedup.
var ErrStoreUnavailable = errors.New("cache: the shared dedup store is unreachable")

// ErrStoreFull is wrapped by a shared store's Claim when Redis refused
// the write for want of memory (OOM: its maxmemory reached, and its
// maxmemory-policy evicts nothing). It matches ErrStoreUnavailable
// (errors.Is): nothing is recorded, and the same requests are refused;
// only the fix differs — Redis's memory, not the way to it.
var ErrStoreFull error = storeFull{}

type storeFull struct{}

func (storeFull) Error() string        { return "cache: the shared dedup store is full" }
func (storeFull) Is(target error) bool { return target == ErrStoreUnavailable }

var _ Dedup[int] = (*DedupStore[int])(nil)

// Reuse is the executor's reuse cache of idempotent replies: ReuseCache,
// in memory (the default), or RedisReuse, which keeps a ReuseCache in
// front of Redis so that replicas reuse each other's replies. Either may
// forget any reply at any time.
type Reuse[V any] interface {
	// Get returns the reply under key while its TTL lives.
	Get(key string) (V, bool)
	// Set offers v, weighing cost bytes, under key for ttl; true means
	// the local tier took it (see ReuseCache.Set).
	Set(key string, v V, cost int64, ttl time.Duration) bool
	// Wait returns once the Sets before it are visible to Get.
	Wait()
	// Stats returns the counters.
	Stats() ReuseStats
	// Close stops the cache's background work; later Gets miss.
	Close()
}

var _ Reuse[int] = (*ReuseCache[int])(nil)

// Claim is BeginFrom: in one process, a request's first receipt never
// stops without an outcome, so idempotent changes nothing.
func (s *DedupStore[V]) Claim(invoker string, key Key, expiry time.Time, _ bool) (*Entry[V], bool, error) {
	return s.BeginFrom(invoker, key, expiry)
}

// Close does nothing: the store has no background work.
func (s *DedupStore[V]) Close() {}
