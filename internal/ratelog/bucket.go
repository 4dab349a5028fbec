package ratelog

import (
	"sync"
	"time"
)

// Bucket lets Burst lines through at once, then one per Interval (a
// token bucket: each Interval gives back one of the Burst), and counts the
// others, so that the next line can say how many were left out. It is
// for a line worth reading each time while it is rare (a mistyped
// password) that a flood must not multiply: at most Burst + t/Interval
// lines in any t. The zero value lets every line through; safe for
// concurrent use.
type Bucket struct {
	Interval time.Duration
	Burst    int

	mu         sync.Mutex
	used       int       // of Burst, not given back yet
	last       time.Time // when the last was given back, or the first taken
	suppressed int
}

// Allow reports whether a line at now is written, and, when it is, how
// many lines were left out since the last one written.
func (b *Bucket) Allow(now time.Time) (ok bool, leftOut int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.Interval <= 0 {
		return true, 0
	}
	switch since := now.Sub(b.last); {
	case since < 0: // the clock stepped back: not silenced until it comes back
		b.used = 0
	case b.used > 0 && since >= b.Interval:
		back := min(int(since/b.Interval), b.used)
		b.used -= back
		b.last = b.last.Add(time.Duration(back) * b.Interval)
	}
	if b.used == 0 { // all there: the next is given back an Interval after it is taken
		b.last = now
	}
	if b.used >= max(b.Burst, 1) {
		b.suppressed++
		return false, 0
	}
	b.used++
	leftOut, b.suppressed = b.suppressed, 0
	return true, leftOut
}
