package cache

import "time"

// Why the store is bounded in bytes: its entries are protected until
// their request's expiry (up to the host's maximum expiry, an hour by
// default), and MaxEntries bounds how many, not how large. Without a byte
// bound, a few hundred requests whose replies are megabytes each would
// hold gigabytes for that long.
//
// What it does instead of forgetting: a request's entry is never removed
// early (a non-idempotent command must not run twice), so when an outcome
// does not fit, the entry keeps a digest of it (ByteBound.Digest: a
// small outcome saying the reply is no longer held) and the outcome itself
// is left to the garbage collector once its first receipt is answered.
// The entry still answers duplicates, with the digest, and the request is
// never run again. Outcomes no larger than their digest are kept whole
// (the Digest function decides: it may return its argument), so the bytes
// held can pass MaxBytes by at most MaxEntries small digests.

// ByteBound bounds the outcomes a DedupStore holds in bytes
// (NewBoundedDedupStore). The zero ByteBound bounds nothing and counts
// every outcome as 0 bytes.
type ByteBound[V any] struct {
	// MaxBytes bounds the bytes of the outcomes held, as Size counts
	// them; zero or less means no bound but DedupConfig.MaxEntries. An
	// outcome that would take the store over it is kept as its Digest.
	// With MaxBytes, Size and Digest are required.
	MaxBytes int64
	// Size returns the bytes an outcome holds (its payload and the
	// like); nil counts every outcome as 0 bytes. Without MaxBytes it
	// still feeds DedupStats.Bytes.
	Size func(V) int64
	// Digest returns what to keep in place of an outcome too large for
	// MaxBytes: a small outcome that duplicates get instead (it should
	// say that the reply is no longer held), or the outcome itself when
	// it is no larger than that. It must be cheap and must not block;
	// the store calls it outside its lock.
	Digest func(V) V
}

// DedupStats are a dedup store's byte counters.
type DedupStats struct {
	// Bytes is what the held outcomes weigh, as ByteBound.Size counts
	// them (digests included).
	Bytes int64
	// Digested counts the outcomes kept as their digest because the
	// whole one would have taken the store over ByteBound.MaxBytes.
	Digested int64
}

// Stats returns the store's byte counters.
func (s *DedupStore[V]) Stats() DedupStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return DedupStats{Bytes: s.bytes, Digested: s.digested}
}

// sizeOf is Size(v), 0 without Size. It calls user code: never with s.mu
// held.
func (s *DedupStore[V]) sizeOf(v V) int64 {
	if s.size == nil {
		return 0
	}
	return max(0, s.size(v))
}

// roomLocked reports whether an outcome of size bytes fits under
// MaxBytes, and under the invoker's share of it (sh, nil when the store
// keeps no shares), evicting completed entries whose request expiry
// passed (the oldest first, as a full store does) until it does. An
// invoker's share of the bytes is its share of the entries
// (DedupConfig.MaxPerInvoker of MaxEntries): one invoker's large replies
// must not take the whole bound, or every other invoker's duplicates
// would get digests for as long as its requests last. Called with s.mu
// held.
func (s *DedupStore[V]) roomLocked(sh *invokerShare[V], size int64, now time.Time) bool {
	if s.maxBytes <= 0 {
		return true
	}
	if sh != nil {
		for sh.bytes+size > s.shareBytes() {
			if !s.evictShareLocked(sh, now) {
				return false
			}
		}
	}
	for s.bytes+size > s.maxBytes {
		if !s.evictLocked(now) {
			return false
		}
	}
	return true
}

// shareBytes is the bytes one invoker's outcomes may weigh: MaxBytes in
// the proportion of its entries to the store's.
func (s *DedupStore[V]) shareBytes() int64 {
	if s.perInvoker <= 0 || s.perInvoker >= s.max {
		return s.maxBytes
	}
	return s.maxBytes / int64(s.max) * int64(s.perInvoker)
}
