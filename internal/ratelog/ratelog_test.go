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
