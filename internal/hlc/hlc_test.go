package hlc

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// hlcT0 is an arbitrary realistic physical time in ms (2025-01-01T00:00:00Z).
const hlcT0 int64 = 1735689600000

func newTestHLC(t *testing.T, maxDrift time.Duration) (*Clock, *testkit.Clock) {
	t.Helper()
	clk := testkit.NewClock(time.UnixMilli(hlcT0))
	return New(Config{NodeID: "me", Clock: clk, MaxDrift: maxDrift}), clk
}

func mustNow(t *testing.T, h *Clock) Timestamp {
	t.Helper()
	ts, err := h.Now()
	if err != nil {
		t.Fatalf("Now: %v", err)
	}
	return ts
}

func wantTS(t *testing.T, got Timestamp, millis int64, counter uint32) {
	t.Helper()
	if got.Millis != millis || got.Counter != counter || got.NodeID != "me" {
		t.Fatalf("got %v, want %v", got, Timestamp{Millis: millis, Counter: counter, NodeID: "me"})
	}
}

func TestTimestampFormatParseRoundTrip(t *testing.T) {
	cases := []struct {
		ts   Timestamp
		wire string
	}{
		{Timestamp{0, 0, "n"}, "000000000000000:00000:n"},
		{Timestamp{hlcT0, 7, "host-1"}, "001735689600000:00007:host-1"},
		{Timestamp{999999999999999, MaxCounter, "0191a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b"}, "999999999999999:99999:0191a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b"},
		{Timestamp{1, 1, "ünïcode node/with spaces"}, "000000000000001:00001:ünïcode node/with spaces"},
	}
	for _, c := range cases {
		if got := c.ts.String(); got != c.wire {
			t.Errorf("String(%#v) = %q, want %q", c.ts, got, c.wire)
		}
		got, err := Parse(c.wire)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.wire, err)
			continue
		}
		if got != c.ts {
			t.Errorf("Parse(%q) = %#v, want %#v", c.wire, got, c.ts)
		}
	}
}

func TestParseTimestampMalformed(t *testing.T) {
	cases := []struct {
		in      string
		wantErr string // substring of the error message
	}{
		{"", "three fields"},
		{"NotValid", "three fields"}, // the conformance case's value
		{"001735689600000:00000", "three fields"},
		{"001735689600000", "three fields"},
		// A node id may not contain ':' (the AIO SDKs split into exactly three fields).
		{"001735689600000:00000:node:extra", "three fields"},
		{"001735689600000:00000:a:b:c", "three fields"},
		{"::", "milliseconds field"},
		{"01735689600000:00000:n", "exactly 15 digits, got 14"},
		{"0001735689600000:00000:n", "exactly 15 digits, got 16"},
		{"1735689600000:0:n", "exactly 15 digits, got 13"},
		{"001735689600000:0000:n", "exactly 5 digits, got 4"},
		{"001735689600000:000000:n", "exactly 5 digits, got 6"},
		{"001735689600000::n", "exactly 5 digits, got 0"},
		{"00173568960000a:00000:n", "non-digit 'a' at offset 14"},
		{"+01735689600000:00000:n", "non-digit '+' at offset 0"},
		{"-01735689600000:00000:n", "non-digit '-' at offset 0"},
		{" 01735689600000:00000:n", "non-digit ' ' at offset 0"},
		{"001735689600000:0000x:n", "counter field"},
		{"001735689600000:-0001:n", "non-digit '-'"},
		{"001735689600000: 0001:n", "non-digit ' '"},
		{"001735689600000:0x0ff:n", "non-digit 'x'"},
		{"00173568960000\u0661:00000:n", "milliseconds field"}, // Arabic-Indic digit one: not ASCII
		{"001735689600000:00000:", "node id is empty"},
	}
	for _, c := range cases {
		ts, err := Parse(c.in)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want error", c.in, ts)
			continue
		}
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) error %v does not wrap ErrMalformed", c.in, err)
		}
		if !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("Parse(%q) error %q, want it to mention %q", c.in, err, c.wantErr)
		}
		if ts != (Timestamp{}) {
			t.Errorf("Parse(%q) returned non-zero %#v with error", c.in, ts)
		}
	}
}

