package wasm

import (
	"context"
	"sync"
)

// pool bounds a plugin's instances and hands each to one call at a time.
//
// slots holds a token for every instance in use; its capacity is the pool
// size, so a call that finds it full waits (or gives up with its context).
// Idle instances wait in a stack under mu. An instance is created only when
// a call holds a slot and no idle one is left, so in-use plus idle never
// exceeds the pool size. An instance that failed is closed instead of being
// put back: the next call makes a fresh one.
type pool struct {
	slots   chan struct{}
	closing chan struct{} // closed by close: waiting calls give up
	mu      sync.Mutex
	idle    []*instance
	closed  bool
	// onIdle, when set, is called with mu held when the pool comes to
	// have idle instances (true) and when it no longer has any (false):
	// the engine keeps the plugins that have some (Engine.noteIdle).
	onIdle func(has bool)
}

// idleChanged calls onIdle when the number of idle instances, which was
// before, went from or to zero. mu held.
func (pl *pool) idleChanged(before int) {
	if pl.onIdle != nil && (before == 0) != (len(pl.idle) == 0) {
		pl.onIdle(len(pl.idle) > 0)
	}
}

func newPool(size int) *pool {
	return &pool{slots: make(chan struct{}, size), closing: make(chan struct{})}
}

// acquire takes a slot and returns an idle instance, or nil when the
// caller must create one. It fails with the context's error or errClosed.
func (pl *pool) acquire(ctx context.Context) (*instance, error) {
	select {
	case pl.slots <- struct{}{}:
	case <-pl.closing:
		return nil, errClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed {
		<-pl.slots
		return nil, errClosed
	}
	if n := len(pl.idle); n > 0 {
		inst := pl.idle[n-1]
		pl.idle[n-1] = nil // the stack's array must not keep an instance that is discarded later
		pl.idle = pl.idle[:n-1]
		pl.idleChanged(n)
		return inst, nil
	}
	return nil, nil
}

// release gives a slot back with its instance: kept idle when healthy and
// the pool is open, returned for closing otherwise.
func (pl *pool) release(inst *instance, healthy bool) (discard *instance) {
	pl.mu.Lock()
	if inst != nil && healthy && !pl.closed {
		pl.idle = append(pl.idle, inst)
		pl.idleChanged(len(pl.idle) - 1)
		inst = nil
	}
	pl.mu.Unlock()
	<-pl.slots
	return inst
}

// putIdle adds an instance made outside a call, such as the warm one.
func (pl *pool) putIdle(inst *instance) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.idle = append(pl.idle, inst)
	pl.idleChanged(len(pl.idle) - 1)
}

// takeOneIdle removes and returns the idle instance used longest ago (the
// bottom of the stack), or nil.
func (pl *pool) takeOneIdle() *instance {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if len(pl.idle) == 0 {
		return nil
	}
	n := len(pl.idle)
	inst := pl.idle[0]
	copy(pl.idle, pl.idle[1:])
	pl.idle[n-1] = nil // the stack's array must not keep it
	pl.idle = pl.idle[:n-1]
	pl.idleChanged(n)
	return inst
}

// idleCount is the number of idle instances.
func (pl *pool) idleCount() int {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return len(pl.idle)
}

// takeIdle removes and returns every idle instance, for closing.
func (pl *pool) takeIdle() []*instance {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	idle := pl.idle
	pl.idle = nil
	pl.idleChanged(len(idle))
	return idle
}

// close stops new calls and waits, until ctx is done, for the calls in
// flight to give their slots back. It returns the idle instances to close.
func (pl *pool) close(ctx context.Context) ([]*instance, error) {
	pl.mu.Lock()
	if !pl.closed {
		pl.closed = true
		close(pl.closing)
	}
	pl.mu.Unlock()
	for range cap(pl.slots) {
		select {
		case pl.slots <- struct{}{}:
		case <-ctx.Done():
			return pl.takeIdle(), ctx.Err()
		}
	}
	return pl.takeIdle(), nil
}

// inUse returns how many calls hold a slot.
func (pl *pool) inUse() int { return len(pl.slots) }
