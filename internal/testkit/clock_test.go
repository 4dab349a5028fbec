package testkit_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

var start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// A timer fires when the clock reaches its time, not before; a stopped
// one never does.
func TestClockFiresDueTimers(t *testing.T) {
	c := testkit.NewClock(start)
	var a, b atomic.Int64
	c.AfterFunc(time.Second, func() { a.Add(1) })
	stopped := c.AfterFunc(time.Second, func() { b.Add(1) })
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop: want true once, then false")
	}
	c.Add(time.Second - time.Nanosecond)
	if a.Load() != 0 || c.Pending() != 1 {
		t.Fatalf("before its time: fired %d, %d armed", a.Load(), c.Pending())
	}
	c.Add(time.Nanosecond)
	if a.Load() != 1 || b.Load() != 0 || c.Pending() != 0 {
		t.Fatalf("at its time: fired %d and %d, %d armed", a.Load(), b.Load(), c.Pending())
	}
	if got := c.Now(); !got.Equal(start.Add(time.Second)) {
		t.Fatalf("Now = %v", got)
	}
}

// NextTimer returns the timer another goroutine arms, once it is armed:
// the test waits on the arming, not on the wall clock.
func TestClockNextTimer(t *testing.T) {
	c := testkit.NewClock(start)
	fired := make(chan struct{})
	go c.AfterFunc(3*time.Second, func() { close(fired) })
	tm := c.NextTimer(t)
	if tm.Duration() != 3*time.Second || !tm.When().Equal(start.Add(3*time.Second)) {
		t.Fatalf("timer for %v at %v", tm.Duration(), tm.When())
	}
	c.WaitTimers(t, 1)
	tm.Fire()
	<-fired
	if !c.Now().Equal(tm.When()) {
		t.Fatalf("Fire left the clock at %v, want %v", c.Now(), tm.When())
	}
}

// A ChanTimer on the fake clock: it sends when the clock passes its time,
// and after Stop or Reset no stale time is left in C.
func TestChanTimerOnClock(t *testing.T) {
	c := testkit.NewClock(start)
	tm := clock.NewTimer(c, time.Second)
	c.Add(time.Second)
	select {
	case at := <-tm.C:
		if !at.Equal(start.Add(time.Second)) {
			t.Fatalf("sent %v", at)
		}
	default:
		t.Fatal("nothing sent at the timer's time")
	}
	tm.Reset(time.Second)
	c.Add(time.Second) // fires; the time waits in C
	if !tm.Stop() {
		t.Fatal("Stop of a fired, unreceived timer: want true")
	}
	select {
	case at := <-tm.C:
		t.Fatalf("stale time %v after Stop", at)
	default:
	}
	tm.Reset(2 * time.Second)
	c.Add(time.Second)
	tm.Reset(2 * time.Second) // the first arming must not fire now
	c.Add(time.Second)
	select {
	case at := <-tm.C:
		t.Fatalf("a reset timer fired at %v", at)
	default:
	}
	c.Add(time.Second)
	if _, ok := <-tm.C; !ok {
		t.Fatal("closed")
	}
}

// The system clock's ChanTimer fires on the wall clock.
func TestChanTimerOnSystemClock(t *testing.T) {
	tm := clock.NewTimer(nil, time.Millisecond)
	select {
	case <-tm.C:
	case <-time.After(testkit.Patience()):
		t.Fatal("the system clock's timer never fired")
	}
}

func TestWaitFor(t *testing.T) {
	var n atomic.Int64
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	testkit.WaitFor(t, "three increments", func() bool { return n.Load() == 3 })
}
