package wasm

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/cmdhost/cmdhost/internal/wasm/meter"
)

// Fuel by load-time metering (package meter): the module of a plugin that
// counts fuel (PluginConfig.countsFuel) is rewritten at load to count its
// work in units (about one per instruction) in a counter of its own and to
// call the tick below when a batch of meterBatch units is spent. The tick
// checks the call's context and the plugin's closing, charges the fuel and
// hands out the next batch, or ends the call; wazero's own check
// (WithCloseOnContextDone) is off for it, since the tick does its work.
// Counting costs compute 1.0–1.45× (BENCHMARKS.md, Compute); a plugin that
// counts no fuel runs unrewritten, with wazero's check on, which cmdhost's
// copy of wazero makes an inline test (third_party/wazero/CMDHOST.md):
// 1.0–1.2×.
//
// How late a deadline cuts a guest is bounded by counting: between two
// ticks the guest runs at most meterBatch units, each at most one
// instruction, plus one bulk memory or table operation (charged by size
// before it runs) and host functions, which honour the context themselves. At ~1 ns
// an instruction a batch is ~65 µs; memory-bound code a few times that.

// meterBatch is the units a guest runs between two ticks.
const meterBatch = 1 << 16

// meterState is the metering of one call: the fuel budget and what was
// handed out and used. It belongs to the call's state (callState), so to
// one instance running one call.
type meterState struct {
	budget int64 // units the call may use; 0: no budget
	given  int64 // the counter as last set: what the running batch started at
	used   int64 // units charged by the batches before the running one
	ticks  int64 // the call's ticks so far (yieldTicks)
}

// errFuelExhausted ends a call that used its fuel budget.
var errFuelExhausted = errors.New("fuel exhausted")

// start sets the instance's counter for a call with the given budget.
func (m *meterState) start(counter api.MutableGlobal, budget int64) {
	*m = meterState{budget: budget}
	m.given = m.next()
	counter.Set(uint64(m.given))
}

// stop charges what the last batch used, once the call returned or ended.
func (m *meterState) stop(counter api.MutableGlobal) {
	left := int64(counter.Get())
	m.used += m.given - left
	m.given = left
}

// next is the next batch: meterBatch units, or what the budget has left.
func (m *meterState) next() int64 {
	if m.budget > 0 {
		return min(meterBatch, m.budget-m.used)
	}
	return meterBatch
}

// tick charges the batch that ran out (the counter is below 0: what is to
// run next is not paid for) and returns the next batch (≥ 0), or -1 when
// the budget is spent.
func (m *meterState) tick(counter int64) int64 {
	m.used += m.given - counter
	m.given = counter // charged: stop charges nothing more if the call ends here
	if m.budget > 0 && m.used > m.budget {
		return -1
	}
	m.given = m.next()
	return m.given
}

// meterHost is the tick import of one plugin's runtime. closing is set when
// the plugin closes: without wazero's check, the tick is what stops a call
// still running then.
type meterHost struct {
	closing atomic.Bool
	// onTick, when set (by tests, before any call), is told of every tick
	// of a call: whether it ends the call at its deadline or cancel, and the
	// units the guest ran since the tick before.
	onTick func(stop bool, units int64)
}

func (h *meterHost) builder(rt wazero.Runtime) wazero.HostModuleBuilder {
	b := rt.NewHostModuleBuilder(meter.ImportModule)
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(h.tick), []api.ValueType{i64}, []api.ValueType{i64}).
		Export(meter.ImportName)
	return b
}

// tick ends the call when its context is done, with the exit codes that
// wazero's own check used (classify tells them apart), or when the plugin
// closes or the fuel is spent; it returns the next batch otherwise. It runs
// on the guest's goroutine, like any host function.
func (h *meterHost) tick(ctx context.Context, _ api.Module, stack []uint64) {
	st := stateOf(ctx)
	code, stop := stopCode(ctx)
	if h.onTick != nil && st != nil {
		h.onTick(stop, st.meter.given-int64(stack[0]))
	}
	if stop {
		panic(sys.NewExitError(code))
	}
	if h.closing.Load() {
		panic(sys.NewExitError(0)) // what closing the runtime answered a running call
	}
	if st == nil { // the initializer: no budget
		stack[0] = meterBatch
		return
	}
	next := st.meter.tick(int64(stack[0]))
	if next < 0 {
		panic(errFuelExhausted) // not an exit: classify tells it apart
	}
	stack[0] = uint64(next)
	// Go cannot preempt compiled code, and a metered guest runs with its
	// P (wazero's system call state is for guests with its own check):
	// every yieldTicks ticks, the goroutines waiting for one (other calls,
	// the timers of their deadlines, the broker) run here. Without it they
	// waited for the scheduler to preempt the guest at a tick, ≥ 10 ms
	// later: beside 32 metered spinners a 1 s timeout was answered at a
	// median 2.1 s and an echo took 1.5 s.
	if st.meter.ticks++; st.meter.ticks%yieldTicks == 0 {
		runtime.Gosched()
	}
}

// endIfCut ends a call whose context is done as a blocking host function
// (a nested invocation, an HTTP request) returns to it, with the exit code
// the tick would give: the guest never sees the answer of a call that is
// being cut. Leaving it to the guest's next check raced: a guest run
// with wazero's own check is stopped by a goroutine that watches the
// context, which a busy machine ran after the guest had answered (the
// invoke's refusal) and returned.
func endIfCut(ctx context.Context) {
	if code, stop := stopCode(ctx); stop {
		panic(sys.NewExitError(code))
	}
}

// yieldTicks is how often a metered guest yields its P, in ticks: every
// ~1 ms of guest code (a yield costs ~0.3 µs, ~0.03 % of that).
const yieldTicks = 16

// stopCode says whether a call must stop, and its exit code: its context
// is done, or its deadline passed (the context's timer may fire a little
// later on a busy machine).
func stopCode(ctx context.Context) (uint32, bool) {
	switch err := ctx.Err(); {
	case errors.Is(err, context.Canceled):
		return sys.ExitCodeContextCanceled, true
	case err != nil:
		return sys.ExitCodeDeadlineExceeded, true
	}
	// time.Until reads the monotonic clock alone when d has a monotonic
	// reading (as a deadline from context.WithTimeout has): half of what
	// time.Now costs (24 ns against 44 here), at each tick.
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= 0 {
		return sys.ExitCodeDeadlineExceeded, true
	}
	return 0, false
}

// meterModule instruments a module (already bounded: boundModule); when it
// cannot be instrumented, compileErr is what wazero says of the module as
// it is, since an invalid module is better explained by wazero.
func meterModule(wasm []byte, compileErr func() error) ([]byte, error) {
	out, err := meter.Instrument(wasm)
	if err == nil {
		return out, nil
	}
	if werr := compileErr(); werr != nil {
		return nil, werr
	}
	return nil, fmt.Errorf("the module cannot be metered for deadlines and fuel: %w", err)
}
