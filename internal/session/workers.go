package session

import "sync"

// Workers runs work handed over from the receive goroutine (the
// executor's first receipts, Executor.start in package rpc) on a
// goroutine that lives on after it, waiting for the next one, rather than
// on a goroutine of its own. A WASM call grows the stack of the goroutine
// that makes it to tens of KiB (wazero's call path), a copy of the whole
// stack at each doubling; on a fresh goroutine per request that growth
// was ~5 % of `cmdhost serve`'s CPU at one request in flight
// (BENCHMARKS.md). A worker keeps its grown stack until a collection
// finds it mostly unused and halves it.
//
// An idle worker waits on a channel of its own, listed in idle; Run takes
// the most recently idle one (its stack and caches the warmest) and hands
// it the work through that channel (buffered: the hand-off never blocks,
// even before the worker is back at its receive), or starts a worker when
// none is idle. A worker that finishes with maxIdle others idle exits, so
// a burst leaves no more goroutines behind than that. Close makes the
// idle ones exit, and any started later exit after their work.
type Workers struct {
	mu      sync.Mutex
	idle    []chan func() // the idle workers', the most recent last
	maxIdle int
	closed  bool
}

// NewWorkers returns workers of which at most maxIdle wait for work.
func NewWorkers(maxIdle int) *Workers {
	return &Workers{maxIdle: maxIdle}
}

// Run calls f on an idle worker, or on a new one.
func (w *Workers) Run(f func()) {
	w.mu.Lock()
	if n := len(w.idle); n > 0 {
		next := w.idle[n-1]
		w.idle = w.idle[:n-1]
		w.mu.Unlock()
		next <- f
		return
	}
	w.mu.Unlock()
	go w.loop(f, make(chan func(), 1))
}

// loop calls f, then waits on next for more work, unless the workers are
// closed or maxIdle others wait already.
func (w *Workers) loop(f func(), next chan func()) {
	for {
		f()
		w.mu.Lock()
		if w.closed || len(w.idle) >= w.maxIdle {
			w.mu.Unlock()
			return
		}
		w.idle = append(w.idle, next)
		w.mu.Unlock()
		var ok bool
		if f, ok = <-next; !ok {
			return
		}
	}
}

// Close makes the idle workers exit, and the busy ones once their work is
// done; Run still runs work after it, each on a goroutine of its own.
func (w *Workers) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	for _, next := range w.idle {
		close(next)
	}
	w.idle = nil
}
