package wasm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/sys"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmdhost/cmdhost/abi"
)

// Plugin is one loaded version of a plugin module: its own wazero runtime,
// the compiled module, its description and a bounded pool of instances.
// Invoke is safe for concurrent use.
type Plugin struct {
	name     string
	cfg      PluginConfig
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	code     compiledCode // compiled and its host modules, closed by Close
	// instanceCost is what each instance reserves of the engine's guest
	// memory budget (budget.go).
	instanceCost int64
	desc         *abi.Description
	caps         []Capability
	log          *slog.Logger
	engine       *Engine
	pool         *pool
	idle         *idleTimer // nil without an idle timeout
	output       *outputGate
	mounts       []*mountFS // Grants.Mounts, opened at Load, closed by Close
	http         *httpFuncs // Grants.HTTP's client, closed by Close
	meter        *meterHost // the tick of the metered module (metering.go)
	countsFuel   bool       // cfg.countsFuel(): the module is metered
	// afterRun, when set (by tests, before any call), runs on the call's
	// goroutine as soon as the guest's handler returned or was cut, before
	// the engine does anything more (instance.run).
	afterRun func()
	stats    stats

	closeOnce sync.Once
	closeErr  error
}

// compiledCode is a plugin's compiled modules: the guest's and the host
// modules it imports. A runtime with a compilation cache does not release
// them when it closes (the cache outlives it, so that the next runtime
// finds them): each must be closed, or the engine's cache kept every
// version a host ever loaded, code and decoded module, ~20 KiB for the
// smallest (TestIdlePluginMemory). wazero counts references to each, so
// closing one of two plugins with the same module keeps the other's.
type compiledCode []wazero.CompiledModule

func (c compiledCode) close() {
	for _, m := range c {
		_ = m.Close(context.Background()) // never fails
	}
}

type stats struct {
	calls        atomic.Int64
	failures     atomic.Int64 // calls that returned an error
	errorReplies atomic.Int64 // calls answered with an error status
	replaced     atomic.Int64 // instances discarded after a failed call
	instances    atomic.Int64 // instances alive
	idleRel      atomic.Int64 // releases by the idle timer
	mountRefused atomic.Int64 // paths and symlinks refused for leaving a mount
	stateOps     stateOpCounts
	latency      latencyWindow
	fuel         fuelHistogram
}

// Stats is a snapshot of a plugin's counters.
type Stats struct {
	Calls    int64 // calls made
	Failures int64 // calls that returned an error
	// ErrorReplies counts the calls answered with an error status (an
	// application error, a 4xx or 5xx of the guest's): the call worked
	// and the command said no.
	ErrorReplies int64
	Replaced     int64 // instances discarded after a failed call
	Instances    int64 // instances alive now
	InUse        int   // calls running now
	// IdleReleases counts the times the idle timeout released the
	// plugin's instances; a timeout that found none idle is not counted.
	IdleReleases int64
	// P50 and P99 are the latencies of the last 1024 calls, failed ones
	// included.
	P50, P99 time.Duration
	// OutputDroppedLines and OutputDroppedBytes count the guest output
	// (stdout, stderr, log calls) dropped over the plugin's OutputLimits;
	// the bytes include those cut from over-long lines.
	OutputDroppedLines, OutputDroppedBytes int64
	// MountRefusals counts the guest's file system calls refused because
	// they would leave a mount (a path or symlink out of it) or make a
	// symlink that points up (see Mount).
	MountRefusals int64
	// Fuel is the fuel the plugin's calls used (fuel.go).
	Fuel FuelStats
	// StateOps counts the guest's state calls by op and result
	// (stateops.go).
	StateOps StateOps
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return p.name }

// Description returns what the module declared about itself. The caller
// must not modify it.
func (p *Plugin) Description() *abi.Description { return p.desc }

// Capabilities returns the WASI capability classes the module imports.
func (p *Plugin) Capabilities() []Capability { return append([]Capability(nil), p.caps...) }

// Imports returns the module's imports as "module.function".
func (p *Plugin) Imports() []string {
	fns := p.compiled.ImportedFunctions()
	out := make([]string, len(fns))
	for i, f := range fns {
		mod, name, _ := f.Import()
		out[i] = mod + "." + name
	}
	return out
}

// Vars returns the plugin's variables, which the engine keeps by plugin
// name. They are looked up on use, so a load that fails leaves none behind.
func (p *Plugin) Vars() *Vars { return p.engine.Vars(p.name) }

