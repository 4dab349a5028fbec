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
	name string
	live int
	// terminal holds the invoker's completed entries, ordered by
	// protectUntil: the candidates for eviction when the share is full.
	terminal shareHeap[V]
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
		sh = &invokerShare[V]{name: invoker}
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
	if e.sindex >= 0 {
		heap.Remove(&sh.terminal, e.sindex)
	}
	e.share = nil
	if sh.live--; sh.live == 0 {
		delete(s.shares, sh.name)
	}
}

// evictShareLocked removes the completed entry of sh whose request expiry
// passed first, if its expiry is before now, and reports whether it did.
// Called with s.mu held.
func (s *DedupStore[V]) evictShareLocked(sh *invokerShare[V], now time.Time) bool {
	if len(sh.terminal) == 0 || !now.After(sh.terminal[0].protectUntil) {
		return false
	}
	s.removeLocked(sh.terminal[0])
	s.evicted++
	return true
}

// shareHeap is a min-heap of one invoker's completed entries by
// protectUntil.
type shareHeap[V any] []*Entry[V]

func (h shareHeap[V]) Len() int           { return len(h) }
func (h shareHeap[V]) Less(i, j int) bool { return h[i].protectUntil.Before(h[j].protectUntil) }
func (h shareHeap[V]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].sindex = i
	h[j].sindex = j
}

func (h *shareHeap[V]) Push(x any) {
	e := x.(*Entry[V])
	e.sindex = len(*h)
	*h = append(*h, e)
}

func (h *shareHeap[V]) Pop() any {
	old := *h
	n := len(old) - 1
	e := old[n]
	old[n] = nil
	e.sindex = -1
	*h = old[:n]
	return e
}
