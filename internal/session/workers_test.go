package session

import (
	"runtime"
	"sync"
	"testing"
)

// idleWorkers is a copy of w's list of idle workers' channels.
func idleWorkers(w *Workers) []chan func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]chan func(){}, w.idle...)
}

// waitIdle yields until n workers are idle and returns their channels;
// the test's timeout bounds it.
func waitIdle(w *Workers, n int) []chan func() {
	for {
		if idle := idleWorkers(w); len(idle) == n {
			return idle
		}
		runtime.Gosched()
	}
}

func TestWorkersReuseTheIdleWorker(t *testing.T) {
	w := NewWorkers(4)
	defer w.Close()
	var first chan func()
	for i := range 100 {
		done := make(chan struct{})
		w.Run(func() { close(done) })
		<-done
		idle := waitIdle(w, 1)
		if i == 0 {
			first = idle[0]
		} else if idle[0] != first {
			t.Fatalf("call %d ran on a new worker, not on the idle one", i+1)
		}
	}
}

func TestWorkersBurstLeavesAtMostMaxIdle(t *testing.T) {
	w := NewWorkers(2)
	release := make(chan struct{})
	var started, finished sync.WaitGroup
	const burst = 10
	started.Add(burst)
	finished.Add(burst)
	for range burst {
		w.Run(func() { started.Done(); <-release; finished.Done() })
	}
	started.Wait() // all ten at once: none waited for another to finish
	close(release)
	finished.Wait()
	idle := waitIdle(w, 2)
	for range 3 { // those that saw two idle exited: none joins later
		runtime.Gosched()
	}
	if n := len(idleWorkers(w)); n != 2 {
		t.Fatalf("%d idle workers after the burst, want 2", n)
	}
	// The most recently idle takes the next call.
	done := make(chan struct{})
	w.Run(func() { close(done) })
	<-done
	if got := waitIdle(w, 2); got[1] != idle[1] || got[0] != idle[0] {
		t.Fatal("the call did not go to the most recently idle worker")
	}
	w.Close()
	if n := len(idleWorkers(w)); n != 0 {
		t.Fatalf("%d idle workers after close", n)
	}
}

func TestWorkersRunAfterClose(t *testing.T) {
	w := NewWorkers(2)
	w.Close()
	for range 3 {
		done := make(chan struct{})
		w.Run(func() { close(done) })
		<-done
	}
	if n := len(idleWorkers(w)); n != 0 {
		t.Fatalf("%d workers wait after close, want none", n)
	}
}
