// Package ratelog bounds how often one kind of log line is written: a
// flood of refusals (hostile requests, connections, oversized replies)
// must not become a flood of log lines, yet the operator must see that it
// happens and how much of it was not logged.
package ratelog

import (
	"sync"
	"time"
)

// Limiter lets one line through per Interval and counts the others, so
// that the next line can say how many were left out. The zero value lets
// every line through; safe for concurrent use.
type Limiter struct {
	Interval time.Duration

	mu         sync.Mutex
	last       time.Time // when the last line went through; zero: none yet
	suppressed int
}

// Allow reports whether a line at now is written, and, when it is, how
// many lines were left out since the last one written.
func (l *Limiter) Allow(now time.Time) (ok bool, leftOut int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if since := now.Sub(l.last); !l.last.IsZero() && since >= 0 && since < l.Interval {
		l.suppressed++
		return false, 0
	}
	l.last, leftOut, l.suppressed = now, l.suppressed, 0
	return true, leftOut
}
