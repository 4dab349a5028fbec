// Package clock is the one way the host's parts read time and arm timers:
// a Clock, given in their Config, whose nil value means the system clock.
//
// Time is injected so that tests can freeze it: expiry, execution and idle
// timeouts, the dedup store's keep-until, the reuse cache's TTLs and the
// hybrid logical clock all read a Clock, so a test moves time by hand
// (testkit.Clock) and waits on events instead of on the wall clock.
// Before this package each part had its own way in (a Now func field here,
// an interface there) and its own fakes.
//
// The interface is the two primitives every user needs: Now, and
// AfterFunc, a call after a duration that can be stopped. A timer with a
// channel (what select loops wait on) is built on AfterFunc by NewTimer,
// so that a fake clock implements two methods and every kind of timer
// follows it.
package clock

import "time"

// Clock is a source of time and of timers.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f, in its own goroutine, once d has elapsed, unless
	// the returned Timer is stopped first, as time.AfterFunc does. It
	// must not call f from within AfterFunc or Stop: their callers may
	// hold the lock f takes.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending call made by Clock.AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not started yet and reports whether
	// it did; false means the call has run, is running or was stopped
	// already. Like time.Timer.Stop, it does not wait for a running call.
	Stop() bool
}

// System returns the clock of package time.
func System() Clock { return system{} }

// OrSystem returns c, or the system clock when c is nil: how a Config's
// nil Clock is resolved.
func OrSystem(c Clock) Clock {
	if c == nil {
		return system{}
	}
	return c
}

// system is the Clock of package time.
type system struct{}

func (system) Now() time.Time { return time.Now() }

func (system) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
