package wasm

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/wasm/meter"
)

// instance is one instantiated module. It runs one call at a time; the
// pool guarantees that.
type instance struct {
	mod    api.Module
	handle api.Function
	mem    *instanceMemory // its linear memory, freed once no guest code runs on it
	// counter is the metering's counter of units left (metering.go); nil
	// when the plugin does not count fuel.
	counter api.MutableGlobal

	// done is the Done channel of the running call's context, read by the
	// nanosleep hook so a guest's sleep ends at the deadline (wazero's own
	// nanosleep ignores the context).
	done atomic.Pointer[<-chan struct{}]
	oom  atomic.Bool // the guest printed the runtime's out-of-memory message
	out  callOutput  // what the guest wrote during the running call (trapout.go)
	gate *outputGate // the plugin's, where out's held lines go
	// stdout and stderr are the guest's streams, whose unfinished line a
	// failed call flushes: a guest that dies mid-line (C's fputs before
	// abort) never ends it.
	stdout, stderr *guestOutput
	reqBuf         []byte // reused encoding buffer for requests
	state          callState
}

// newInstance reserves an instance's memory in the engine's budget
// (waiting for it until ctx ends when wait is set), instantiates the
// plugin's compiled module and runs its reactor initializer under ctx.
func (p *Plugin) newInstance(ctx context.Context, wait bool) (_ *instance, err error) {
	if err := p.engine.reserveInstance(ctx, p, wait); err != nil {
		return nil, err
	}
	mem := &instanceMemory{}
	defer func() {
		if err != nil {
			mem.free()
			p.engine.budget.release(p.instanceCost)
		}
	}()
	inst := &instance{gate: p.output}
	done := ctx.Done()
	inst.done.Store(&done)
	out := func(stream string, level slog.Level) *guestOutput {
		return &guestOutput{gate: p.output, stream: stream, level: level, oom: &inst.oom, call: &inst.out}
	}
	inst.stdout, inst.stderr = out("stdout", slog.LevelInfo), out("stderr", slog.LevelWarn)
	cfg := p.cfg.Grants.moduleConfig(wazero.NewModuleConfig(), p.mounts).
		WithName(""). // instances are anonymous: names would clash
		WithStartFunctions(abi.ExportInitialize).
		WithStdout(inst.stdout).
		WithStderr(inst.stderr).
		WithSysWalltime().
		WithSysNanotime().
		WithRandSource(rand.Reader).
		WithNanosleep(inst.nanosleep)
	// The start functions run outside any call: the context of a nested
	// call's instance carries its caller's call state (the outer guest's,
	// still running), which the new instance's host functions and ticks
	// must not touch.
	initCtx := context.WithValue(experimental.WithMemoryAllocator(ctx, mem), callKey{}, (*callState)(nil))
	mem.enter() // the start functions run guest code on the memory
	mod, err := p.rt.InstantiateModule(initCtx, p.compiled, cfg)
	mem.leave()
	if err != nil {
		inst.flushOutput()
	}
	if said, _ := inst.out.end(err != nil, p.output, abi.ExportInitialize); said != "" {
		err = &guestFailure{said: said, err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("instantiating: %w", err)
	}
	inst.mod, inst.mem = mod, mem
	inst.handle = mod.ExportedFunction(abi.ExportHandle)
	if p.countsFuel {
		inst.counter, _ = mod.ExportedGlobal(meter.CounterExport).(api.MutableGlobal)
		if inst.counter == nil {
			_ = mod.Close(ctx)
			return nil, errors.New("instantiating: the metered module has no counter")
		}
	}
	p.stats.instances.Add(1)
	return inst, nil
}

// nanosleep sleeps for ns or until the running call's context is done.
func (inst *instance) nanosleep(ns int64) {
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-*inst.done.Load():
	}
}

// idleBufferBytes is the largest request buffer an idle instance keeps for
// its next call: one grown for a larger request is dropped, so that idle
// instances hold on the host's heap no more than their guests' memory.
const idleBufferBytes = 64 << 10

// forgetCall drops what the instance holds of its last call: the call
// state, with the request and response, and a request buffer grown past
// idleBufferBytes.
func (inst *instance) forgetCall() {
	inst.state = callState{}
	if cap(inst.reqBuf) > idleBufferBytes {
		inst.reqBuf = nil
	}
}

