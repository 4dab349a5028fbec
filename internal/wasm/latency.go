package wasm

import (
	"slices"
	"sync"
	"time"
)

// latencyWindow keeps the durations of a plugin's last calls, for the
// operator's p50/p99 (`cmdhost plugin list`). A fixed ring: recording is a
// short critical section and memory does not grow with traffic. The ring
// (8 KiB) is made at the first call: a host may load a thousand plugins
// that are seldom or never called.
type latencyWindow struct {
	mu   sync.Mutex
	ring *[1024]time.Duration // nil until the first record
	next int
	full bool
}

func (w *latencyWindow) record(d time.Duration) {
	w.mu.Lock()
	if w.ring == nil {
		w.ring = new([1024]time.Duration)
	}
	w.ring[w.next] = d
	w.next++
	if w.next == len(w.ring) {
		w.next, w.full = 0, true
	}
	w.mu.Unlock()
}

// percentiles returns the p50 and p99 of the window; zeros when empty.
func (w *latencyWindow) percentiles() (p50, p99 time.Duration) {
	w.mu.Lock()
	n := w.next
	if w.full {
		n = len(w.ring)
	}
	if n == 0 {
		w.mu.Unlock()
		return 0, 0
	}
	sample := slices.Clone(w.ring[:n])
	w.mu.Unlock()
	slices.Sort(sample)
	return sample[n/2], sample[(n*99)/100]
}
