package trigger

import (
	"sync"
	"sync/atomic"
)

// counters are what the receiver did with one trigger's messages.
type counters struct {
	messages, handled, failures, dropped, duplicates, inFlight atomic.Int64

	mu  sync.Mutex
	err string // why its subscription failed; "" when it did not
}

func (c *counters) setError(why string) {
	c.mu.Lock()
	c.err = why
	c.mu.Unlock()
}

// countersOf returns the counters of the trigger name, made at its first
// use and kept across SetTriggers (a reload keeps counting).
func (r *Receiver) countersOf(name string) *counters {
	r.countMu.Lock()
	defer r.countMu.Unlock()
	c := r.counters[name]
	if c == nil {
		c = &counters{}
		r.counters[name] = c
	}
	return c
}

// Counters are what the receiver did with a trigger's messages since it
// started (plugins.TriggerCounters is their view).
type Counters struct {
	Messages, Handled, Failures, Dropped, Duplicates, InFlight int64
	// SubscribeError says why the broker did not take the trigger's
	// subscription; "" when it did (or none was tried yet).
	SubscribeError string
}

// Counters returns the counters of trigger name (zero when it has none).
func (r *Receiver) Counters(name string) Counters {
	r.countMu.Lock()
	c := r.counters[name]
	r.countMu.Unlock()
	if c == nil {
		return Counters{}
	}
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	return Counters{Messages: c.messages.Load(), Handled: c.handled.Load(), Failures: c.failures.Load(), Dropped: c.dropped.Load(),
		Duplicates: c.duplicates.Load(), InFlight: c.inFlight.Load(), SubscribeError: err}
}
