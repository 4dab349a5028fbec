package rpc

import (
	"sync"
	"time"
)

// slots is a command's execution slots (Concurrency of them), granted to
// requests first come, first served. A buffered channel as a semaphore
// would let waiting requests race for a freed slot, so that a request
// could overtake earlier ones still queued; requests take their place in
// line in receive, which runs in receipt order (conformance case
// DispatchConcurrencyBelowNeed_TimeoutErrors: with two slots for three
// stalled requests, the first two run and time out, the third waits).
type slots struct {
	mu      sync.Mutex
	free    int
	waiting []*turn // in receipt order
}

// turn is one request's place in line for a slot.
type turn struct {
	granted chan struct{} // closed when the slot is granted
	at      time.Time     // when it was granted (set before granted is closed)
}

func newSlots(n int) *slots { return &slots{free: n} }

// enqueue takes a place in line without blocking.
func (s *slots) enqueue() *turn {
	t := &turn{granted: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.free > 0 && len(s.waiting) == 0 {
		s.free--
		t.grant()
		return t
	}
	s.waiting = append(s.waiting, t)
	return t
}

func (t *turn) grant() {
	t.at = time.Now()
	close(t.granted)
}

// leave gives up the place of t; a slot granted to it meanwhile is
// released.
func (s *slots) leave(t *turn) {
	s.mu.Lock()
	for i, w := range s.waiting {
		if w == t {
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			s.mu.Unlock()
			return
		}
	}
	s.mu.Unlock()
	s.release()
}

// release hands a slot to the first in line, or frees it.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiting) > 0 {
		s.waiting[0].grant()
		s.waiting = s.waiting[1:]
		return
	}
	s.free++
}