// freshHandleAfter is how long a call must have taken for its instance to
// get a fresh handle afterwards (freshHandle). The stack of a call grows
// no faster than the guest runs (a recursion 30,000 deep took ~0.9 ms and
// ~640 KiB of stack), so a shorter call leaves little; a fresh handle costs
// ~1.3 µs and 12 KiB, under 0.2 % of a call this long.
const freshHandleAfter = time.Millisecond

// freshHandle replaces the instance's handle of the handle export with a
// new one. wazero keeps a call's stack with the function handle and never
// shrinks it: a guest that recursed deep and returned would otherwise keep
// up to ~5 MiB of stack in its idle instance (stackBytes bounds it; the
// budget reserves it).
func (inst *instance) freshHandle() {
	inst.handle = inst.mod.ExportedFunction(abi.ExportHandle)
}

func (inst *instance) close(p *Plugin) {
	_ = inst.mod.Close(context.Background()) // frees its memory (instanceMemory)
	p.stats.instances.Add(-1)
	p.engine.budget.release(p.instanceCost)
}

// run calls an export with the call state st carried by the context and
// returns its i32 result; a failure is classified into a Kind, and its
// error is led by the guest's failure message when it printed one
// (trapout.go). st.reason is set to the first warning the guest wrote.
// limitPages is the instance's memory limit.
func (inst *instance) run(ctx context.Context, fn api.Function, st *callState, limitPages uint32) (int32, Kind, error) {
	done := ctx.Done()
	inst.done.Store(&done)
	inst.oom.Store(false)
	st.out = &inst.out
	inst.mem.enter()
	if inst.counter != nil {
		st.meter.start(inst.counter, st.fuel)
	}
	res, err := fn.Call(context.WithValue(ctx, callKey{}, st))
	if st.afterRun != nil {
		st.afterRun()
	}
	if inst.counter != nil {
		st.meter.stop(inst.counter)
	}
	inst.mem.leave()
	if err != nil {
		inst.flushOutput()
	}
	said, reason := inst.out.end(err != nil, inst.gate, callName(fn, st))
	st.out, st.reason = nil, reason
	if err == nil {
		return api.DecodeI32(res[0]), 0, nil
	}
	kind := inst.classify(ctx, err, limitPages)
	if said != "" {
		err = &guestFailure{said: said, err: err}
	}
	return 0, kind, err
}

// flushOutput ends the guest's unfinished output lines.
func (inst *instance) flushOutput() {
	inst.stderr.flush()
	inst.stdout.flush()
}

// callName names a call in the log: its command, or the export called.
func callName(fn api.Function, st *callState) string {
	if st.req != nil {
		return st.req.Command
	}
	if names := fn.Definition().ExportNames(); len(names) > 0 {
		return names[0]
	}
	return fn.Definition().Name()
}

// classify tells a failed call's cause: the context's deadline or cancel
// (the metering's tick ends the call with a matching exit code, as wazero's
// own check did: metering.go), its fuel budget (KindFuel), the guest running
// out of memory, or any other trap or exit. wazero does not say that a
// trap followed a failed memory.grow, so out of memory is inferred: the Go
// runtime prints "out of memory" before it aborts, and a guest in another
// language that traps with its memory within oomSlack of the limit most
// likely failed to grow.
func (inst *instance) classify(ctx context.Context, err error, limitPages uint32) Kind {
	if errors.Is(err, errFuelExhausted) {
		return KindFuel
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			return KindDeadline
		case sys.ExitCodeContextCanceled:
			return KindCanceled
		}
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return KindDeadline
	case errors.Is(ctx.Err(), context.Canceled):
		return KindCanceled
	case inst.oom.Load():
		return KindOutOfMemory
	}
	if mem := inst.mod.Memory(); mem != nil && limitPages > 0 {
		slack := max(limitPages/16, 16)
		if mem.Size()/pageSize+slack >= limitPages {
			return KindOutOfMemory
		}
	}
	return KindTrap
}

// pageSize is the WebAssembly page size.
const pageSize = 65536
