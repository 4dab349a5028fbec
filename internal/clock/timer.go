package clock

import (
	"sync"
	"time"
)

// ChanTimer is a timer that sends the time on C when it fires, like
// time.Timer, on any Clock: what a select loop waits on. It is built on
// the clock's AfterFunc, so a fake clock drives it too.
//
// As with time.Timer since Go 1.23, no stale value is left in C: after
// Stop or Reset returns, a receive from C gets only a time sent by a
// firing armed after that. Safe for concurrent use.
type ChanTimer struct {
	// C receives the time (the clock's Now) when the timer fires.
	C <-chan time.Time

	clock Clock
	ch    chan time.Time

	mu      sync.Mutex
	pending Timer  // the armed call; nil when none
	gen     uint64 // bumped by every Stop and Reset: a call of an older one sends nothing
}

// NewTimer returns a timer on c (nil: the system clock) that fires once
// d has elapsed.
func NewTimer(c Clock, d time.Duration) *ChanTimer {
	ch := make(chan time.Time, 1)
	t := &ChanTimer{C: ch, clock: OrSystem(c), ch: ch}
	t.Reset(d)
	return t
}

// Stop prevents the timer from firing and reports whether it did: false
// means it had fired and its time was received, or it was stopped already.
func (t *ChanTimer) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stop()
}

// Reset stops the timer and arms it to fire once d has elapsed; it
// reports whether the timer was active, as Stop does.
func (t *ChanTimer) Reset(d time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	active := t.stop()
	gen := t.gen
	t.pending = t.clock.AfterFunc(d, func() { t.fire(gen) })
	return active
}

// stop disarms the timer and drops a time sent but not received. Called
// with mu held.
func (t *ChanTimer) stop() bool {
	t.gen++
	active := t.pending != nil && t.pending.Stop()
	t.pending = nil
	select {
	case <-t.ch:
		active = true // fired, but nobody had its time yet
	default:
	}
	return active
}

// fire is the call armed by Reset for generation gen.
func (t *ChanTimer) fire(gen uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if gen != t.gen {
		return // stopped or reset since: its time must not reach C
	}
	t.pending = nil
	select {
	case t.ch <- t.clock.Now():
	default:
	}
}
