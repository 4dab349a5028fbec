package testkit

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/clock"
)

// Clock is a clock.Clock a test moves by hand: Now is what the test set,
// and a timer fires only when Add moves the clock to its time. A test
// waits for a timer to be armed (NextTimer, WaitTimers) rather than
// sleeping, then moves the clock past it. Safe for concurrent use; Now
// takes no lock, so that a hammer test measures what it calls rather than
// the clock.
//
// Add runs the timers that come due in the calling goroutine, in the
// order of their times and outside the clock's lock: when Add returns,
// their functions have returned too. A timer armed for d <= 0 is due at
// once: its function runs in a goroutine of its own, as time.AfterFunc's
// would.
type Clock struct {
	now atomic.Pointer[time.Time] // written under mu

	mu         sync.Mutex
	pending    []*Timer      // armed: neither stopped nor fired
	all        []*Timer      // every timer made, in order
	next       int           // all[next:] have not been returned by NextTimer
	maxPending int           // most timers armed at once
	changed    chan struct{} // closed and replaced when a timer is armed or leaves pending
	onArm      func()
}

// Timer is a timer of a Clock.
type Timer struct {
	c  *Clock
	d  time.Duration
	at time.Time
	f  func()
}

var _ clock.Clock = (*Clock)(nil)

// NewClock returns a clock that reads start until it is moved.
func NewClock(start time.Time) *Clock {
	c := &Clock{changed: make(chan struct{})}
	c.now.Store(&start)
	return c
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	if t := c.now.Load(); t != nil {
		return *t
	}
	return time.Time{}
}

// AfterFunc arms a timer that calls f once the clock has moved by d.
func (c *Clock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.onArm != nil {
		c.onArm()
	}
	t := &Timer{c: c, d: d, at: c.Now().Add(d), f: f}
	c.all = append(c.all, t)
	if d <= 0 {
		go f()
	} else {
		c.pending = append(c.pending, t)
		c.maxPending = max(c.maxPending, len(c.pending))
	}
	c.signal()
	return t
}

// OnArm sets f to run in AfterFunc, under the clock's lock, before each
// new timer is armed: a test checks there what holds when a timer is
// armed. f must not call the clock.
func (c *Clock) OnArm(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onArm = f
}

// Add moves the clock by d and runs the timers due by then.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.set(c.Now().Add(d))
}

// Set moves the clock to now, backwards too (a clock stepped back by its
// operator), and runs the timers due by then.
func (c *Clock) Set(now time.Time) {
	c.mu.Lock()
	c.set(now)
}

// set is Add and Set: called with mu held, which it releases.
func (c *Clock) set(now time.Time) {
	c.now.Store(&now)
	var due []*Timer
	c.pending = slices.DeleteFunc(c.pending, func(t *Timer) bool {
		if t.at.After(now) {
			return false
		}
		due = append(due, t)
		return true
	})
	if len(due) > 0 {
		c.signal()
	}
	c.mu.Unlock()
	slices.SortStableFunc(due, func(a, b *Timer) int { return a.at.Compare(b.at) })
	for _, t := range due {
		t.f()
	}
}

// Pending returns how many timers are armed.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// MaxPending returns the most timers that were ever armed at once.
func (c *Clock) MaxPending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxPending
}

// Made returns how many timers were made.
func (c *Clock) Made() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.all)
}

// Last returns the latest timer made, nil when none.
func (c *Clock) Last() *Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.all) == 0 {
		return nil
	}
	return c.all[len(c.all)-1]
}

// NextTimer waits for the next timer to be armed and returns it: the
// timers made come out in the order they were armed, each once, whether
// they are still armed or not. It fails the test if none comes within
// Patience.
func (c *Clock) NextTimer(tb testing.TB) *Timer {
	tb.Helper()
	var t *Timer
	c.await(tb, "a timer to be armed", func() bool {
		if c.next == len(c.all) {
			return false
		}
		t = c.all[c.next]
		c.next++
		return true
	})
	return t
}

// WaitTimers waits until n timers are armed, failing the test if that
// does not happen within Patience.
func (c *Clock) WaitTimers(tb testing.TB, n int) {
	tb.Helper()
	c.await(tb, "timers to be armed", func() bool { return len(c.pending) == n })
}

// await waits until cond, called with mu held, holds.
func (c *Clock) await(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	limit := Patience()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		ok, changed, armed := cond(), c.changed, len(c.pending)
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			tb.Fatalf("waited %v for %s; %d armed", limit, what, armed)
		}
	}
}

// signal wakes the waiters of await. Called with mu held.
func (c *Clock) signal() {
	if c.changed != nil {
		close(c.changed)
	}
	c.changed = make(chan struct{})
}

// Duration returns the duration the timer was armed for.
func (t *Timer) Duration() time.Duration { return t.d }

// When returns the clock's time at which the timer is due.
func (t *Timer) When() time.Time { return t.at }

// Stop disarms the timer; false when it had fired or was stopped already.
func (t *Timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	i := slices.Index(t.c.pending, t)
	if i < 0 {
		return false
	}
	t.c.pending = slices.Delete(t.c.pending, i, i+1)
	t.c.signal()
	return true
}

// Fire moves the clock to the timer's time, if it is not there yet, and
// runs the timers due by then, this one included.
func (t *Timer) Fire() {
	t.c.Add(max(t.at.Sub(t.c.Now()), 0))
}

// RunLate calls the timer's function now, whether it was stopped or has
// fired already, as time.AfterFunc may do after a Stop that came too
// late; the timer stays armed if it was.
func (t *Timer) RunLate() { t.f() }
