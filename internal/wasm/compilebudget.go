package wasm

import (
	"context"
	"runtime"
	"time"
)

// The compile timeout is a budget of CPU time, not of the wall clock: it
// bounds how long a module's compile may hold a core. Measured on the
// wall clock, it refused sound modules on a busy machine (seven reloads
// compiling at once beside other processes each waited for a core longer
// than the timeout), while a compile bomb is stopped alike either way. So
// the compile runs on a thread of its own (runtime.LockOSThread: wazero
// compiles a module's functions one after the other on the calling
// goroutine), and a watcher reads that thread's CPU clock
// (threadCPUClock) and ends the compile's context once it ran the budget.
// A wall-clock bound of compileWallFactor times the budget stays behind
// it, so that a compile starved of CPU still ends; where no thread clock
// can be read, the budget is on the wall clock, as before.

// compileBudgetPoll is how often the watcher reads the compile's CPU clock:
// the compile may run this much past its budget, before the end of the
// function it is compiling.
const compileBudgetPoll = 20 * time.Millisecond

// compileWallFactor bounds a compile's wall time to this many times its
// CPU budget.
const compileWallFactor = 10

// withCompileBudget returns a context that ends when the calling
// goroutine's thread has run budget of CPU time from now, or after
// compileWallFactor times budget on the wall clock, or with parent; stop
// releases the thread and the watcher. The caller compiles on this
// goroutine between the two calls.
func withCompileBudget(parent context.Context, budget time.Duration) (context.Context, func()) {
	runtime.LockOSThread()
	read, ok := threadCPUClock()
	if !ok {
		ctx, cancel := context.WithTimeout(parent, budget)
		return ctx, func() { cancel(); runtime.UnlockOSThread() }
	}
	ctx, stop := budgetContext(parent, budget, compileWallFactor*budget, read)
	return ctx, func() { stop(); runtime.UnlockOSThread() }
}

// budgetContext returns a context that ends once read has advanced by
// budget, or after wall, or with parent; stop ends its watcher.
func budgetContext(parent context.Context, budget, wall time.Duration, read func() time.Duration) (context.Context, func()) {
	walled, cancelWall := context.WithTimeout(parent, wall)
	ctx, cancel := context.WithCancelCause(walled)
	start := read()
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(compileBudgetPoll)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				if read()-start >= budget {
					cancel(context.DeadlineExceeded)
					return
				}
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
		cancelWall()
	}
}
