package wasm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/cmdhost/cmdhost/internal/bytesize"
	"github.com/cmdhost/cmdhost/internal/wasmbin"
)

// The guest memory budget bounds the memory of all of an engine's
// instances together, across plugins.
//
// What an instance costs is reserved when it is made and given back when
// it is closed: its memory maximum (the plugin's memory limit, or the
// module's own smaller maximum) plus what the runtime adds per instance
// (instanceOverheadBytes and its tables). Reserving the maximum, not
// charging each memory.grow, has two reasons: a guest never fails half way
// through a call because other plugins' guests are busy (the refusal comes
// before it runs, so a refused call has no effect and is safe to retry),
// and whether a call runs does not depend on how far its guest happens to
// grow.
//
// A call that needs a new instance when the budget is full first closes
// idle instances, of any plugin, until its reservation fits. If it still
// does not, a call from an invoker waits, as it waits for a pool slot,
// until an instance closes or goes idle, or its context ends; a nested
// call (its request carries abi.ChainKey) is refused at once
// (KindMemoryBudget, which the host answers 503): its callers hold
// instances while they wait for it, so waiting for memory they hold could
// only end at the deadline. The pool bounds the calls per plugin and the
// budget what the pools together hold: an operator sizes it to the sum over
// plugins of pool × (memory limit + overhead) to never wait, or below that
// to overcommit (the engine logs a warning when the loaded plugins' pools
// can hold more than the budget).
//
// Guest memory lives outside the Go heap (linearmem_linux.go), so the
// budget is what the guests' memory adds to the host's RSS at most.

// DefaultMaxGuestMemory is Config.MaxGuestMemory when it is not set: room
// for about four plugins of the default pool (4) and memory limit (64
// MiB), each instance with its call stack (~73 MiB).
const DefaultMaxGuestMemory = 1 << 30

// What an instance costs the host's Go heap besides its linear memory,
// from the module's shape (instanceOverhead). wazero makes, per instance,
// a slice header for each data segment (a Go guest has ~41,000: most of
// its ~0.9 MiB), one for each element segment, a global instance for each
// global, an entry for each imported function, its tables, the module
// instance and the call's initial stack. The figures are above what
// TestInstanceOverhead measures for Go, Rust, C and WAT guests (~10 KiB for
// a WAT module, ~0.9–1.1 MiB for a Go guest). To that, the call stack
// (stackBytes).
const (
	instanceBaseBytes   = 64 << 10
	perDataSegmentBytes = 32
	perElemSegmentBytes = 32
	perGlobalBytes      = 96
	perImportBytes      = 64
	perFunctionBytes    = 16
	perTableEntryBytes  = 8
)

// stackBytes is what a call's stack may hold of the host's memory:
// callStackCeiling in cmdhost's copy of wazero (call_engine.go). The stack
// grows on the Go heap while a guest recurses, doubling, and a call that
// needs more traps (stack overflow); it stays with the instance's function
// handle after the call. Each instance runs one call at a time, so each
// reserves it. Upstream's ceiling let one call hold ~126 MB (84 MB of
// stack and the copy it grew from): 8 recursing calls grew the host by
// 1 GB under a budget of 64 MiB (TestCallStackWithinBudget).
const stackBytes = 8 << 20

// instanceOverhead is what one instance of wasm costs besides its linear
// memory, its tables counted at the plugin's table limit, and its call
// stack. The module was checked by boundModule: its counts are bounded,
// and a section whose count does not read is counted as empty (wazero
// refuses the module).
func instanceOverhead(wasm []byte, tableEntries uint32) int64 {
	n := int64(instanceBaseBytes) + stackBytes + int64(tableEntries)*perTableEntryBytes
	if len(wasm) < len(wasmMagic) {
		return n
	}
	r := &wasmbin.Reader{B: wasm, Off: len(wasmMagic)}
	for !r.Done() {
		id, _ := r.Byte()
		size, err := r.U32()
		if err != nil {
			break
		}
		body, err := r.Bytes(size)
		if err != nil {
			break
		}
		per := map[byte]int64{secData: perDataSegmentBytes, secElement: perElemSegmentBytes, secGlobal: perGlobalBytes,
			secImport: perImportBytes, secFunction: perFunctionBytes}[id]
		if per == 0 {
			continue
		}
		count, err := (&wasmbin.Reader{B: body}).U32()
		if err != nil {
			continue
		}
		n += int64(count) * per
	}
	return n
}