// FuzzParseTimestamp checks that whatever Parse accepts is exactly
// the canonical form, i.e. String reproduces the input byte for byte.
func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{"001735689600000:00007:host-1", "NotValid", "000000000000000:00000:", "1:2:3", "001735689600000:00000:a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := Parse(s)
		if err != nil {
			return
		}
		if got := ts.String(); got != s {
			t.Fatalf("Parse(%q).String() = %q", s, got)
		}
		if ts.Counter > MaxCounter || ts.Millis < 0 || ts.NodeID == "" || strings.Contains(ts.NodeID, ":") {
			t.Fatalf("Parse(%q) accepted out-of-range %#v", s, ts)
		}
	})
}

func TestTimestampCompare(t *testing.T) {
	base := Timestamp{Millis: 10, Counter: 5, NodeID: "b"}
	cases := []struct {
		u    Timestamp
		want int
	}{
		{Timestamp{10, 5, "b"}, 0},
		{Timestamp{9, 99, "z"}, 1},   // Millis dominates Counter and NodeID
		{Timestamp{11, 0, "a"}, -1},  //
		{Timestamp{10, 4, "z"}, 1},   // then Counter dominates NodeID
		{Timestamp{10, 6, "a"}, -1},  //
		{Timestamp{10, 5, "a"}, 1},   // then NodeID
		{Timestamp{10, 5, "c"}, -1},  //
		{Timestamp{10, 5, "ba"}, -1}, //
	}
	for _, c := range cases {
		if got := base.Compare(c.u); got != c.want {
			t.Errorf("%v.Compare(%v) = %d, want %d", base, c.u, got, c.want)
		}
		if got := c.u.Compare(base); got != -c.want {
			t.Errorf("%v.Compare(%v) = %d, want %d", c.u, base, got, -c.want)
		}
	}
}

func TestNewHLC(t *testing.T) {
	h, _ := newTestHLC(t, 0)
	wantTS(t, h.Current(), hlcT0, 0)
	if h.maxDriftMs != DefaultMaxDrift.Milliseconds() {
		t.Errorf("default max drift = %d ms, want %d", h.maxDriftMs, DefaultMaxDrift.Milliseconds())
	}
	for _, id := range []string{"", "a:b"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New(NodeID %q) did not panic", id)
				}
			}()
			New(Config{NodeID: id})
		}()
	}
	// Default physical clock is time.Now.
	real := New(Config{NodeID: "real"})
	if d := time.Since(time.UnixMilli(real.Current().Millis)); d < 0 || d > time.Minute {
		t.Errorf("default clock started %v away from time.Now", d)
	}
}

func TestHLCCurrentDoesNotAdvance(t *testing.T) {
	h, _ := newTestHLC(t, 0)
	a := h.Current()
	b := h.Current()
	if a != b {
		t.Fatalf("Current advanced: %v then %v", a, b)
	}
	n := mustNow(t, h)
	if h.Current() != n {
		t.Fatalf("Current() = %v, want last Now %v", h.Current(), n)
	}
}

func TestHLCNowCounterStandsStillAndResets(t *testing.T) {
	h, clk := newTestHLC(t, 0)
	// Physical time equals the clock's start: the counter counts events.
	wantTS(t, mustNow(t, h), hlcT0, 1)
	wantTS(t, mustNow(t, h), hlcT0, 2)
	wantTS(t, mustNow(t, h), hlcT0, 3)
	// Time advances: wall time follows it and the counter resets.
	clk.Add(time.Millisecond)
	wantTS(t, mustNow(t, h), hlcT0+1, 0)
	wantTS(t, mustNow(t, h), hlcT0+1, 1)
	// Sub-millisecond progress does not advance the millisecond field.
	clk.Add(500 * time.Microsecond)
	wantTS(t, mustNow(t, h), hlcT0+1, 2)
	clk.Add(5 * time.Second)
	wantTS(t, mustNow(t, h), hlcT0+5001, 0)
}