// Stats returns a snapshot of the plugin's counters.
func (p *Plugin) Stats() Stats {
	st := Stats{
		Calls: p.stats.calls.Load(), Failures: p.stats.failures.Load(), ErrorReplies: p.stats.errorReplies.Load(),
		Replaced: p.stats.replaced.Load(), Instances: p.stats.instances.Load(),
		InUse: p.pool.inUse(), IdleReleases: p.stats.idleRel.Load(),
		OutputDroppedLines: p.output.droppedLines.Load(), OutputDroppedBytes: p.output.droppedBytes.Load(),
		MountRefusals: p.stats.mountRefused.Load(), Fuel: p.stats.fuel.snapshot(), StateOps: p.stats.stateOps.snapshot(),
	}
	st.P50, st.P99 = p.stats.latency.percentiles()
	return st
}

// describe checks the ABI version of a fresh instance and reads its
// description.
func (p *Plugin) describe(ctx context.Context, inst *instance) (*abi.Description, error) {
	var st callState
	v, _, err := inst.run(ctx, inst.mod.ExportedFunction(abi.ExportABIVersion), &st, p.cfg.MemoryPages)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", abi.ExportABIVersion, err)
	}
	if v != abi.Version {
		return nil, fmt.Errorf("built for ABI version %d; this host speaks version %d", v, abi.Version)
	}
	st = callState{describe: true}
	rc, _, err := inst.run(ctx, inst.mod.ExportedFunction(abi.ExportDescribe), &st, p.cfg.MemoryPages)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", abi.ExportDescribe, err)
	case st.outErr != nil:
		return nil, fmt.Errorf("description refused: %w", st.outErr)
	case rc != 0:
		return nil, fmt.Errorf("%s returned %d: %s", abi.ExportDescribe, rc, st.guestReason())
	case st.desc == nil:
		return nil, fmt.Errorf("%s returned without handing over a description", abi.ExportDescribe)
	}
	return st.desc, nil
}

// Invoke runs one request on an instance of its own and returns the
// guest's response. ctx bounds the whole call, waiting for an instance
// included: at its deadline or cancel the guest is stopped, even in a tight
// loop or a sleep, and its instance discarded. The request's Deadline is
// set from ctx when it has none. A request whose content type the command
// does not accept gets a 415 response without running the guest. A response
// with an application error or a protocol status is a response, not an
// error; an error is an *Error.
func (p *Plugin) Invoke(ctx context.Context, req *abi.Request) (*abi.Response, error) {
	cmd := p.desc.Command(req.Command)
	if cmd == nil {
		return nil, &Error{Kind: KindUnknownCommand, Plugin: p.name, Command: req.Command}
	}
	if !cmd.Accepts(req.ContentType) {
		return &abi.Response{Status: abi.StatusUnsupportedType, Message: "the command does not accept this content type",
			PropName: "Content Type", PropValue: req.ContentType}, nil
	}
	p.stats.calls.Add(1)
	start := time.Now()
	resp, kind, err := p.invoke(ctx, req, start)
	p.stats.latency.record(time.Since(start))
	if kind != 0 {
		p.stats.failures.Add(1)
		return nil, &Error{Kind: kind, Plugin: p.name, Command: req.Command, Err: err}
	}
	if resp.Code() >= 400 {
		p.stats.errorReplies.Add(1)
	}
	return resp, nil
}