// memoryBudget is the engine's account of reserved guest memory. Its
// fields are under mu; refusals is atomic for the stats. changed is
// closed, and replaced, whenever memory may have become available: an
// instance closed (release) or went idle (signal), so that waiting calls
// try again.
type memoryBudget struct {
	limit    int64 // <= 0: no budget, only accounting
	refusals atomic.Int64

	mu       sync.Mutex
	reserved int64
	changed  chan struct{} // nil until a caller waits
	// waiting mirrors changed != nil, so that signal, called at the end of
	// every call, takes no lock while no call waits.
	waiting atomic.Bool

	onWait func() // tests: called when a caller starts to wait
}

// tryReserve reserves n bytes when they fit.
func (b *memoryBudget) tryReserve(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limit > 0 && b.reserved+n > b.limit {
		return false
	}
	b.reserved += n
	return true
}

// release gives back n bytes reserved before.
func (b *memoryBudget) release(n int64) {
	b.mu.Lock()
	b.reserved -= n
	b.signalLocked()
	b.mu.Unlock()
}

// signal wakes the waiting calls: an instance went idle and may be closed
// for them.
func (b *memoryBudget) signal() {
	if !b.waiting.Load() {
		return
	}
	b.mu.Lock()
	b.signalLocked()
	b.mu.Unlock()
}

func (b *memoryBudget) signalLocked() {
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
		b.waiting.Store(false)
	}
}

// next returns a channel closed at the next release or signal. A caller
// takes it before it tries to reserve, so it cannot miss a release that
// happens between its try and its wait.
func (b *memoryBudget) next() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed == nil {
		b.changed = make(chan struct{})
		b.waiting.Store(true)
	}
	return b.changed
}

func (b *memoryBudget) used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reserved
}

// GuestMemoryStats is a snapshot of the engine's guest memory budget.
type GuestMemoryStats struct {
	// Limit is the budget in bytes; 0 when there is none.
	Limit int64
	// Reserved is what the live instances hold of it.
	Reserved int64
	// Refusals counts the nested calls refused at once because the budget
	// was full even after closing every idle instance (calls that waited
	// until their deadline are counted as timeouts).
	Refusals int64
}

// GuestMemory returns the budget's figures.
func (e *Engine) GuestMemory() GuestMemoryStats {
	return GuestMemoryStats{Limit: max(e.budget.limit, 0), Reserved: e.budget.used(), Refusals: e.budget.refusals.Load()}
}

// ErrMemoryBudget is the cause of KindMemoryBudget errors.
var ErrMemoryBudget = errors.New("guest memory budget exhausted")

