package wasm

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The idle timer on its own, with a fake clock: no sleeps, no guests.

const idleTimeout = 10 * time.Second

// newCountingIdleTimer returns an idle timer on a fake clock and the count
// of its onIdle calls.
func newCountingIdleTimer() (*idleTimer, *testkit.Clock, *atomic.Int64) {
	fc := newFakeClock()
	var idled atomic.Int64
	return newIdleTimer(idleTimeout, fc, func() { idled.Add(1) }), fc, &idled
}

func TestIdleTimerStartsAfterLastCallEnds(t *testing.T) {
	it, fc, idled := newCountingIdleTimer()
	it.begin()
	it.begin() // two calls overlap
	it.end()   // the first ends; the second still runs
	if n := fc.Pending(); n != 0 {
		t.Fatalf("a timer armed while a call runs: %d", n)
	}
	fc.Add(3 * idleTimeout)
	if n := idled.Load(); n != 0 {
		t.Fatalf("released %d times while a call ran", n)
	}
	it.end() // the last call ends: the idle time counts from now
	if n := fc.Pending(); n != 1 {
		t.Fatalf("armed timers after the last call: want 1, got %d", n)
	}
	fc.Add(idleTimeout - time.Nanosecond)
	if n := idled.Load(); n != 0 {
		t.Fatalf("released before the timeout: %d", n)
	}
	fc.Add(time.Nanosecond)
	if n := idled.Load(); n != 1 {
		t.Fatalf("at the timeout: want 1 release, got %d", n)
	}
	if n := fc.Pending(); n != 0 {
		t.Fatalf("a timer still armed after firing: %d", n)
	}
	fc.Add(3 * idleTimeout)
	if n := idled.Load(); n != 1 {
		t.Fatalf("released again without a call: %d", n)
	}
}

func TestIdleTimerNoTimerWhileActive(t *testing.T) {
	it, fc, idled := newCountingIdleTimer()
	for range 3 {
		it.begin()
		if n := fc.Pending(); n != 0 {
			t.Fatalf("a timer armed while a call runs: %d", n)
		}
	}
	for range 2 {
		it.end()
		if n := fc.Pending(); n != 0 {
			t.Fatalf("a timer armed while a call runs: %d", n)
		}
	}
	fc.Add(100 * idleTimeout)
	it.end()
	if n, armed := idled.Load(), fc.Pending(); n != 0 || armed != 1 {
		t.Fatalf("after the last end: %d releases, %d timers armed; want 0 and 1", n, armed)
	}
	if n := fc.MaxPending(); n != 1 {
		t.Fatalf("at most %d timers armed at once; want 1", n)
	}
}

func TestIdleTimerBeginCancelsTimer(t *testing.T) {
	it, fc, idled := newCountingIdleTimer()
	it.begin()
	it.end()
	fc.Add(idleTimeout - time.Nanosecond)
	it.begin() // just in time
	if n := fc.Pending(); n != 0 {
		t.Fatalf("begin left %d timers armed", n)
	}
	fc.Add(3 * idleTimeout)
	if n := idled.Load(); n != 0 {
		t.Fatalf("a canceled timer released %d times", n)
	}
	it.end()
	fc.Add(idleTimeout - time.Nanosecond)
	if n := idled.Load(); n != 0 {
		t.Fatalf("the timer did not restart at the end of the call: released %d times", n)
	}
	fc.Add(time.Nanosecond)
	if n := idled.Load(); n != 1 {
		t.Fatalf("want 1 release, got %d", n)
	}
}

// A timer whose function is already on its way when a call begins (Stop
// comes too late, as it can with time.AfterFunc) does nothing.
func TestIdleTimerStaleTimerDoesNothing(t *testing.T) {
	it, fc, idled := newCountingIdleTimer()
	it.begin()
	it.end()
	stale := fc.Last()
	it.begin()
	stale.RunLate() // fires after the begin
	if n := idled.Load(); n != 0 {
		t.Fatalf("a stale timer released while a call ran (%d)", n)
	}
	it.end()
	stale.RunLate() // fires after the next timer was armed
	if n, armed := idled.Load(), fc.Pending(); n != 0 || armed != 1 {
		t.Fatalf("a stale timer after re-arming: %d releases, %d timers armed; want 0 and 1", n, armed)
	}
	fc.Add(idleTimeout)
	if n := idled.Load(); n != 1 {
		t.Fatalf("the current timer: want 1 release, got %d", n)
	}
	fired := fc.Last()
	fired.RunLate() // a timer that fired already, firing twice
	if n := idled.Load(); n != 1 {
		t.Fatalf("a timer fired twice released twice")
	}
}

