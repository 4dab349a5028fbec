package wasm

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The same call with the same input on an instance in the same state uses
// the same fuel: the first call of a fresh instance, instance after
// instance, and the calls after it, call after call (a guest's allocator
// may make the first differ from the rest: kit-c's does). A budget below
// it ends the call with KindFuel, a FuelError saying what it used, and the
// plugin goes on serving. A plugin with no budget counts no fuel.
func TestFuelDeterministicAndBudget(t *testing.T) {
	for _, c := range []struct{ plugin, command string }{{"wat-echo", "wat-echo"}, {"kit-c", "kit-echo"}, {"kit-rust", "kit-echo"}} {
		t.Run(c.plugin, func(t *testing.T) {
			used := func(p *Plugin) int64 {
				mustCall(t, p, c.command, "the same input")
				return p.Stats().Fuel.Last
			}
			p := load(t, c.plugin, PluginConfig{PoolSize: 1, CountFuel: true})
			first := used(p)
			if again := used(load(t, c.plugin, PluginConfig{PoolSize: 1, CountFuel: true})); again != first {
				t.Fatalf("the first call of a fresh instance used %d units, then %d", first, again)
			}
			second := used(p)
			for range 3 {
				if again := used(p); again != second {
					t.Fatalf("the same call used %d units, then %d", second, again)
				}
			}
			if first <= 0 {
				t.Fatalf("a call used %d units", first)
			}
			t.Logf("%s used %d units", c.command, first)

			tight := load(t, c.plugin, PluginConfig{PoolSize: 1, CommandFuel: map[string]int64{c.command: first - 1}})
			_, err := call(t, tight, context.Background(), c.command, "the same input")
			var fe *FuelError
			if KindOf(err) != KindFuel || !errors.As(err, &fe) || fe.Budget != first-1 || fe.Used < first-1 {
				t.Fatalf("a budget of %d units, one below what the call uses: want a fuel error, got %v", first-1, err)
			}
			roomy := load(t, c.plugin, PluginConfig{PoolSize: 1, Fuel: first - 1, CommandFuel: map[string]int64{c.command: first}})
			mustCall(t, roomy, c.command, "the same input") // the command's budget wins over the plugin's
			if got := roomy.Stats().Fuel.Last; got != first {
				t.Fatalf("with a budget, the call used %d units; without, %d", got, first)
			}

			// With no budget, a plugin counts nothing: it is not metered.
			plain := load(t, c.plugin, PluginConfig{PoolSize: 1})
			mustCall(t, plain, c.command, "the same input")
			if fs := plain.Stats().Fuel; fs.Calls != 0 || plain.cfg.countsFuel() {
				t.Fatalf("a plugin with no budget counted fuel: %+v", fs)
			}
		})
	}
}

// A guest that never returns is ended by its fuel budget well before its
// deadline, and the next call runs on a fresh instance.
func TestFuelEndsEndlessLoop(t *testing.T) {
	p := load(t, "kit-c", PluginConfig{PoolSize: 1, Fuel: 10_000_000})
	_, err := call(t, p, context.Background(), "kit-deadline", "spin")
	if KindOf(err) != KindFuel {
		t.Fatalf("want a fuel error, got %v", err)
	}
	if st := p.Stats(); st.Replaced != 1 || st.Fuel.Last < 10_000_000 || st.Fuel.Last > 10_000_000+meterBatch {
		t.Fatalf("the instance must be replaced, the call cut at its budget: %+v", st)
	}
	if resp := mustCall(t, p, "kit-echo", "still serving"); string(resp.Payload) != "still serving" {
		t.Fatalf("next call: %q", resp.Payload)
	}
	fs := p.Stats().Fuel
	if fs.Calls != 2 || fs.Buckets[len(fs.Buckets)-1] != 2 || fs.Buckets[0] != 0 {
		t.Fatalf("fuel histogram: %+v", fs)
	}
}

// A call's fuel is an attribute of the span its context carries (the
// host's cmdhost.execute) when its plugin counts fuel, and absent when it
// does not.
func TestFuelOnTheSpan(t *testing.T) {
	spans := testkit.NewSpans(t)
	for _, c := range []struct {
		name   string
		counts bool
	}{{"counted", true}, {"not-counted", false}} {
		p := loadAs(t, "wat-echo", "fuel-span-"+c.name, PluginConfig{PoolSize: 1, CountFuel: c.counts})
		ctx, span := spans.Tracer("test").Start(context.Background(), "execute "+c.name)
		_, err := call(t, p, ctx, "wat-echo", "hi")
		span.End()
		if err != nil {
			t.Fatal(err)
		}
		got := testkit.SpanAttr(spans.Until(t, "execute "+c.name), "cmdhost.fuel")
		if used, err := strconv.ParseInt(got, 10, 64); c.counts && (err != nil || used != p.Stats().Fuel.Last || used <= 0) {
			t.Errorf("%s: the span's cmdhost.fuel is %q, the call used %d", c.name, got, p.Stats().Fuel.Last)
		}
		if !c.counts && got != "" {
			t.Errorf("%s: a plugin that counts no fuel set cmdhost.fuel %q", c.name, got)
		}
	}
}