// reserveInstance reserves p's instance cost, closing idle instances of
// the engine's plugins to make room when the budget is full, and waiting
// for room until ctx ends when wait is set. The error wraps ErrMemoryBudget,
// and ctx's error when the wait ended with it.
func (e *Engine) reserveInstance(ctx context.Context, p *Plugin, wait bool) error {
	cost := p.instanceCost
	warned := false
	for {
		changed := e.budget.next()
		if e.budget.tryReserve(cost) || e.makeRoom(cost) {
			return nil
		}
		if !wait {
			break
		}
		if !warned {
			e.warnBudgetFull(p, "a call of %s waits for memory until an instance of another plugin is idle")
			warned = true
		}
		if e.budget.onWait != nil {
			e.budget.onWait()
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%w (waited for memory until the call's context ended): %w", e.budgetRefusal(p), ctx.Err())
		}
	}
	e.budget.refusals.Add(1)
	e.warnBudgetFull(p, "a nested call of %s is refused (503)")
	return e.budgetRefusal(p)
}

// warnBudgetFull says, at most once a minute (e.budgetFull), that the
// guest memory budget binds: what it did to a call (what, with the
// plugin's name), in figures a person reads, and what to change. It is
// the warning that matters: the pools being able to hold more than the
// budget (register) is normal and only logged at debug.
func (e *Engine) warnBudgetFull(p *Plugin, what string) {
	ok, leftOut := e.budgetFull.Allow(p.cfg.Clock.Now())
	if !ok {
		return
	}
	attrs := []any{"plugin", p.name}
	if leftOut > 0 {
		attrs = append(attrs, "like_it_since_the_last", leftOut)
	}
	e.log.Warn(fmt.Sprintf("guest memory budget full: "+what+": its new instance needs %s and running instances hold %s of the %s budget; "+
		"if this recurs, raise serve --max-guest-memory, or lower --pool or the plugins' memoryPages",
		p.name, bytesize.Human(p.instanceCost), bytesize.Human(e.budget.used()), bytesize.Human(e.budget.limit)), attrs...)
}

// makeRoom closes idle instances, oldest first in each plugin, until cost
// fits, and reserves it; false when even closing every idle instance would
// not make room, and then it closes none: a call that is refused (a nested
// one) or waits anyway must not throw away the other plugins' warm
// instances for nothing. It looks only at the plugins that have idle
// instances (withIdle): walking every plugin loaded made each load of a
// start with 1,000 plugins, once the budget was full, cost ~0.2 ms
// (BENCHMARKS.md, "Where a start's time goes").
func (e *Engine) makeRoom(cost int64) bool {
	plugins := e.pluginsWithIdle()
	var idle int64
	for _, other := range plugins {
		idle += int64(other.pool.idleCount()) * other.instanceCost
	}
	if l := e.budget.limit; l > 0 && e.budget.used()-idle+cost > l {
		return false
	}
	for _, other := range plugins {
		for other.closeOneIdle() {
			if e.budget.tryReserve(cost) {
				return true
			}
		}
	}
	return false
}

func (e *Engine) budgetRefusal(p *Plugin) error {
	return fmt.Errorf("%w: a new instance of %s needs %s; running instances hold %s of the %s budget (serve --max-guest-memory): retry later, or raise the budget or lower pools or memory limits",
		ErrMemoryBudget, p.name, mib(p.instanceCost), mib(e.budget.used()), mib(e.budget.limit))
}

// pluginsWithIdle returns the plugins that had idle instances a moment
// ago (a call may have taken them since).
func (e *Engine) pluginsWithIdle() []*Plugin {
	e.idleMu.Lock()
	defer e.idleMu.Unlock()
	out := make([]*Plugin, 0, len(e.withIdle))
	for p := range e.withIdle {
		out = append(out, p)
	}
	return out
}

// noteIdle is p's pool's onIdle: it keeps withIdle. Called with the
// pool's lock held (the order: a pool's lock, then idleMu).
func (e *Engine) noteIdle(p *Plugin, has bool) {
	e.idleMu.Lock()
	defer e.idleMu.Unlock()
	if has {
		e.withIdle[p] = struct{}{}
	} else {
		delete(e.withIdle, p)
	}
}

// register adds a loaded plugin to those whose idle instances make room,
// and says at debug level, once each time it happens, when the loaded
// plugins' pools come to hold more than the budget (a folder of many
// plugins does: one line, not one per plugin). That was a warning with
// raw byte counts at every `make run`, though nothing needs doing until
// calls find the budget full.
func (e *Engine) register(p *Plugin) {
	e.mu.Lock()
	if _, ok := e.plugins[p]; !ok {
		e.plugins[p] = struct{}{}
		e.poolsBytes += p.poolBytes()
	}
	most := e.poolsBytes
	crossed := e.budget.limit > 0 && most > e.budget.limit && !e.overBudget
	e.overBudget = e.budget.limit > 0 && most > e.budget.limit
	e.mu.Unlock()
	if crossed { // normal (instances are made on demand): nothing to act on until the budget binds (warnBudgetFull)
		e.log.Debug(fmt.Sprintf("guest memory: the loaded plugins' pools, all full, would hold %s, more than the %s budget (serve --max-guest-memory); "+
			"a warning says when a call has to wait for memory", bytesize.Human(most), bytesize.Human(e.budget.limit)), "plugin", p.name)
	}
}

// poolBytes is what p's pool holds when full.
func (p *Plugin) poolBytes() int64 { return int64(p.cfg.PoolSize) * p.instanceCost }

func (e *Engine) unregister(p *Plugin) {
	e.mu.Lock()
	if _, ok := e.plugins[p]; ok {
		delete(e.plugins, p)
		e.poolsBytes -= p.poolBytes()
	}
	e.overBudget = e.budget.limit > 0 && e.poolsBytes > e.budget.limit
	e.mu.Unlock()
}

// instanceCost is what one instance of a plugin reserves of the budget:
// its memory maximum and the runtime's overhead (instanceOverhead).
func instanceCost(wasm []byte, compiled wazero.CompiledModule, cfg PluginConfig) int64 {
	mem := int64(cfg.MemoryPages) * pageSize
	if mems := compiled.ExportedMemories(); len(mems) == 1 {
		for _, m := range mems {
			if max, ok := m.Max(); ok && int64(max)*pageSize < mem {
				mem = int64(max) * pageSize
			}
		}
	}
	return mem + instanceOverhead(wasm, cfg.TableEntries)
}

// instanceMemory is the memory allocator of one instance: it makes the
// instance's linear memory (newLinearMemory), and frees it only when no
// guest code can run on it any more.
//
// wazero frees a module's memory when the module closes, and a module may
// close while its guest still runs: the runtime closed by Plugin.Close
// over a call that outlived the drain, or a host function closing its
// caller at the cut (nest.go). The guest goes on until its next check of
// the close flag, and the host function that closed it returns into it.
// With wazero's default memory, a Go slice, that was harmless; an mmap'd
// memory unmapped under a running guest is a segmentation fault that
// takes the whole host down. So wazero's Free (through guardedMemory)
// only marks the memory freed while the instance is busy (enter, leave
// around every run of guest code), and the last leave unmaps it.
type instanceMemory struct {
	mu    sync.Mutex
	mem   experimental.LinearMemory
	busy  int  // runs of guest code under way on this memory
	freed bool // freed (by wazero or free) while busy: leave unmaps it
}

func (a *instanceMemory) Allocate(_, max uint64) experimental.LinearMemory {
	a.mem = newLinearMemory(max)
	return guardedMemory{LinearMemory: a.mem, owner: a}
}

// enter marks guest code running on the memory until the matching leave.
func (a *instanceMemory) enter() {
	a.mu.Lock()
	a.busy++
	a.mu.Unlock()
}

// leave ends a run of guest code, and frees the memory if it was freed
// meanwhile.
func (a *instanceMemory) leave() {
	a.mu.Lock()
	a.busy--
	unmap := a.busy == 0 && a.freed
	a.mu.Unlock()
	if unmap {
		a.mem.Free()
	}
}

// free frees the memory now, or at the last leave when guest code runs
// on it. It is called by wazero (the module closed) and by newInstance
// (an instantiation that failed); a second call does nothing more.
func (a *instanceMemory) free() {
	a.mu.Lock()
	if a.mem == nil || a.freed {
		a.mu.Unlock()
		return
	}
	a.freed = true
	busy := a.busy > 0
	a.mu.Unlock()
	if !busy {
		a.mem.Free()
	}
}

// guardedMemory is the linear memory as wazero sees it: its Free goes
// through the instance's allocator (instanceMemory.free).
type guardedMemory struct {
	experimental.LinearMemory
	owner *instanceMemory
}

func (g guardedMemory) Free() { g.owner.free() }