func TestHLCNowMonotonicWhenClockGoesBackwards(t *testing.T) {
	h, clk := newTestHLC(t, 0)
	clk.Set(time.UnixMilli(hlcT0 + 100))
	prev := mustNow(t, h)
	wantTS(t, prev, hlcT0+100, 0)
	// The physical clock steps back (NTP correction): wall time holds and the
	// counter keeps every value strictly increasing.
	for _, ms := range []int64{hlcT0 + 50, hlcT0 + 10, hlcT0 + 99, hlcT0 + 100} {
		clk.Set(time.UnixMilli(ms))
		ts := mustNow(t, h)
		if ts.Compare(prev) <= 0 {
			t.Fatalf("physical %d: Now %v not after %v", ms, ts, prev)
		}
		if ts.Millis != hlcT0+100 {
			t.Fatalf("physical %d: Millis = %d, want held at %d", ms, ts.Millis, hlcT0+100)
		}
		prev = ts
	}
	wantTS(t, prev, hlcT0+100, 4)
	// Once physical time passes the clock again, it takes over.
	clk.Set(time.UnixMilli(hlcT0 + 101))
	wantTS(t, mustNow(t, h), hlcT0+101, 0)
}

func TestHLCUpdateMerge(t *testing.T) {
	const own, ownC = hlcT0 + 1000, 7
	cases := []struct {
		name        string
		physical    int64
		remote      Timestamp
		wantMillis  int64
		wantCounter uint32
	}{
		{"remote ahead of own and physical", own - 500, Timestamp{own + 20, 3, "peer"}, own + 20, 4},
		{"remote ahead, larger counter", own, Timestamp{own + 1, 50, "peer"}, own + 1, 51},
		{"remote behind own, own ahead of physical", own - 500, Timestamp{own - 20, 90, "peer"}, own, ownC + 1},
		{"remote behind own, own equals physical", own, Timestamp{own - 1, 90, "peer"}, own, ownC + 1},
		{"remote equal, remote counter larger", own - 500, Timestamp{own, 40, "peer"}, own, 41},
		{"remote equal, own counter larger", own - 500, Timestamp{own, 2, "peer"}, own, ownC + 1},
		{"remote equal, same counter", own, Timestamp{own, ownC, "peer"}, own, ownC + 1},
		{"physical ahead of both", own + 30, Timestamp{own + 10, 99, "peer"}, own + 30, 0},
		{"physical ahead, remote far in the past", own + 30, Timestamp{0, 0, "state-store"}, own + 30, 0},
		{"own node id is merged like any other", own - 500, Timestamp{own + 5, 1, "me"}, own + 5, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, clk := newTestHLC(t, 0)
			h.ts = Timestamp{Millis: own, Counter: ownC, NodeID: "me"}
			clk.Set(time.UnixMilli(c.physical))
			if err := h.Update(c.remote); err != nil {
				t.Fatalf("Update(%v): %v", c.remote, err)
			}
			got := h.Current()
			wantTS(t, got, c.wantMillis, c.wantCounter)
			if got.Compare(Timestamp{Millis: c.remote.Millis, Counter: c.remote.Counter}) <= 0 {
				t.Fatalf("merged %v does not order after remote %v", got, c.remote)
			}
			// The next local event orders after both.
			next := mustNow(t, h)
			if next.Compare(got) <= 0 {
				t.Fatalf("Now %v not after merged %v", next, got)
			}
		})
	}
}

