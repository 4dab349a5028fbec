package wasm

import (
	"slices"
	"sync"
	"time"
)

// fakeClock is a Clock that moves only when told to. Advance runs the
// timers that come due, in order, in the calling goroutine and outside the
// clock's lock, so when Advance returns their functions have returned too.
// It keeps count of its timers for tests that check how many are armed.
type fakeClock struct {
	mu         sync.Mutex
	now        time.Time
	pending    []*fakeTimer // armed: neither stopped nor fired
	all        []*fakeTimer // every timer made, in order
	maxPending int          // most timers armed at once
	// onArm, when set, runs in AfterFunc (under the clock's lock) before
	// the new timer is armed.
	onArm func()
}

type fakeTimer struct {
	c  *fakeClock
	at time.Time
	f  func()
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.onArm != nil {
		c.onArm()
	}
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.pending = append(c.pending, t)
	c.all = append(c.all, t)
	c.maxPending = max(c.maxPending, len(c.pending))
	return t
}

// Stop disarms the timer; false when it had fired or was stopped already.
func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	i := slices.Index(t.c.pending, t)
	if i < 0 {
		return false
	}
	t.c.pending = slices.Delete(t.c.pending, i, i+1)
	return true
}

// Advance moves the clock by d and runs the timers due by then.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	c.pending = slices.DeleteFunc(c.pending, func(t *fakeTimer) bool {
		if t.at.After(c.now) {
			return false
		}
		due = append(due, t)
		return true
	})
	c.mu.Unlock()
	slices.SortStableFunc(due, func(a, b *fakeTimer) int { return a.at.Compare(b.at) })
	for _, t := range due {
		t.f()
	}
}

// Pending returns how many timers are armed.
func (c *fakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// MaxPending returns the most timers that were ever armed at once.
func (c *fakeClock) MaxPending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxPending
}

// Made returns how many timers were made.
func (c *fakeClock) Made() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.all)
}

// Last returns the latest timer made, nil when none. Calling its f fires
// it late, as time.AfterFunc may do after a Stop that came too late.
func (c *fakeClock) Last() *fakeTimer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.all) == 0 {
		return nil
	}
	return c.all[len(c.all)-1]
}
