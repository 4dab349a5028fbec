package nested_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/nested"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// idle waits until none of p's instances runs a call: the branches a
// fan-out left behind were stopped and their instances handed back.
func idle(t *testing.T, p *wasm.Plugin) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for p.Stats().InUse != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d calls still running", p.Name(), p.Stats().InUse)
		}
		time.Sleep(time.Millisecond)
	}
}

// Each strategy with one slow branch: the fast ones come back keyed by
// branch, the slow one is not_arrived and stopped; a sync timeout under
// fail fails the fan-out.
func TestNestedFanOutStrategies(t *testing.T) {
	h := newNestHost(t, "h1", "nest", "echo", "sleep")
	branches := map[string]callSpec{
		"fast1": {Command: "echo", Payload: "1"},
		"fast2": {Command: "sleep", Payload: "30"},
		"slow":  {Command: "sleep", Payload: "20000"},
	}
	cases := []struct {
		name      string
		sync      syncSpec
		wantErr   string        // "" : none
		syncEvent events.Policy // the event's policy; "": no sync event
	}{
		{"all proceed", syncSpec{TimeoutMs: 300}, "", events.PolicyProceedWithAvailable},
		{"all fail", syncSpec{TimeoutMs: 300, OnTimeout: "fail"}, "nested invocation failed (sync_timeout): sync timeout of 300ms after the first arrival: 2 of 3 branches answered (strategy all, needs 3); not arrived: slow", events.PolicyFail},
		{"any", syncSpec{Strategy: "any", TimeoutMs: 300}, "", ""},
		{"2 of 3", syncSpec{Strategy: "m_of_n", M: 2, TimeoutMs: 5000, OnTimeout: "fail"}, "", ""},
		{"3 of 3 fail", syncSpec{Strategy: "m_of_n", M: 3, TimeoutMs: 300, OnTimeout: "fail"}, "strategy m_of_n, needs 3", events.PolicyFail},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.events.take("")
			start := time.Now()
			v := decode[fanView](t)(h.invoke(ctxFor(t, 30*time.Second), "nest-fan", fanSpec{Branches: branches, Sync: c.sync}, nil))
			took := time.Since(start)
			if (c.wantErr == "") != (v.Error == "") || !strings.Contains(v.Error, c.wantErr) {
				t.Fatalf("error %q, want %q", v.Error, c.wantErr)
			}
			if took >= 20*time.Second {
				t.Fatalf("the fan-out took %v: the slow branch (20 s) was waited for", took)
			}
			if len(v.Results) != 3 {
				t.Fatalf("results %+v", v.Results)
			}
			answered := 0
			for _, name := range []string{"fast1", "fast2"} {
				r := v.Results[name]
				switch {
				case r.Outcome == "done" && r.Status == 200 && r.Payload == branches[name].Payload:
					answered++
				case c.sync.Strategy == "any" && r.Outcome == "not_arrived":
				default:
					t.Fatalf("%s: %+v", name, r)
				}
			}
			if answered == 0 {
				t.Fatal("no fast branch answered")
			}
			if slow := v.Results["slow"]; slow.Outcome != "not_arrived" || !strings.Contains(slow.Message, "the sync ended before it arrived") {
				t.Fatalf("slow: %+v", slow)
			}
			evs := h.events.take(events.TypeSync)
			if c.syncEvent == "" {
				if len(evs) != 0 {
					t.Fatalf("unexpected sync events %+v", evs)
				}
			} else if len(evs) != 1 || evs[0].Policy != c.syncEvent || evs[0].Branch != "slow" || evs[0].Command != "nest-fan" ||
				evs[0].Plugin != "nest" || evs[0].Budget != 300*time.Millisecond || evs[0].Elapsed < evs[0].Budget ||
				evs[0].Correlation != parentCorrelationUUID || evs[0].Kind != events.KindTimeout {
				t.Fatalf("sync events %+v", evs)
			}
			idle(t, h.plugins["sleep"]) // the slow branch was stopped
		})
	}
}

// The sync timeout is wait time, measured from the first arrival: the
// sync timer is armed once branch a arrived (its 300 ms sleep is a lower
// bound, whatever the load), with the whole 600 ms; b, arriving before the
// timer fires, is collected, and c, still sleeping when it fires, is not.
// Measured from the fan-out, the timer would be armed at once. The clock
// is the test's: it fires the timer only once b has arrived, so no load
// can reorder them.
func TestNestedSyncTimeoutFromFirstArrival(t *testing.T) {
	h := newNestHost(t, "h1", "nest", "sleep")
	clock := newManualClock()
	h.configure(nested.Config{Clock: clock})
	start := time.Now()
	got := make(chan fanView, 1)
	go func() {
		resp, err := h.invoke(ctxFor(t, 5*time.Minute), "nest-fan", fanSpec{
			Branches: map[string]callSpec{
				"a": {Command: "sleep", Payload: "300"},
				"b": {Command: "sleep", Payload: "700"},
				"c": {Command: "sleep", Payload: "600000"},
			},
			Sync: syncSpec{TimeoutMs: 600},
		}, nil)
		got <- decode[fanView](t)(resp, err)
	}()
	tm := clock.next(t)
	if tm.d != 600*time.Millisecond {
		t.Fatalf("sync timer armed for %v, want the whole sync timeout (600ms)", tm.d)
	}
	if since := tm.armedAt.Sub(start); since < 300*time.Millisecond {
		t.Fatalf("sync timer armed %v after the fan-out, before the first arrival (300 ms)", since)
	}
	sleep := h.plugins["sleep"]
	testkit.WaitFor(t, "branch c to sleep", func() bool { return sleep.Stats().InUse == 1 }) // a and b have returned; c sleeps on
	tm.fire()
	v := <-got
	if v.Error != "" || v.Results["a"].Outcome != "done" || v.Results["b"].Outcome != "done" || v.Results["c"].Outcome != "not_arrived" {
		t.Fatalf("%+v", v)
	}
	evs := h.events.take(events.TypeSync)
	if len(evs) != 1 || evs[0].Elapsed < 600*time.Millisecond || evs[0].Branch != "c" {
		t.Fatalf("%+v", evs)
	}
	idle(t, sleep)
}