// A guest cannot reach the meter's tick: a module that imports it is
// refused at load, whether its plugin counts fuel (the rewriter refuses it)
// or not (the host provides no such module then).
func TestMeterImportRefused(t *testing.T) {
	wasm := []byte{
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
		0x01, 0x06, 0x01, 0x60, 0x01, 0x7e, 0x01, 0x7e, // type: (i64) -> i64
		0x02, 0x16, 0x01, 0x0d, 'c', 'm', 'd', 'h', 'o', 's', 't', '_', 'm', 'e', 't', 'e', 'r',
		0x04, 't', 'i', 'c', 'k', 0x00, 0x00, // import cmdhost_meter.tick, a function of type 0
	}
	for _, counts := range []bool{false, true} {
		_, err := sharedEngine.Load(context.Background(), "meter-import", wasm, PluginConfig{PoolSize: 1, CountFuel: counts})
		if err == nil || !strings.Contains(err.Error(), "cmdhost_meter") {
			t.Errorf("counting fuel %v: a module importing the meter's tick loaded, or was refused without naming it: %v", counts, err)
		}
	}
}

// Fuel stops a loop of bulk table operations as it stops one of bulk
// memory operations: a table.copy is charged one unit per entry, as a
// memory.copy one per 64 bytes. Each loop (hostile-table-loop: 65,534
// entries a round; hostile-memory-loop: 65,535 bytes) runs under the same
// budget until it ends with KindFuel; what each ran is measured in the CPU
// time of the thread that ran it (the test's, locked), so that other work
// on the machine does not count. Before, a table.copy was one unit: the
// table loop ran 65,534 entries for every unit, for minutes.
func TestFuelStopsTableLoops(t *testing.T) {
	const budget = 10_000_000
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := map[string]time.Duration{}
	for _, name := range []string{"hostile-memory-loop", "hostile-table-loop"} {
		p := load(t, name, PluginConfig{PoolSize: 1, Fuel: budget})
		warmInstance(t, p)
		before, _ := threadCPU()
		_, err := call(t, p, context.Background(), "loop", "")
		after, _ := threadCPU()
		var fe *FuelError
		if KindOf(err) != KindFuel || !errors.As(err, &fe) {
			t.Fatalf("%s: want the fuel budget to end the call, got %v", name, err)
		}
		cpu[name] = after - before
		t.Logf("%s: stopped after %d units, %v of CPU", name, fe.Used, cpu[name])
	}
	// Both are ~10^7 units of work: a few to tens of ms. The table loop's
	// bound is loose (4 times the memory loop's and 100 ms more); the
	// table loop charged one unit a round ran ~10^11 entries.
	if tab, mem := cpu["hostile-table-loop"], cpu["hostile-memory-loop"]; tab > 4*mem+100*time.Millisecond {
		t.Errorf("the table loop ran %v of CPU under a budget that stopped the memory loop in %v", tab, mem)
	}
}

// A metered guest lets the goroutines waiting for its P run every
// yieldTicks ticks: with one P, the test's goroutine, made runnable by the
// guest's first tick, runs again within yieldTicks ticks of the endless
// loop. Before, it waited for the scheduler to preempt the guest (≥ 10 ms:
// ~1,000 ticks), and 32 metered spinners made a 1 s timeout answer at a
// median 2.1 s.
func TestMeteredGuestYields(t *testing.T) {
	p := load(t, "hostile-cut-tight", PluginConfig{PoolSize: 1, CountFuel: true})
	warmInstance(t, p)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var ticks atomic.Int64
	first := make(chan struct{})
	p.meter.onTick = func(bool, int64) {
		if ticks.Add(1) == 1 {
			close(first)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := call(t, p, ctx, "tight", "")
		done <- err
	}()
	<-first
	at := ticks.Load()
	cancel()
	if err := <-done; KindOf(err) != KindCanceled {
		t.Fatalf("want the cancel to end the call, got %v", err)
	}
	if at > yieldTicks {
		t.Errorf("the goroutine beside a metered guest ran at its tick %d, want ≤ %d", at, yieldTicks)
	}
}