func TestHLCDrift(t *testing.T) {
	const maxDrift = 10 * time.Second
	maxMs := maxDrift.Milliseconds()

	t.Run("Update refuses a remote too far ahead and keeps the clock", func(t *testing.T) {
		h, _ := newTestHLC(t, maxDrift)
		mustNow(t, h)
		before := h.Current()
		err := h.Update(Timestamp{Millis: hlcT0 + maxMs + 1, NodeID: "fast"})
		if !errors.Is(err, ErrClockDrift) {
			t.Fatalf("Update err = %v, want ErrClockDrift", err)
		}
		if h.Current() != before {
			t.Fatalf("clock changed on refused Update: %v -> %v", before, h.Current())
		}
		// Far-future values from the wire too (15 digits of 9s).
		far, _ := Parse("999999999999999:00000:x")
		if err := h.Update(far); !errors.Is(err, ErrClockDrift) {
			t.Fatalf("Update(far future) err = %v, want ErrClockDrift", err)
		}
	})

	t.Run("Update accepts exactly MaxDrift ahead", func(t *testing.T) {
		h, _ := newTestHLC(t, maxDrift)
		if err := h.Update(Timestamp{Millis: hlcT0 + maxMs, Counter: 3, NodeID: "fast"}); err != nil {
			t.Fatalf("Update at exactly MaxDrift: %v", err)
		}
		wantTS(t, h.Current(), hlcT0+maxMs, 4)
	})

	t.Run("sub-millisecond MaxDrift rounds down", func(t *testing.T) {
		h, _ := newTestHLC(t, 1500*time.Microsecond)
		if err := h.Update(Timestamp{Millis: hlcT0 + 1, NodeID: "p"}); err != nil {
			t.Fatalf("1 ms ahead with 1.5 ms limit: %v", err)
		}
		if err := h.Update(Timestamp{Millis: hlcT0 + 2, NodeID: "p"}); !errors.Is(err, ErrClockDrift) {
			t.Fatalf("2 ms ahead with 1.5 ms limit: err = %v, want ErrClockDrift", err)
		}
	})

	t.Run("Now refuses when own clock is too far ahead of physical", func(t *testing.T) {
		h, clk := newTestHLC(t, maxDrift)
		// Merge a remote as far ahead as allowed, then let the physical
		// clock step back by 1 ms: own time is now MaxDrift+1 ms ahead.
		if err := h.Update(Timestamp{Millis: hlcT0 + maxMs, NodeID: "fast"}); err != nil {
			t.Fatal(err)
		}
		before := h.Current()
		clk.Set(time.UnixMilli(hlcT0 - 1))
		ts, err := h.Now()
		if !errors.Is(err, ErrClockDrift) {
			t.Fatalf("Now = %v, %v, want ErrClockDrift", ts, err)
		}
		if ts != (Timestamp{}) {
			t.Fatalf("Now returned %v with error, want zero", ts)
		}
		if h.Current() != before {
			t.Fatalf("clock changed on refused Now: %v -> %v", before, h.Current())
		}
		// Update is refused too, even with a remote from the past: the
		// merged value would still be too far ahead.
		if err := h.Update(Timestamp{Millis: hlcT0 - 5, NodeID: "slow"}); !errors.Is(err, ErrClockDrift) {
			t.Fatalf("Update while drifted: err = %v, want ErrClockDrift", err)
		}
		// Physical time catches up to within MaxDrift: the clock recovers.
		clk.Set(time.UnixMilli(hlcT0))
		wantTS(t, mustNow(t, h), hlcT0+maxMs, before.Counter+1)
	})
}

