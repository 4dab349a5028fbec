package hlc

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// One request must not poison the clock for everyone: a remote __ts as far
// ahead as the drift limit allows, its counter at or next to the maximum,
// is merged, and every later event (requests with a current __ts, stamps of
// replies) still succeeds, strictly increasing, even when the hostile
// timestamp is sent again and again.
func TestHLCRemoteNearCounterLimitDoesNotPoison(t *testing.T) {
	const maxDrift = time.Minute
	cases := []struct {
		name    string
		ahead   time.Duration
		counter uint32
	}{
		{"50 s ahead, counter 99998", 50 * time.Second, MaxCounter - 1},
		{"at the drift limit, counter 99999", maxDrift, MaxCounter},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, clk := newTestHLC(t, maxDrift)
			prev := h.Current()
			// 250,000 events: two and a half times the counter's range, at
			// 1,000 events per millisecond of physical time.
			for i := range 250_000 {
				if i%1000 == 0 {
					clk.Add(time.Millisecond)
				}
				pt := clk.Now().UnixMilli()
				if i%20_000 == 0 { // the hostile timestamp, renewed
					hostile := Timestamp{Millis: pt + c.ahead.Milliseconds(), Counter: c.counter, NodeID: "hostile"}
					if err := h.Update(hostile); err != nil {
						t.Fatalf("event %d: Update(%v), within the drift limit: %v", i, hostile, err)
					}
					if cur := h.Current(); cur.Compare(hostile) <= 0 || cur.Compare(prev) <= 0 {
						t.Fatalf("event %d: merged %v does not order after %v and %v", i, cur, hostile, prev)
					}
				}
				good := Timestamp{Millis: pt, Counter: uint32(i % 7), NodeID: "good"}
				if err := h.Update(good); err != nil {
					t.Fatalf("event %d: Update(%v) with a current __ts after %v: %v", i, good, prev, err)
				}
				ts, err := h.Now()
				if err != nil {
					t.Fatalf("event %d: Now after %v: %v", i, prev, err)
				}
				if ts.Compare(prev) <= 0 {
					t.Fatalf("event %d: Now %v not after %v", i, ts, prev)
				}
				if lead := ts.Millis - pt; lead > maxDrift.Milliseconds()+1 {
					t.Fatalf("event %d: %v is %d ms ahead of physical time, want at most MaxDrift + 1 ms", i, ts, lead)
				}
				prev = ts
			}
		})
	}
}

// Whatever sequence of remote timestamps within the drift limit arrives,
// interleaved with local events, no event fails, values strictly increase,
// every merge orders after its remote, and the clock stays within MaxDrift
// + 1 ms of physical time (while fewer than 100,000 events share a
// millisecond).
func TestHLCAnySequenceWithinDriftNeverFails(t *testing.T) {
	const maxDrift = 10 * time.Second
	maxMs := maxDrift.Milliseconds()
	rng := rand.New(rand.NewPCG(1, 2))
	counter := func() uint32 {
		switch rng.IntN(3) {
		case 0:
			return MaxCounter - uint32(rng.IntN(3))
		case 1:
			return 0
		default:
			return uint32(rng.IntN(MaxCounter + 1))
		}
	}
	for run := range 20 {
		h, clk := newTestHLC(t, maxDrift)
		prev := h.Current()
		for i := range 5000 {
			clk.Add(time.Duration(rng.IntN(3)) * time.Millisecond)
			pt := clk.Now().UnixMilli()
			var ts Timestamp
			if rng.IntN(2) == 0 {
				// A remote from 5 s behind to exactly the limit ahead, often
				// at the limit or at the clock's own millisecond.
				var millis int64
				switch rng.IntN(3) {
				case 0:
					millis = pt + maxMs
				case 1:
					millis = min(h.Current().Millis, pt+maxMs)
				default:
					millis = pt - 5000 + rng.Int64N(5000+maxMs+1)
				}
				remote := Timestamp{Millis: millis, Counter: counter(), NodeID: "peer"}
				if err := h.Update(remote); err != nil {
					t.Fatalf("run %d event %d: Update(%v) at physical %d, clock %v: %v", run, i, remote, pt, prev, err)
				}
				ts = h.Current()
				if ts.Compare(remote) <= 0 {
					t.Fatalf("run %d event %d: merged %v not after remote %v", run, i, ts, remote)
				}
			} else {
				var err error
				if ts, err = h.Now(); err != nil {
					t.Fatalf("run %d event %d: Now at physical %d, clock %v: %v", run, i, pt, prev, err)
				}
			}
			if ts.Compare(prev) <= 0 {
				t.Fatalf("run %d event %d: %v not after %v", run, i, ts, prev)
			}
			if ts.Millis-pt > maxMs+1 {
				t.Fatalf("run %d event %d: %v is %d ms ahead of physical %d, want at most %d", run, i, ts, ts.Millis-pt, pt, maxMs+1)
			}
			if ts.Counter > MaxCounter {
				t.Fatalf("run %d event %d: %v has a counter the wire cannot carry", run, i, ts)
			}
			prev = ts
		}
	}
}

// The drift rule is judged on the remote alone, before it is merged:
// milliseconds carried from the counter never count against it, so a
// remote at the limit is still accepted after the clock carried past it.
func TestHLCCarriedMillisecondsDoNotCountAsDrift(t *testing.T) {
	const maxDrift = 10 * time.Second
	maxMs := maxDrift.Milliseconds()
	h, _ := newTestHLC(t, maxDrift)
	atLimit := Timestamp{Millis: hlcT0 + maxMs, Counter: MaxCounter, NodeID: "peer"}
	if err := h.Update(atLimit); err != nil {
		t.Fatalf("Update(%v) at the limit: %v", atLimit, err)
	}
	wantTS(t, h.Current(), hlcT0+maxMs+1, 0) // carried one past the limit
	for _, remote := range []Timestamp{atLimit, {Millis: hlcT0, NodeID: "peer"}, {Millis: hlcT0 - 1000, Counter: 5, NodeID: "peer"}} {
		if err := h.Update(remote); err != nil {
			t.Fatalf("Update(%v) after the carry: %v", remote, err)
		}
	}
	wantTS(t, mustNow(t, h), hlcT0+maxMs+1, 4)
	// One millisecond past the limit is still refused, and leaves the clock.
	before := h.Current()
	if err := h.Update(Timestamp{Millis: hlcT0 + maxMs + 1, NodeID: "peer"}); !errors.Is(err, ErrClockDrift) {
		t.Fatalf("Update 1 ms past the limit: err = %v, want ErrClockDrift", err)
	}
	if h.Current() != before {
		t.Fatalf("clock changed on a refused remote: %v -> %v", before, h.Current())
	}
}
