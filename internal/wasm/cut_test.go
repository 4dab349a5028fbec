package wasm

import (
	"cmp"
	"context"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/wasm/meter"
)

// cutBound is how late past its deadline the tick may cut a guest, at the
// 99th percentile of a shape's runs (issue 25's promise).
const cutBound = 5 * time.Millisecond

// cutShapes are the shapes of guest a deadline must cut: a loop with no
// calls, a deep recursion, an exponential call tree with no loop, a loop
// that only calls a host function, a memory.grow loop that fills its
// memory, and a Go guest, in its own loop and in its runtime's allocator.
var cutShapes = []cutShape{
	{"hostile-cut-tight", "tight", 0, 0},
	// Time for the first descent, which grows the stack: ~1 ms,
	// ~20 ms under -race, which checks every byte wazero copies, and
	// more on a loaded machine (deadlineOr10ms).
	{"hostile-cut-deep", "deep", 0, 60 * time.Millisecond},
	{"hostile-cut-tree", "tree", 0, 0},
	{"hostile-cut-hostcalls", "hostcalls", 0, 0},
	{"hostile-cut-grow", "grow", 256, 0},
	{"spin", "spin", 0, 0},
	{"spin", "churn", 0, 0},
}

// cutShape is a shape of guest a deadline must cut.
type cutShape struct {
	plugin, command string
	pages           uint32
	deadline        time.Duration
}

// deadlineOr10ms is the shape's deadline: 10 ms unless it has its own,
// which is 5 times longer under the race detector (on a loaded machine, a
// first descent of the deep recursion outlasted 60 ms, and its cut batch
// held a growth of the stack, which no deadline cuts: p99 5–9 ms of CPU).
func (s cutShape) deadlineOr10ms() time.Duration {
	if s.deadline > 0 && raceEnabled {
		return 5 * s.deadline
	}
	return cmp.Or(s.deadline, 10*time.Millisecond)
}

// The deadline cuts every shape of guest (cutShapes) on the real engine,
// for a plugin that counts fuel (metered: the tick checks the deadline).
//
// The bound is proved by counting: the tick that cuts a call reports the
// units the guest ran since the tick before it, which was before the
// deadline; they must be at most one batch and one bulk memory charge, in
// every run. What that batch cost is measured in the CPU time of the
// thread that ran it (the test's goroutine, locked to its thread so that
// the thread runs nothing else), so that a machine whose cores are busy
// with other work does not count: its 99th percentile over
// the runs must be within cutBound (a batch is ~0.1 ms of guest work; a
// fill of 16 MiB ~2 ms). The wall time until the call returned, which adds
// the waits for a core (seen: p99 ~0.5 s at a load average of 10 on two
// cores), is logged, and only its median is bounded (stopBound). What no deadline can cut is one step of the
// engine's own: a bulk memory operation, or wazero growing a call's stack
// (a copy of all of it, and the page faults of the new one: ~10 ms at 30
// MiB; much more under -race, which checks every byte copied), so the deep
// recursion goes 20,000 frames deep (~1 MiB) once to grow its stack, then
// again to run there, and its deadline leaves time for the first. A host call counts meter.HostCallWeight units.
func TestDeadlineCutsEveryShape(t *testing.T) {
	const runs = 100
	shapes := cutShapes
	for _, s := range shapes {
		if only := os.Getenv("CMDHOST_CUT_SHAPE"); only != "" && only != s.command {
			continue
		}
		t.Run(s.command, func(t *testing.T) {
			runtime.LockOSThread() // the calls run on this goroutine: threadCPU is theirs alone
			defer runtime.UnlockOSThread()
			p := load(t, s.plugin, PluginConfig{PoolSize: 1, MemoryPages: s.pages, CountFuel: true})
			maxUnits := int64(meterBatch) + int64(p.cfg.MemoryPages)*pageSize>>meter.BulkShift
			// The tick runs on the calling goroutine, the test's.
			var last, batchCPU time.Duration // thread CPU time at the last tick; of the batch that was cut (-1: unknown)
			var lastTid int                  // the thread of the last tick
			var units int64                  // units of the batch that was cut; -1: none cut
			p.meter.onTick = func(stop bool, n int64) {
				now, tid := threadCPU()
				if stop {
					batchCPU, units = now-last, n
					if tid != lastTid || lastTid == 0 {
						batchCPU = -1 // moved to another thread, or the call's first batch
					}
				}
				last, lastTid = now, tid
			}
			var cpu, wall []time.Duration
			for range runs {
				warmInstance(t, p)
				units = -1
				ctx, cancel := context.WithTimeout(context.Background(), s.deadlineOr10ms())
				deadline, _ := ctx.Deadline()
				lastTid = 0
				_, err := call(t, p, ctx, s.command, "")
				returned := time.Since(deadline)
				cancel()
				if KindOf(err) != KindDeadline {
					t.Fatalf("%s: want a deadline error, got %v", s.command, err)
				}
				if units < 0 {
					if strings.Contains(err.Error(), "instantiating") || strings.Contains(err.Error(), "waiting for an instance") {
						continue // cut before the guest ran (a busy machine: 10 ms go by)
					}
					t.Fatalf("%s: the call ended without a cut by the tick: %v", s.command, err)
				}
				if units > maxUnits {
					t.Fatalf("%s: the guest ran %d units in its last batch, more than a batch and a bulk charge (%d)", s.command, units, maxUnits)
				}
				if batchCPU >= 0 {
					cpu = append(cpu, batchCPU)
				}
				wall = append(wall, returned)
			}
			checkCuts(t, s.command, "last batch's CPU", runs, cpu, wall)
		})
	}
}

