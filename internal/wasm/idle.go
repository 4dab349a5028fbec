package wasm

import (
	"sync"
	"time"

	"github.com/cmdhost/cmdhost/internal/clock"
)

// idleTimer calls onIdle once a plugin has had no call running for its
// idle timeout: the time is measured from the end of the last call, and
// while any call runs no timer runs, so a long call is never cut for being
// idle and a plugin's instances go only once it has been unused. Every call
// is bracketed by begin and end; start arms the first timer, at load,
// so a plugin that is never called is released too; stop disarms for good.
//
// State changes under mu, so the rules hold exactly, not just eventually:
//   - a timer is armed only when the count of active calls drops to 0 (or
//     at start, with none active), and begin disarms it when the count
//     leaves 0: no timer is armed while a call is active;
//   - arming happens only with no timer armed, so there is never more than
//     one;
//   - every arm and disarm bumps gen, and a firing timer does nothing
//     unless its generation is still the current one. A timer's function
//     may already be on its way when Stop is called (Stop then returns
//     false and cannot hold it back); it then waits for mu, finds a newer
//     generation, and returns without releasing anything;
//   - onIdle runs under mu, after checking that no call is active, so a
//     call that begins meanwhile waits in begin until the release is over
//     and then makes a fresh instance.
//
// begin and end cost one uncontended mutex each, next to the pool's own two
// per call: small beside a call (microseconds) and far below an
// instantiation. A nil *idleTimer (idle timeout 0) does nothing.
type idleTimer struct {
	timeout time.Duration
	clock   clock.Clock
	onIdle  func()

	mu     sync.Mutex
	active int         // calls between begin and end
	timer  clock.Timer // the armed timer; nil when none
	gen    uint64      // bumped by every arm and disarm; a timer fires only if its generation is current
	closed bool        // stopped: no timer will be armed again
}

// newIdleTimer returns an idle timer that calls onIdle after timeout
// without calls, measured on c (nil: the system clock); nil when
// timeout <= 0, which disables idle release.
func newIdleTimer(timeout time.Duration, c clock.Clock, onIdle func()) *idleTimer {
	if timeout <= 0 {
		return nil
	}
	return &idleTimer{timeout: timeout, clock: clock.OrSystem(c), onIdle: onIdle}
}

// start arms the first timer when no call is active: the idle time of a
// plugin that has not been called yet counts from its load.
func (t *idleTimer) start() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.active == 0 && t.timer == nil {
		t.arm()
	}
}

// begin marks the start of a call, before it acquires an instance; the
// first call to begin disarms the pending timer.
func (t *idleTimer) begin() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.active++
	if t.active == 1 {
		t.disarm()
	}
}

// end marks the end of a call, after its instance was released or
// discarded, whether the call succeeded or not; the last active call to
// end arms the timer.
func (t *idleTimer) end() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.active--
	switch {
	case t.active < 0:
		panic("wasm: idleTimer.end without begin")
	case t.active == 0:
		t.arm()
	}
}

// stop disarms the timer for good; calls may still begin and end.
func (t *idleTimer) stop() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	t.disarm()
}

// arm starts a timer for the current generation. Called with mu held, no
// call active and, by the rules above, no timer armed.
func (t *idleTimer) arm() {
	if t.closed {
		return
	}
	t.disarm() // never two timers, even if a caller broke the rules
	t.gen++
	gen := t.gen
	t.timer = t.clock.AfterFunc(t.timeout, func() { t.fire(gen) })
}

// disarm stops the armed timer, if any, and makes its generation stale so
// that it does nothing should it fire anyway. Called with mu held.
func (t *idleTimer) disarm() {
	if t.timer == nil {
		return
	}
	t.timer.Stop()
	t.timer = nil
	t.gen++
}

// fire is the function of the timer of generation gen.
//
// A timer can fire at the very moment a call begins. Whichever takes mu
// first wins: if begin does, the timer is stale and does nothing; if the
// timer does, it releases and begin waits. Either way onIdle (ReleaseIdle)
// could not take an instance from a call: it closes only the pool's idle
// instances (pool.takeIdle), and an instance is either idle, in the pool's
// stack, or held by a call that took it out under the pool's lock, never
// both. A call that has begun but not yet acquired finds the stack empty
// and makes a fresh instance. So a release racing with calls is safe in
// itself (ReleaseIdle may be called directly at any time); holding mu
// only keeps the release to a moment with no call running.
func (t *idleTimer) fire(gen uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if gen != t.gen || t.timer == nil || t.active > 0 || t.closed {
		return // stale: stopped, or a call began after it was armed
	}
	t.timer = nil
	t.gen++
	t.onIdle()
}