// invoke runs the call that Invoke began at start.
func (p *Plugin) invoke(ctx context.Context, req *abi.Request, start time.Time) (_ *abi.Response, kind Kind, _ error) {
	// The idle timer brackets the whole call, failed or not: begin before
	// acquiring an instance, end (deferred first, so run last) after it is
	// released or discarded.
	p.idle.begin()
	defer p.idle.end()
	inst, err := p.pool.acquire(ctx)
	if err != nil {
		return nil, ctxKind(err), fmt.Errorf("waiting for an instance: %w", err)
	}
	healthy := false
	defer func() {
		// release hands back an instance to close: a failed one, or a
		// healthy one whose plugin is closing. Only the first is replaced.
		done := p.pool.release(inst, healthy)
		if done == nil && inst != nil {
			p.engine.budget.signal() // an idle instance: a call waiting for memory may close it
		}
		if done != nil {
			done.close(p)
			if !healthy {
				p.stats.replaced.Add(1)
				p.log.Info("instance replaced", "plugin", p.name, "command", req.Command, "after", kind.String())
			}
		}
	}()
	if inst != nil && req.Attempt > 1 {
		// A retry after a timeout runs on a fresh instance: no state of
		// earlier calls (the one that timed out was discarded already).
		inst.close(p)
		inst = nil
	}
	if inst == nil {
		// A nested call does not wait for memory: its callers may hold it.
		_, nested := req.Metadata[abi.ChainKey]
		if inst, err = p.newInstance(ctx, !nested); err != nil {
			switch code, stopped := stopCode(ctx); {
			case stopped && code == sys.ExitCodeContextCanceled:
				return nil, KindCanceled, err
			case stopped: // the tick may see the deadline before the context's timer fires
				return nil, KindDeadline, err
			case errors.Is(err, ErrMemoryBudget):
				return nil, KindMemoryBudget, err
			}
			return nil, KindInstantiate, err
		}
	}
	r := *req
	if d, ok := ctx.Deadline(); ok && r.Deadline.IsZero() {
		r.Deadline = d
	}
	inst.reqBuf = abi.AppendRequest(inst.reqBuf[:0], &r)
	inst.state = callState{request: inst.reqBuf, req: req, maxResp: p.cfg.MaxResponseBytes, fuel: p.cfg.fuelBudget(req.Command)}
	st := &inst.state
	st.afterRun = p.afterRun
	rc, kind, err := inst.run(ctx, inst.handle, st, p.cfg.MemoryPages)
	if p.countsFuel {
		p.stats.fuel.record(st.meter.used)
		if span := trace.SpanFromContext(ctx); span.IsRecording() { // the call's cmdhost.execute
			span.SetAttributes(attrFuel.Int64(st.meter.used))
		}
	}
	if kind == KindFuel {
		err = &FuelError{Used: st.meter.used, Budget: st.fuel}
	}
	resp, outErr, reason := st.response, st.outErr, st.guestReason()
	inst.forgetCall() // an idle instance keeps nothing of the call
	if kind != 0 {
		return nil, kind, err
	}
	if time.Since(start) > freshHandleAfter {
		inst.freshHandle()
	}
	switch {
	case outErr != nil:
		return nil, KindBadOutput, outErr
	case rc != 0:
		return nil, KindBadOutput, fmt.Errorf("%s returned %d without a response: %s", abi.ExportHandle, rc, reason)
	case resp == nil:
		return nil, KindBadOutput, fmt.Errorf("%s returned without writing a response", abi.ExportHandle)
	}
	healthy = true
	return resp, 0, nil
}

// ctxKind maps an error from waiting on the pool to a Kind; KindClosed when
// it is not a context error.
func ctxKind(err error) Kind {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return KindDeadline
	case errors.Is(err, context.Canceled):
		return KindCanceled
	}
	return KindClosed
}

// ReleaseIdle closes the plugin's idle instances and returns how many; the
// compiled module stays, and the next call makes a fresh instance.
func (p *Plugin) ReleaseIdle() int {
	idle := p.pool.takeIdle()
	for _, inst := range idle {
		inst.close(p)
	}
	return len(idle)
}

// closeOneIdle closes one idle instance, to make room in the guest memory
// budget, and says whether there was one.
func (p *Plugin) closeOneIdle() bool {
	inst := p.pool.takeOneIdle()
	if inst == nil {
		return false
	}
	inst.close(p)
	p.log.Debug("closed an idle instance to make room in the guest memory budget", "plugin", p.name)
	return true
}

// releaseForIdle is the idle timer's onIdle.
func (p *Plugin) releaseForIdle() {
	if n := p.ReleaseIdle(); n > 0 {
		p.stats.idleRel.Add(1)
		p.log.Debug("released idle instances", "plugin", p.name, "instances", n, "idle_timeout", p.cfg.IdleTimeout)
	}
}

// Close stops new calls, waits until ctx is done for the calls in flight to
// finish, then closes the runtime, which stops any call still running, and
// hands the memory freed back to the operating system.
func (p *Plugin) Close(ctx context.Context) error {
	p.closeOnce.Do(func() {
		p.idle.stop()
		p.engine.unregister(p)
		idle, err := p.pool.close(ctx)
		for _, inst := range idle {
			inst.close(p)
		}
		p.meter.closing.Store(true) // a call still running ends at its next tick
		p.closeErr = errors.Join(err, p.rt.Close(context.Background()))
		p.code.close()
		closeMounts(p.mounts)
		p.http.close()
		// A plugin's instances may hold hundreds of MiB (pool size times
		// the memory limit); the runtime's scavenger would return them to
		// the OS over seconds (measured: half of 1.2 GiB after 3 s). A
		// plugin closes rarely: on reload, removal or stop. FreeOSMemory
		// collects and returns them now (~1–5 ms of this goroutine).
		debug.FreeOSMemory()
	})
	return p.closeErr
}