// The counter never overflows: past MaxCounter it carries into the
// milliseconds, so every value is still strictly greater than the last and
// still fits the wire format.
func TestHLCCounterCarries(t *testing.T) {
	t.Run("Now", func(t *testing.T) {
		h, clk := newTestHLC(t, 0)
		// Time stands still: counters 1..99999 are issued, the next carries.
		for i := uint32(1); i <= MaxCounter; i++ {
			ts := mustNow(t, h)
			if ts.Counter != i {
				t.Fatalf("counter = %d, want %d", ts.Counter, i)
			}
		}
		last := h.Current()
		wantTS(t, last, hlcT0, MaxCounter)
		if got := last.String(); got != "001735689600000:99999:me" {
			t.Fatalf("largest counter formats as %q", got)
		}
		wantTS(t, mustNow(t, h), hlcT0+1, 0)
		wantTS(t, mustNow(t, h), hlcT0+1, 1)
		// Physical time reaching the carried millisecond continues it; passing
		// it takes over.
		clk.Add(time.Millisecond)
		wantTS(t, mustNow(t, h), hlcT0+1, 2)
		clk.Add(time.Millisecond)
		wantTS(t, mustNow(t, h), hlcT0+2, 0)
	})

	t.Run("Update", func(t *testing.T) {
		h, _ := newTestHLC(t, 0)
		// A remote at the limit with the winning wall time merges into the
		// next millisecond: after the remote, as causality requires.
		remote := Timestamp{Millis: hlcT0 + 1, Counter: MaxCounter, NodeID: "peer"}
		if err := h.Update(remote); err != nil {
			t.Fatalf("Update(%v): %v", remote, err)
		}
		wantTS(t, h.Current(), hlcT0+2, 0)
		// A counter beyond the wire format, or near MaxUint32, is refused
		// (no parsed __ts carries one) and must not wrap.
		before := h.Current()
		for _, c := range []uint32{MaxCounter + 1, 1<<32 - 1} {
			if err := h.Update(Timestamp{Millis: hlcT0, Counter: c, NodeID: "peer"}); !errors.Is(err, ErrCounterOverflow) {
				t.Fatalf("Update(counter %d) err = %v, want ErrCounterOverflow", c, err)
			}
			if h.Current() != before {
				t.Fatalf("clock changed on a refused counter: %v -> %v", before, h.Current())
			}
		}
		// One below the limit merges to the limit; then Now carries.
		if err := h.Update(Timestamp{Millis: hlcT0 + 2, Counter: MaxCounter - 1, NodeID: "peer"}); err != nil {
			t.Fatalf("Update: %v", err)
		}
		wantTS(t, h.Current(), hlcT0+2, MaxCounter)
		wantTS(t, mustNow(t, h), hlcT0+3, 0)
	})

	t.Run("drift is reported before overflow", func(t *testing.T) {
		h, _ := newTestHLC(t, time.Second)
		before := h.Current()
		err := h.Update(Timestamp{Millis: hlcT0 + 5000, Counter: MaxCounter, NodeID: "peer"})
		if !errors.Is(err, ErrClockDrift) {
			t.Fatalf("err = %v, want ErrClockDrift", err)
		}
		if h.Current() != before {
			t.Fatalf("clock changed on a refused remote: %v -> %v", before, h.Current())
		}
	})
}

// TestHLCConcurrent runs Now (and Update) from many goroutines while the
// physical clock advances 1 ms every 97 reads, so values come both from
// counter increments and from wall-time advances. Run with -race.
func TestHLCConcurrent(t *testing.T) {
	const (
		goroutines = 8
		perG       = 2000
	)
	var (
		mu    sync.Mutex
		reads int64
	)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		reads++
		return time.UnixMilli(hlcT0 + reads/97)
	}
	h := New(Config{NodeID: "me", Clock: readingClock{clock.System(), now}})

	results := make([][]Timestamp, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := make([]Timestamp, 0, perG)
			for i := range perG {
				if i%10 == 0 {
					// Interleave merges of a remote slightly ahead.
					cur := h.Current()
					if err := h.Update(Timestamp{Millis: cur.Millis + 1, Counter: 3, NodeID: "peer"}); err != nil {
						t.Errorf("Update: %v", err)
						return
					}
				}
				ts, err := h.Now()
				if err != nil {
					t.Errorf("Now: %v", err)
					return
				}
				out = append(out, ts)
			}
			results[g] = out
		}()
	}
	wg.Wait()

	seen := make(map[Timestamp]int, goroutines*perG)
	for g, out := range results {
		for i, ts := range out {
			if i > 0 && ts.Compare(out[i-1]) <= 0 {
				t.Fatalf("goroutine %d: value %d %v not after %v", g, i, ts, out[i-1])
			}
			if other, dup := seen[ts]; dup {
				t.Fatalf("value %v issued to goroutines %d and %d", ts, other, g)
			}
			seen[ts] = g
		}
	}
	if len(seen) != goroutines*perG {
		t.Fatalf("got %d unique values, want %d", len(seen), goroutines*perG)
	}
}

// readingClock is a physical clock whose time is what now returns, read
// after read; its timers are the system's (the HLC arms none).
type readingClock struct {
	clock.Clock
	now func() time.Time
}

func (c readingClock) Now() time.Time { return c.now() }
