package wasm

import (
	"context"
	"strings"
	"testing"
	"time"
)

// stackSlack bounds what a deep call may leave on the heap: far below the
// ~40 MiB of stack the deep guest grows, above the heap's own noise.
const stackSlack = 16 << 20

// An idle instance does not keep the stack its last call grew: wazero keeps
// a call's stack with the function handle, so the host takes a fresh
// handle after a long call.
func TestDeepCallStackNotKept(t *testing.T) {
	p := load(t, "hostile-deep", PluginConfig{PoolSize: 1})
	before := heapAlloc()
	if depth := callI32(t, p, "deep"); depth != 1_000_000 {
		t.Fatalf("recursed %d deep; want 1000000", depth)
	}
	kept := heapSettles(before)
	if st := p.Stats(); st.Instances != 1 || st.Replaced != 0 {
		t.Fatalf("the deep call must succeed and keep its instance: %+v", st)
	}
	if kept > stackSlack {
		t.Fatalf("the idle instance keeps %d MiB after a deep call; want under %d MiB", kept>>20, stackSlack>>20)
	}
	t.Logf("heap after a call 1,000,000 deep: +%d KiB", kept>>10)
	if depth := callI32(t, p, "deep"); depth != 1_000_000 {
		t.Fatalf("second call: recursed %d deep; want 1000000", depth)
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
