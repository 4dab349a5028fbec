package ratelog

import (
	"sync"
	"time"
)

// Rate is a token bucket for what a plugin may do per second (publish a
// message, send an HTTP request): Burst at once, then PerSecond. The
// bucket starts full. Safe for concurrent use.
type Rate struct {
	perSecond float64
	burst     float64

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

// NewRate returns a full bucket of burst tokens refilled perSecond.
func NewRate(perSecond float64, burst int) *Rate {
	return &Rate{perSecond: perSecond, burst: float64(burst), tokens: float64(burst)}
}

// Take takes a token at now; false when there is none.
func (r *Rate) Take(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.last.IsZero() && now.After(r.last) {
		r.tokens = min(r.burst, r.tokens+now.Sub(r.last).Seconds()*r.perSecond)
	}
	if now.After(r.last) {
		r.last = now
	}
	if r.tokens < 1 {
		return false
	}
	r.tokens--
	return true
}