// manualClock is a clock.Clock whose timers fire when the test says so.
// Each AfterFunc is reported on armed, with when (in real time) it was
// armed.
type manualClock struct {
	mu    sync.Mutex
	now   time.Time
	armed chan *manualTimer
}

type manualTimer struct {
	c       *manualClock
	d       time.Duration
	armedAt time.Time
	f       func()
	done    atomic.Bool
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), armed: make(chan *manualTimer, 16)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := &manualTimer{c: c, d: d, armedAt: time.Now(), f: f}
	c.armed <- t
	return t
}

func (t *manualTimer) Stop() bool { return !t.done.Swap(true) }

// fire moves the clock to the timer's time and runs it.
func (t *manualTimer) fire() {
	t.c.mu.Lock()
	t.c.now = t.c.now.Add(t.d)
	t.c.mu.Unlock()
	if !t.done.Swap(true) {
		t.f()
	}
}

func (c *manualClock) next(t *testing.T) *manualTimer {
	t.Helper()
	select {
	case tm := <-c.armed:
		return tm
	case <-time.After(60 * time.Second):
		t.Fatal("no sync timer was armed")
		return nil
	}
}

// With an injected clock: the sync timer is armed only once the first
// branch arrived, with the whole sync timeout; when it fires, the rest is
// not_arrived and cancelled. Its default is min(max child budget × n ×
// 1.5, 30 min), capped by the caller's remaining budget.
func TestNestedSyncTimerClock(t *testing.T) {
	h := newNestHost(t, "h1", "nest", "sleep", "spin")
	clock := newManualClock()
	h.configure(nested.Config{Clock: clock})

	ctx, cancel := context.WithCancel(context.Background()) // no caller deadline: nothing caps the timeout
	defer cancel()
	start := time.Now()
	got := make(chan fanView, 1)
	go func() {
		resp, err := h.invoke(ctx, "nest-fan", fanSpec{
			Branches: map[string]callSpec{"first": {Command: "sleep", Payload: "150"}, "stuck": {Command: "spin"}},
			Sync:     syncSpec{TimeoutMs: 3_600_000},
		}, nil)
		got <- decode[fanView](t)(resp, err)
	}()
	tm := clock.next(t)
	if tm.d != time.Hour {
		t.Fatalf("sync timer armed for %v, want the sync timeout (1h)", tm.d)
	}
	if since := tm.armedAt.Sub(start); since < 150*time.Millisecond {
		t.Fatalf("sync timer armed %v after the fan-out, before the first arrival (150 ms)", since)
	}
	tm.fire()
	v := <-got
	if v.Error != "" || v.Results["first"].Outcome != "done" || v.Results["stuck"].Outcome != "not_arrived" {
		t.Fatalf("%+v", v)
	}
	evs := h.events.take(events.TypeSync)
	if len(evs) != 1 || evs[0].Elapsed != time.Hour || evs[0].Budget != time.Hour || evs[0].Branch != "stuck" {
		t.Fatalf("%+v", evs)
	}
	idle(t, h.plugins["spin"])

	// The default: two branches of 2 s each → 2 s × 2 × 1.5 = 6 s.
	go func() {
		resp, err := h.invoke(ctx, "nest-fan", fanSpec{Branches: map[string]callSpec{
			"first": {Command: "sleep", Payload: "10", TimeoutMs: 2000},
			"stuck": {Command: "spin", TimeoutMs: 2000},
		}}, nil)
		got <- decode[fanView](t)(resp, err)
	}()
	if tm := clock.next(t); tm.d != 6*time.Second {
		t.Fatalf("default sync timeout %v, want 6s", tm.d)
	}
	if v := <-got; v.Results["stuck"].Outcome != "timed_out" { // its own 2 s came first
		t.Fatalf("%+v", v)
	}

	// Capped by the caller's remaining budget.
	go func() {
		resp, err := h.invoke(ctxFor(t, 2*time.Second), "nest-fan", fanSpec{
			Branches: map[string]callSpec{"first": {Command: "sleep", Payload: "10"}, "stuck": {Command: "spin", TimeoutMs: 300}},
			Sync:     syncSpec{TimeoutMs: 3_600_000},
		}, nil)
		got <- decode[fanView](t)(resp, err)
	}()
	if tm := clock.next(t); tm.d > 2*time.Second {
		t.Fatalf("sync timeout %v past the caller's deadline", tm.d)
	}
	<-got
}
