package wasm

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// stackSlack bounds what a deep call may leave on the heap: below the
// ~5 MiB of stack the deep guest grows, above the heap's own noise.
const stackSlack = 2 << 20

// An idle instance does not keep the stack its last call grew: wazero keeps
// a call's stack with the function handle, so the host takes a fresh
// handle after a long call.
func TestDeepCallStackNotKept(t *testing.T) {
	p := load(t, "hostile-deep", PluginConfig{PoolSize: 1})
	before := heapAlloc()
	if depth := callI32(t, p, "deep"); depth != 100_000 {
		t.Fatalf("recursed %d deep; want 100000", depth)
	}
	kept := heapSettles(before)
	if st := p.Stats(); st.Instances != 1 || st.Replaced != 0 {
		t.Fatalf("the deep call must succeed and keep its instance: %+v", st)
	}
	if kept > stackSlack {
		t.Fatalf("the idle instance keeps %d MiB after a deep call; want under %d MiB", kept>>20, stackSlack>>20)
	}
	t.Logf("heap after a call 100,000 deep: +%d KiB", kept>>10)
	if depth := callI32(t, p, "deep"); depth != 100_000 {
		t.Fatalf("second call: recursed %d deep; want 100000", depth)
	}
}

// A recursion without end traps, and the host lets go of the discarded
// instance, its stack and memory, at once: nothing of it stays referenced
// until a later call.
func TestStackOverflowReleasesInstance(t *testing.T) {
	p := load(t, "hostile-recurse", PluginConfig{PoolSize: 1})
	before := heapAlloc()
	_, err := call(t, p, context.Background(), "recurse", "")
	if KindOf(err) != KindTrap || !strings.Contains(err.Error(), "stack overflow") {
		t.Fatalf("want a stack overflow trap, got %v", err)
	}
	if st := p.Stats(); st.Instances != 0 || st.Replaced != 1 {
		t.Fatalf("the instance must be discarded: %+v", st)
	}
	kept := heapSettles(before)
	if kept > stackSlack {
		t.Fatalf("%d MiB stay on the heap after the instance was discarded; want under %d MiB", kept>>20, stackSlack>>20)
	}
	t.Logf("heap after the overflow: +%d KiB", kept>>10)
	other := load(t, "wat-echo", PluginConfig{})
	mustCall(t, other, "wat-echo", "still here")
}

// heapSettles returns how much the heap grew since before once it is under
// stackSlack, or after a minute (a hang guard): goroutines that let go of
// a call's stack (wazero's watcher of the call's context) may end a little
// after the call returns on a loaded machine.
func heapSettles(before int64) int64 {
	kept := heapAlloc() - before
	for deadline := time.Now().Add(time.Minute); kept > stackSlack && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		kept = heapAlloc() - before
	}
	return kept
}

// A call's stack is counted in the guest memory budget: each instance
// reserves stackBytes for it, and a call recursing without end allocates
// no more than that on the Go heap before it traps (the stacks it grows
// through, each a copy of the last, about twice the last). Before,
// wazero's ceiling let such a call grow its stack to 84 MB, allocating
// ~168 MB, holding 126 MB at once, outside the budget: 8 of them grew the
// host by 1 GB under a budget of 64 MiB.
func TestCallStackWithinBudget(t *testing.T) {
	for _, metered := range []bool{false, true} {
		p := load(t, "hostile-recurse", PluginConfig{PoolSize: 1, CountFuel: metered})
		if p.instanceCost < int64(p.cfg.MemoryPages)*pageSize+stackBytes {
			t.Fatalf("an instance reserves %d bytes, less than its memory and its stack", p.instanceCost)
		}
		warmInstance(t, p)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := call(t, p, context.Background(), "recurse", "")
		runtime.ReadMemStats(&after)
		if KindOf(err) != KindTrap || !strings.Contains(err.Error(), "stack overflow") {
			t.Fatalf("want a stack overflow trap, got %v", err)
		}
		allocated := int64(after.TotalAlloc - before.TotalAlloc)
		t.Logf("metered %v: a recursion to the overflow allocated %d KiB", metered, allocated>>10)
		if allocated > 2*stackBytes {
			t.Errorf("metered %v: a recursion to the overflow allocated %d MiB, more than twice the %d MiB an instance reserves for its stack",
				metered, allocated>>20, stackBytes>>20)
		}
	}
}
