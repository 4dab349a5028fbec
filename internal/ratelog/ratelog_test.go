package ratelog

import (
	"testing"
	"time"
)

// One line an interval goes through, and it counts those left out before
// it; a clock that steps back does not silence the limiter.
func TestLimiter(t *testing.T) {
	l := Limiter{Interval: time.Second}
	t0 := time.Unix(1_800_000_000, 0)
	for i, c := range []struct {
		at      time.Duration
		ok      bool
		leftOut int
	}{
		{0, true, 0},
		{100 * time.Millisecond, false, 0},
		{999 * time.Millisecond, false, 0},
		{time.Second, true, 2},
		{1500 * time.Millisecond, false, 0},
		{-time.Hour, true, 1}, // the clock stepped back
	} {
		ok, leftOut := l.Allow(t0.Add(c.at))
		if ok != c.ok || leftOut != c.leftOut {
			t.Errorf("line %d at %v: %v, %d; want %v, %d", i, c.at, ok, leftOut, c.ok, c.leftOut)
		}
	}
}

// A bucket lets its burst through, then one line an interval, each
// counting those left out before it; a quiet spell gives the burst back;
// a clock that steps back does not silence it.
func TestBucket(t *testing.T) {
	b := Bucket{Interval: time.Second, Burst: 3}
	t0 := time.Unix(1_800_000_000, 0)
	for i, c := range []struct {
		at      time.Duration
		ok      bool
		leftOut int
	}{
		{0, true, 0},
		{1 * time.Millisecond, true, 0},
		{2 * time.Millisecond, true, 0},
		{3 * time.Millisecond, false, 0},
		{999 * time.Millisecond, false, 0},
		{time.Second, true, 2}, // one given back
		{1500 * time.Millisecond, false, 0},
		{2 * time.Second, true, 1},
		{10 * time.Second, true, 0}, // all given back
		{10 * time.Second, true, 0},
		{10 * time.Second, true, 0},
		{10 * time.Second, false, 0},
		{-time.Hour, true, 1}, // the clock stepped back
	} {
		ok, leftOut := b.Allow(t0.Add(c.at))
		if ok != c.ok || leftOut != c.leftOut {
			t.Errorf("line %d at %v: %v, %d; want %v, %d", i, c.at, ok, leftOut, c.ok, c.leftOut)
		}
	}
	var zero Bucket
	for range 10 {
		if ok, _ := zero.Allow(t0); !ok {
			t.Fatal("the zero Bucket left a line out")
		}
	}
}

func TestRate(t *testing.T) {
	r := NewRate(2, 3)
	now := time.Unix(1_800_000_000, 0)
	for i := range 3 {
		if !r.Take(now) {
			t.Fatalf("token %d of a full burst refused", i)
		}
	}
	if r.Take(now) {
		t.Fatal("a token past the burst")
	}
	if !r.Take(now.Add(500 * time.Millisecond)) { // 2 a second: one back after 0.5 s
		t.Fatal("no token after half a second at 2 a second")
	}
	if r.Take(now.Add(600 * time.Millisecond)) {
		t.Fatal("a second token 0.1 s later")
	}
	if r.Take(now) { // a clock stepping back gives nothing back
		t.Fatal("a token from a clock that stepped back")
	}
}
