package cache

import (
	"container/heap"
	"errors"
	"time"
)

// ErrInvokerFull is wrapped by the error DedupStore.BeginFrom returns for a
// new key of an invoker that holds DedupConfig.MaxPerInvoker live entries.
// The host answers 503, as for ErrFull; the other invokers' requests are
// still admitted.
var ErrInvokerFull = errors.New("cache: this invoker's share of the dedup store is full")

// Why invokers have shares: the store's bound is shared by everyone, and
// its entries are protected until their request's expiry, so without
// shares one client sending MaxEntries requests would lock every other
// client out until its requests expire. A share bounds what one invoker
// can hold; the executor's cap on message expiry bounds for how long.
//
// A share holds its invoker's entries to the store's rule: when it is
// full, the invoker's completed entry whose protectUntil passed first is
// evicted to admit its new key; its entries in progress or still
// protected are never evicted, and neither are other invokers' entries.

// invokerShare counts the live entries of one invoker. It exists while the
// invoker holds at least one entry, so the shares never outnumber the
// entries.
type invokerShare[V any] struct {
	name  string
	live  int
	bytes int64 // what its completed entries' outcomes weigh (ByteBound.Size)
	// terminal holds the invoker's completed entries, ordered by
	// protectUntil: the candidates for eviction when the share is full.
	terminal protectHeap[V] // slot inShare
}

// shareLocked returns the share of invoker, nil when the store keeps none
// (no invoker named, or no per-invoker bound) or the invoker holds no
// entries. Called with s.mu held.
func (s *DedupStore[V]) shareLocked(invoker string) *invokerShare[V] {
	if invoker == "" || s.perInvoker <= 0 {
		return nil
	}
	return s.shares[invoker]
}

// joinLocked counts e in the share of invoker, making the share if needed.
// Called with s.mu held.
func (s *DedupStore[V]) joinLocked(e *Entry[V], invoker string) {
	if invoker == "" || s.perInvoker <= 0 {
		return
	}
	sh := s.shares[invoker]
	if sh == nil {
		sh = &invokerShare[V]{name: invoker, terminal: protectHeap[V]{slot: inShare}}
		s.shares[invoker] = sh
	}
	sh.live++
	e.share = sh
}

// leaveLocked takes e out of its share, dropping a share left empty.
// Called with s.mu held.
func (s *DedupStore[V]) leaveLocked(e *Entry[V]) {
	sh := e.share
	if sh == nil {
		return
	}
	if e.pos[inShare] >= 0 {
		heap.Remove(&sh.terminal, e.pos[inShare])
	}
	e.share = nil
	sh.bytes -= e.size
	if sh.live--; sh.live == 0 {
		delete(s.shares, sh.name)
	}
}

// evictShareLocked removes the completed entry of sh whose request expiry
// passed first, if its expiry is before now, and reports whether it did.
// Called with s.mu held.
func (s *DedupStore[V]) evictShareLocked(sh *invokerShare[V], now time.Time) bool {
	if sh.terminal.Len() == 0 || !now.After(sh.terminal.es[0].protectUntil) {
		return false
	}
	s.removeLocked(sh.terminal.es[0])
	s.evicted++
	return true
}
