package sdk

import (
	"context"
	"sync"
	"time"
)

// callContext is the context a handler receives. A Go guest's timers are
// costly (context.WithDeadline added ~24 µs to every call), and the host
// stops the call at its deadline anyway, so the timer behind Done is made
// only when a handler asks for Done; Deadline and Err cost a clock read.
type callContext struct {
	context.Context // Background: values only
	deadline        time.Time

	once  sync.Once
	done  chan struct{}
	timer *time.Timer
}

func newCallContext(deadline time.Time) *callContext {
	return &callContext{Context: context.Background(), deadline: deadline}
}

func (c *callContext) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *callContext) Done() <-chan struct{} {
	c.once.Do(func() {
		c.done = make(chan struct{})
		if d := time.Until(c.deadline); d > 0 {
			c.timer = time.AfterFunc(d, func() { close(c.done) })
		} else {
			close(c.done)
		}
	})
	return c.done
}

func (c *callContext) Err() error {
	if time.Now().Before(c.deadline) {
		return nil
	}
	return context.DeadlineExceeded
}

// release stops the timer, if Done made one.
func (c *callContext) release() {
	c.once.Do(func() {}) // a Done after the call returns makes no timer
	if c.timer != nil {
		c.timer.Stop()
	}
}
