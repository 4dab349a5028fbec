package cache

import (
	"container/heap"
	"sync"
	"time"
)

// sharedBudget bounds the bytes one process keeps in a shared tier whose
// entries expire: a reply counts from its Set until its TTL ends (Redis
// then drops it), and a Set that would go over max is not made. Without
// it, one client sending equivalent-free requests to an idempotent
// command with large replies could fill Redis with them, and a Redis
// that is full refuses the dedup store's claims too (503 for every
// non-idempotent request). With it, the reuse cache holds at most max
// bytes per replica in Redis, as it does in memory.
type sharedBudget struct {
	mu   sync.Mutex
	max  int64
	used int64
	held expiringSizes
}

// take reserves size bytes until until, if they fit once what expired by
// now is released; it reports whether they did.
func (b *sharedBudget) take(size int64, now, until time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.held) > 0 && !b.held[0].until.After(now) {
		b.used -= heap.Pop(&b.held).(expiringSize).size
	}
	if b.used+size > b.max {
		return false
	}
	b.used += size
	heap.Push(&b.held, expiringSize{size: size, until: until})
	return true
}

type expiringSize struct {
	size  int64
	until time.Time
}

// expiringSizes is a min-heap by until.
type expiringSizes []expiringSize

func (h expiringSizes) Len() int           { return len(h) }
func (h expiringSizes) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h expiringSizes) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiringSizes) Push(x any)        { *h = append(*h, x.(expiringSize)) }
func (h *expiringSizes) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