func TestIdleTimerStartStop(t *testing.T) {
	it, fc, idled := newCountingIdleTimer()
	it.start()
	it.start()
	if n := fc.Pending(); n != 1 {
		t.Fatalf("start: want 1 timer armed, got %d", n)
	}
	fc.Add(idleTimeout)
	if n := idled.Load(); n != 1 {
		t.Fatalf("an idle timer started without calls: want 1 release, got %d", n)
	}
	it.begin()
	it.end()
	it.stop()
	if n := fc.Pending(); n != 0 {
		t.Fatalf("stop left %d timers armed", n)
	}
	it.begin()
	it.end()
	it.start()
	fc.Add(3 * idleTimeout)
	if n, armed := idled.Load(), fc.Pending(); n != 1 || armed != 0 {
		t.Fatalf("after stop: %d releases, %d timers armed; want 1 and 0", n, armed)
	}
}

func TestIdleTimerZeroTimeoutDisables(t *testing.T) {
	fc := newFakeClock()
	it := newIdleTimer(0, fc, func() { t.Error("onIdle called with idle release disabled") })
	if it != nil {
		t.Fatalf("timeout 0: want no idle timer, got %+v", it)
	}
	it.start() // a nil timer does nothing
	it.begin()
	it.end()
	it.stop()
	if n := fc.Made(); n != 0 {
		t.Fatalf("timeout 0 made %d timers", n)
	}
}