// The deadline cuts every shape of guest (cutShapes) on the real engine,
// for a plugin that does not count fuel: wazero closes the module when the
// call's context ends, and the guest's compiled code, which tests the
// module's closed flag at every function entry and loop header
// (third_party/wazero/CMDHOST.md), stops at the next one.
//
// What is measured is the CPU time the guest's thread ran from the moment
// a goroutine woken by the context's end (as wazero's closing goroutine
// is) read it, to the moment the engine had the guest's failure (wazero
// unwound its stack): its 99th percentile over the runs must be within
// cutBound. Discarding the instance afterwards is the host's work, not
// the guest's. As in TestDeadlineCutsEveryShape, the wall time
// until the call returned is logged and only its median is bounded
// (stopBound): it adds the waits for a core.
func TestDeadlineCutsEveryShapeUnmetered(t *testing.T) {
	const runs = 100
	for _, s := range cutShapes {
		if only := os.Getenv("CMDHOST_CUT_SHAPE"); only != "" && only != s.command {
			continue
		}
		t.Run(s.command, func(t *testing.T) {
			runtime.LockOSThread() // the calls run on this goroutine's thread, whose CPU time the test reads
			defer runtime.UnlockOSThread()
			_, tid := threadCPU()
			p := load(t, s.plugin, PluginConfig{PoolSize: 1, MemoryPages: s.pages})
			var ran time.Duration // the thread's CPU time when the guest was cut
			p.afterRun = func() { ran, _ = threadCPU() }
			var cpu, wall []time.Duration
			for range runs {
				warmInstance(t, p)
				ctx, cancel := context.WithTimeout(context.Background(), s.deadlineOr10ms())
				deadline, _ := ctx.Deadline()
				seen := make(chan time.Duration, 1)
				context.AfterFunc(ctx, func() { seen <- otherThreadCPU(tid) })
				_, err := call(t, p, ctx, s.command, "")
				returned := time.Since(deadline)
				cancel()
				if KindOf(err) != KindDeadline {
					t.Fatalf("%s: want a deadline error, got %v", s.command, err)
				}
				if strings.Contains(err.Error(), "instantiating") || strings.Contains(err.Error(), "waiting for an instance") {
					continue // cut before the guest ran (a busy machine: 10 ms go by)
				}
				cpu = append(cpu, max(ran-<-seen, 0)) // ≤ 0: the goroutine ran after the guest was cut
				wall = append(wall, returned)
			}
			checkCuts(t, s.command, "CPU run after the context's end until cut", runs, cpu, wall)
		})
	}
}

// warmInstance makes the plugin an idle instance when it has none, outside
// any deadline: the last one was discarded, and a Go guest's takes ~4 ms to
// make (much more under -race), which would eat a call's 10 ms.
func warmInstance(t *testing.T, p *Plugin) {
	t.Helper()
	if p.pool.idleCount() == 0 {
		inst, err := p.newInstance(context.Background(), true)
		if err != nil {
			t.Fatal(err)
		}
		p.pool.putIdle(inst)
	}
}

// checkCuts bounds a shape's cuts: the 99th percentile of cpu (what the
// guest ran, as what says) by cutBound, and the median of wall (how long
// past the deadline the call returned, which adds the waits for a core and
// so depends on the machine's load) by stopBound.
func checkCuts(t *testing.T, command, what string, runs int, cpu, wall []time.Duration) {
	t.Helper()
	if len(cpu) < runs/2 {
		t.Fatalf("%s: only %d of %d calls ran before their deadline", command, len(cpu), runs)
	}
	slices.Sort(cpu)
	slices.Sort(wall)
	p99 := func(d []time.Duration) time.Duration { return d[(len(d)*99+99)/100-1] } // nearest rank
	t.Logf("%-9s %d cuts: %s median %v, p99 %v; returned past the deadline: median %v, p99 %v",
		command, len(cpu), what, cpu[len(cpu)/2], p99(cpu), wall[len(wall)/2], p99(wall))
	if m := wall[len(wall)/2]; m > stopBound {
		t.Errorf("%s: returned a median %v after the deadline, want ≤ %v", command, m, stopBound)
	}
	if p99(cpu) > cutBound {
		t.Errorf("%s: the guest ran p99 %v of CPU (%s), want ≤ %v (all: %v)", command, p99(cpu), what, cutBound, cpu)
	}
}