// Many goroutines begin and end calls while another moves the fake clock.
// The checks run where the rules could break: a worker between begin and
// end sees no armed timer, a timer is armed only with no call active and
// none armed already, and onIdle runs only with no call active. active is
// counted inside the begin/end bracket, so it never exceeds the timer's
// own count.
func TestIdleTimerHammer(t *testing.T) {
	const workers, perWorker = 8, 3000
	var (
		active, idled        atomic.Int64
		armedWhileActive     atomic.Int64
		idleWhileActive      atomic.Int64
		seenArmedWhileActive atomic.Int64
	)
	fc := newFakeClock()
	fc.OnArm(func() {
		if active.Load() != 0 {
			armedWhileActive.Add(1)
		}
	})
	it := newIdleTimer(idleTimeout, fc, func() {
		for range 3 { // a release takes time: no call may begin meanwhile
			if active.Load() != 0 {
				idleWhileActive.Add(1)
			}
			runtime.Gosched()
		}
		idled.Add(1)
	})
	it.start()

	var wg, clockWG sync.WaitGroup
	stopClock := make(chan struct{})
	clockWG.Go(func() {
		for {
			select {
			case <-stopClock:
				return
			default:
			}
			fc.Add(time.Duration(rand.Int64N(int64(2 * idleTimeout))))
			runtime.Gosched()
		}
	})
	for range workers {
		wg.Go(func() {
			for i := range perWorker {
				it.begin()
				active.Add(1)
				if fc.Pending() != 0 {
					seenArmedWhileActive.Add(1)
				}
				if i%7 == 0 {
					runtime.Gosched()
				}
				active.Add(-1)
				it.end()
				for range rand.IntN(4) { // let the others end too
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()
	close(stopClock)
	clockWG.Wait()

	if n := fc.MaxPending(); n > 1 {
		t.Errorf("%d timers armed at once", n)
	}
	if n := armedWhileActive.Load(); n != 0 {
		t.Errorf("a timer was armed %d times while a call was active", n)
	}
	if n := seenArmedWhileActive.Load(); n != 0 {
		t.Errorf("a call saw an armed timer %d times", n)
	}
	if n := idleWhileActive.Load(); n != 0 {
		t.Errorf("onIdle ran %d times while a call was active", n)
	}
	// Quiet now: exactly one timer armed unless the clock fired it
	// already, and it fires once.
	before := idled.Load()
	armed := fc.Pending()
	fc.Add(idleTimeout)
	if armed > 1 || idled.Load() != before+int64(armed) || fc.Pending() != 0 {
		t.Errorf("after the hammer: %d timers armed, releases %d → %d", armed, before, idled.Load())
	}
	t.Logf("%d timers made, %d releases during %d calls", fc.Made(), before, workers*perWorker)
}

// Idle release of a real plugin, on a fake clock.

func TestIdleReleaseReinstantiates(t *testing.T) {
	fc := newFakeClock()
	p := load(t, "echo", PluginConfig{IdleTimeout: time.Minute, Clock: fc})
	if st := p.Stats(); st.Instances != 1 {
		t.Fatalf("after load: want the warm instance, got %+v", st)
	}
	// A plugin never called is released a timeout after its load.
	fc.Add(time.Minute)
	if st := p.Stats(); st.Instances != 0 || st.IdleReleases != 1 {
		t.Fatalf("a timeout after load: want no instances and 1 release, got %+v", st)
	}
	for round := 2; round <= 3; round++ {
		if resp := mustCall(t, p, "echo", "again"); string(resp.Payload) != "again" {
			t.Fatalf("after release: payload %q", resp.Payload)
		}
		if st := p.Stats(); st.Instances != 1 {
			t.Fatalf("the call after a release re-instantiates: %+v", st)
		}
		fc.Add(time.Minute - time.Nanosecond)
		if st := p.Stats(); st.Instances != 1 || st.IdleReleases != int64(round-1) {
			t.Fatalf("released before the timeout: %+v", st)
		}
		fc.Add(time.Nanosecond)
		if st := p.Stats(); st.Instances != 0 || st.IdleReleases != int64(round) {
			t.Fatalf("round %d: want no instances and %d releases, got %+v", round, round, st)
		}
	}
	// The compiled module stays: the next call needs no load.
	if resp := mustCall(t, p, "echo", "still"); string(resp.Payload) != "still" {
		t.Fatalf("payload %q", resp.Payload)
	}
	if st := p.Stats(); st.Calls != 3 || st.Failures != 0 {
		t.Fatalf("counters: %+v", st)
	}
}

// Two overlapping calls: no release while the second still runs, even of
// the first one's idle instance; the timeout counts from the end of the
// last call, which failed.
func TestIdleReleaseWaitsForLastCall(t *testing.T) {
	fc := newFakeClock()
	p := load(t, "sleep", PluginConfig{PoolSize: 2, IdleTimeout: time.Minute, Clock: fc})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	long := make(chan error, 1)
	go func() {
		_, err := p.Invoke(ctx, &abi.Request{Command: "sleep", Payload: []byte("60000")})
		long <- err
	}()
	testkit.WaitFor(t, "the call to hold an instance", func() bool { return p.Stats().InUse == 1 })
	if n := fc.Pending(); n != 0 {
		t.Fatalf("a timer armed while a call runs: %d", n)
	}
	// A short call overlaps and leaves a second instance idle.
	if _, err := p.Invoke(context.Background(), &abi.Request{Command: "sleep", Payload: []byte("0")}); err != nil {
		t.Fatal(err)
	}
	fc.Add(10 * time.Minute)
	if st := p.Stats(); st.Instances != 2 || st.IdleReleases != 0 {
		t.Fatalf("while a call runs: want 2 instances and no release, got %+v", st)
	}
	cancel() // the long call fails; its instance is discarded
	if err := <-long; KindOf(err) != KindCanceled {
		t.Fatalf("the long call: want canceled, got %v", err)
	}
	if st := p.Stats(); st.Instances != 1 || st.Replaced != 1 || fc.Pending() != 1 {
		t.Fatalf("after the failed call: want 1 instance, 1 replaced, 1 timer armed; got %+v, %d timers",
			st, fc.Pending())
	}
	fc.Add(time.Minute - time.Nanosecond)
	if st := p.Stats(); st.Instances != 1 {
		t.Fatalf("released before the timeout: %+v", st)
	}
	fc.Add(time.Nanosecond)
	if st := p.Stats(); st.Instances != 0 || st.IdleReleases != 1 {
		t.Fatalf("a timeout after the last call: want no instances and 1 release, got %+v", st)
	}
	if resp, err := p.Invoke(context.Background(), &abi.Request{Command: "sleep", Payload: []byte("0")}); err != nil || string(resp.Payload) != "0" {
		t.Fatalf("after release: %v, %+v", err, resp)
	}
}

// A timer that fires after a call began (here the call has begun but not
// yet acquired an instance) releases nothing: the call gets the warm
// instance.
func TestIdleStaleTimerKeepsInstances(t *testing.T) {
	fc := newFakeClock()
	p := load(t, "echo", PluginConfig{IdleTimeout: time.Minute, Clock: fc})
	stale := fc.Last() // armed at load
	p.idle.begin()     // a call begins
	stale.RunLate()    // the timer fires late
	if st := p.Stats(); st.Instances != 1 || st.IdleReleases != 0 {
		t.Fatalf("a stale timer released: %+v", st)
	}
	fc.Add(10 * time.Minute)
	if resp := mustCall(t, p, "echo", "x"); string(resp.Payload) != "x" {
		t.Fatalf("payload %q", resp.Payload)
	}
	if st := p.Stats(); st.Instances != 1 || st.IdleReleases != 0 {
		t.Fatalf("while a call was active: %+v", st)
	}
	p.idle.end() // the call ends
	fc.Add(time.Minute)
	if st := p.Stats(); st.Instances != 0 || st.IdleReleases != 1 {
		t.Fatalf("want no instances and 1 release, got %+v", st)
	}
}

func TestIdleReleaseStopsAtClose(t *testing.T) {
	fc := newFakeClock()
	p := load(t, "echo", PluginConfig{IdleTimeout: time.Minute, Clock: fc})
	mustCall(t, p, "echo", "x")
	if n := fc.Pending(); n != 1 {
		t.Fatalf("want 1 timer armed, got %d", n)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := fc.Pending(); n != 0 {
		t.Fatalf("close left %d timers armed", n)
	}
	if _, err := call(t, p, context.Background(), "echo", "x"); KindOf(err) != KindClosed {
		t.Fatalf("after close: want closed, got %v", err)
	}
	fc.Add(time.Hour)
	if st := p.Stats(); st.IdleReleases != 0 || fc.Pending() != 0 {
		t.Fatalf("after close: %+v, %d timers armed", st, fc.Pending())
	}
}

func TestIdleReleaseOff(t *testing.T) {
	fc := newFakeClock()
	p := load(t, "echo", PluginConfig{Clock: fc, IdleTimeout: NoTimeout})
	mustCall(t, p, "echo", "x")
	fc.Add(1000 * time.Hour)
	if st := p.Stats(); st.Instances != 1 || st.IdleReleases != 0 || fc.Made() != 0 {
		t.Fatalf("without an idle timeout: %+v, %d timers made", st, fc.Made())
	}
}

// A zero IdleTimeout is the default one, DefaultIdleTimeout.
func TestIdleReleaseDefault(t *testing.T) {
	fc := newFakeClock()
	p := load(t, "echo", PluginConfig{Clock: fc})
	mustCall(t, p, "echo", "x")
	fc.Add(DefaultIdleTimeout - time.Nanosecond)
	if st := p.Stats(); st.Instances != 1 || st.IdleReleases != 0 {
		t.Fatalf("before the default idle timeout: %+v", st)
	}
	fc.Add(time.Nanosecond)
	if st := p.Stats(); st.Instances != 0 || st.IdleReleases != 1 {
		t.Fatalf("at the default idle timeout: %+v", st)
	}
}

// Calls on every instance of the pool while the clock runs on: releases
// and re-instantiations race with calls, and every call succeeds.
func TestIdleReleaseHammer(t *testing.T) {
	const workers, perWorker, size = 8, 100, 4
	fc := newFakeClock()
	p := load(t, "echo", PluginConfig{PoolSize: size, IdleTimeout: time.Second, Clock: fc})
	var wg, clockWG sync.WaitGroup
	stopClock := make(chan struct{})
	clockWG.Go(func() {
		for {
			select {
			case <-stopClock:
				return
			default:
			}
			fc.Add(time.Second)
			runtime.Gosched()
		}
	})
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range perWorker {
				resp, err := call(t, p, context.Background(), "echo", "hammer")
				if err == nil && string(resp.Payload) != "hammer" {
					err = errors.New("wrong payload " + string(resp.Payload))
				}
				if err != nil {
					errs <- err
					return
				}
				for range rand.IntN(4) {
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()
	close(stopClock)
	clockWG.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := p.Stats()
	if st.Instances > size || st.InUse != 0 || st.Failures != 0 || st.Calls != workers*perWorker {
		t.Fatalf("after the hammer: %+v", st)
	}
	fc.Add(time.Second)
	if st := p.Stats(); st.Instances != 0 || fc.Pending() != 0 || fc.MaxPending() != 1 {
		t.Fatalf("after the last timeout: %+v, %d timers armed, at most %d", st, fc.Pending(), fc.MaxPending())
	}
	t.Logf("%d idle releases during %d calls", st.IdleReleases, st.Calls)
}

// The system clock, for real: a 50 ms idle timeout releases.
func TestIdleReleaseRealClock(t *testing.T) {
	p := load(t, "echo", PluginConfig{IdleTimeout: 50 * time.Millisecond})
	mustCall(t, p, "echo", "x")
	testkit.WaitFor(t, "the idle release", func() bool { st := p.Stats(); return st.Instances == 0 && st.IdleReleases >= 1 })
	if resp := mustCall(t, p, "echo", "y"); string(resp.Payload) != "y" {
		t.Fatalf("after release: payload %q", resp.Payload)
	}
	if st := p.Stats(); st.Failures != 0 {
		t.Fatalf("%+v", st)
	}
}
