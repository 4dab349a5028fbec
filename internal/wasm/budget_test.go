package wasm

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// budgetEngine is an engine of its own with a guest memory budget.
func budgetEngine(t *testing.T, budget int64) *Engine {
	t.Helper()
	e, err := NewEngine(Config{CacheDir: testkit.CacheDir(), MaxGuestMemory: budget})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e
}

func loadIn(t *testing.T, e *Engine, file, name string, cfg PluginConfig) *Plugin {
	t.Helper()
	p, err := e.Load(context.Background(), name, readPlugin(t, file), cfg)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// With room for one instance: a running call holds it; a nested call that
// needs another is refused at once with KindMemoryBudget, a call from an
// invoker waits and runs once the first ends; the idle instance of
// another plugin is closed to make room.
func TestMemoryBudgetRefusesWaitsAndReclaims(t *testing.T) {
	const pages = 256
	cost := int64(pages)*pageSize + instanceOverhead(readPlugin(t, "nest"), DefaultTableEntries)
	e := budgetEngine(t, cost+cost/2)
	entered, release := make(chan struct{}, 4), make(chan struct{})
	e.SetNester(NesterFunc(func(ctx context.Context, _ Caller, inv *abi.Invocation) *abi.InvocationResult {
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &abi.InvocationResult{Branches: []abi.BranchResult{{Name: inv.Branches[0].Name, Status: abi.StatusOK}}}
	}))
	// onWait runs at each wait of a call, and a call waits again at each
	// change of the budget that leaves it no room: never blocking there.
	waiting := make(chan struct{}, 1)
	e.budget.onWait = func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	}
	var logs testkit.LogBuffer
	e.log = slog.New(slog.NewTextHandler(&logs, nil))
	clk := testkit.NewClock(time.Unix(1e9, 0))

	other := loadIn(t, e, "nest", "nest-other", PluginConfig{PoolSize: 1, MemoryPages: pages, Clock: clk})
	p := loadIn(t, e, "nest", "nest", PluginConfig{PoolSize: 3, MemoryPages: pages, Clock: clk})
	if st := other.Stats(); st.Instances != 0 {
		t.Fatalf("loading nest must close nest-other's idle instance to make room: %+v", st)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Calls from an invoker: no call chain.
	invoke := func(out chan<- error) {
		_, err := p.Invoke(ctx, &abi.Request{Command: "nest", Payload: []byte(`{"command":"echo"}`), ContentType: "application/json"})
		out <- err
	}
	first := make(chan error, 1)
	go invoke(first)
	<-entered // the first call runs, on the only instance the budget allows

	_, err := p.Invoke(ctx, &abi.Request{Command: "nest", Payload: []byte(`{"command":"echo"}`), ContentType: "application/json",
		Metadata: map[string]string{abi.ChainKey: "h/top"}})
	if KindOf(err) != KindMemoryBudget || !strings.Contains(err.Error(), "guest memory budget exhausted") ||
		!strings.Contains(err.Error(), "--max-guest-memory") {
		t.Fatalf("a nested call past the budget: want KindMemoryBudget naming the flag, got %v", err)
	}
	if g := e.GuestMemory(); g.Refusals != 1 || g.Reserved != p.instanceCost || g.Limit != cost+cost/2 {
		t.Fatalf("stats %+v; want one refusal and one instance reserved", g)
	}
	// The budget bound: a warning a person reads, saying what to change.
	full := "guest memory budget full: a nested call of nest is refused (503): its new instance needs "
	if n := strings.Count(logs.String(), full); n != 1 || !strings.Contains(logs.String(), " MiB of the ") ||
		!strings.Contains(logs.String(), "raise serve --max-guest-memory") {
		t.Fatalf("want one warning %q… in MiB naming the flag:\n%s", full, logs.String())
	}

	second := make(chan error, 1)
	go invoke(second)
	<-waiting // the second call waits for memory
	if strings.Contains(logs.String(), "a call of nest waits") {
		t.Fatalf("a second warning within the minute:\n%s", logs.String())
	}
	clk.Add(time.Minute)
	third := make(chan error, 1)
	go invoke(third)
	<-waiting // a minute later, a wait is warned of again
	if !strings.Contains(logs.String(), "a call of nest waits for memory") {
		t.Fatalf("no warning of a call waiting a minute after the last:\n%s", logs.String())
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatalf("the waiting call must run once the first ends: %v", err)
	}
	if err := <-third; err != nil {
		t.Fatalf("the waiting call must run once the second ends: %v", err)
	}
	if g := e.GuestMemory(); g.Reserved > g.Limit {
		t.Fatalf("reserved %d past the budget %d", g.Reserved, g.Limit)
	}
}

// A plugin one instance of which needs more than the whole budget is
// refused at load, with the flag to raise.
func TestMemoryBudgetRefusesALoadThatCannotFit(t *testing.T) {
	e := budgetEngine(t, 8<<20)
	_, err := e.Load(context.Background(), "echo", readPlugin(t, "echo"), PluginConfig{})
	if err == nil || !strings.Contains(err.Error(), "more than the whole guest memory budget") || !strings.Contains(err.Error(), "--max-guest-memory") {
		t.Fatalf("want a load refused for the budget, got %v", err)
	}
	if g := e.GuestMemory(); g.Reserved != 0 {
		t.Fatalf("a refused load reserves nothing: %+v", g)
	}
}

// The acceptance test of the budget: 64 concurrent calls of a guest that
// fills its memory, with pools that could hold 4 × the budget, grow the
// host's peak RSS by less than the budget plus rssSlack, and the RSS goes
// back down when the instances are gone, at once.
func TestGuestMemoryStaysInTheBudget(t *testing.T) {
	const (
		pages    = 256      // 16 MiB a guest
		budget   = 96 << 20 // room for 5 instances of the 16 pooled
		rssSlack = 48 << 20 // the host's own growth: request and stack buffers, instance overheads, the runtime
	)
	e := budgetEngine(t, budget)
	p := loadIn(t, e, "oom", "oom", PluginConfig{PoolSize: 16, MemoryPages: pages})
	base := resetPeakRSS(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Go(func() {
			_, err := call(t, p, context.Background(), "oom", "")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if KindOf(err) != KindOutOfMemory {
			t.Fatalf("every call must run and run out of its own memory: %v", err)
		}
	}
	peak, now := rssKiB(t, "VmHWM:"), rssKiB(t, "VmRSS:")
	t.Logf("RSS before %d MiB, peak %d MiB (+%d MiB; budget %d MiB), after %d MiB", base>>10, peak>>10, (peak-base)>>10, budget>>20, now>>10)
	if grown := (peak - base) << 10; grown > budget+rssSlack {
		t.Fatalf("peak RSS grew by %d MiB, more than the %d MiB budget plus %d MiB", grown>>20, budget>>20, rssSlack>>20)
	}
	if kept := (now - base) << 10; kept > rssSlack {
		t.Fatalf("the RSS stays %d MiB above where it was once every instance is closed; want under %d MiB", kept>>20, rssSlack>>20)
	}
}

// resetPeakRSS resets the process's VmHWM to its VmRSS (Linux: clear_refs
// 5) and returns it in KiB; the test is skipped where that is not possible.
func resetPeakRSS(t *testing.T) int64 {
	t.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS: %v", err)
	}
	return rssKiB(t, "VmHWM:")
}

// rssKiB reads a field of /proc/self/status in KiB.
func rssKiB(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field); ok {
			var kib int64
			if _, err := fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kib); err == nil {
				return kib
			}
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// A folder of plugins whose pools could hold more than the budget is no
// warning (the quickstart's folder printed one, with raw byte counts, at
// every make run, though nothing needed doing): one debug line, when the
// sum crosses the budget, in units a person reads.
func TestOverBudgetPoolsAreNoWarning(t *testing.T) {
	var logs testkit.LogBuffer
	e, err := NewEngine(Config{CacheDir: testkit.CacheDir(), MaxGuestMemory: 64 << 20,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	cfg := PluginConfig{PoolSize: 2, MemoryPages: 256} // 2 × 16 MiB and the overhead per plugin
	for i := range 4 {
		loadIn(t, e, "wat-echo", fmt.Sprintf("echo%d", i), cfg)
	}
	const line = "level=DEBUG msg=\"guest memory: the loaded plugins' pools, all full, would hold "
	if n := strings.Count(logs.String(), line); n != 1 || strings.Contains(logs.String(), "level=WARN") ||
		!strings.Contains(logs.String(), "more than the 64 MiB budget") {
		t.Fatalf("want one debug line %q… in MiB and no warning:\n%s", line, logs.String())
	}
}

// The engine knows which plugins have idle instances (withIdle), the
// only ones makeRoom looks at: a warm instance puts its plugin there, a
// call that takes the last one out takes it away until it is back, and
// making room, an idle release and a close take it away. With room for
// two instances, a third load closes the oldest plugin's.
func TestIdleIndexFollowsThePools(t *testing.T) {
	cfg := PluginConfig{PoolSize: 1, MemoryPages: 16, IdleTimeout: NoTimeout}
	cost := int64(cfg.MemoryPages)*pageSize + instanceOverhead(readPlugin(t, "wat-echo"), DefaultTableEntries)
	e := budgetEngine(t, 2*cost+cost/2)
	has := func(ps ...*Plugin) {
		t.Helper()
		got := map[*Plugin]bool{}
		for _, p := range e.pluginsWithIdle() {
			got[p] = true
		}
		for _, p := range ps {
			if !got[p] || p.pool.idleCount() == 0 {
				t.Fatalf("%s: in the index %v, idle instances %d; want both", p.name, got[p], p.pool.idleCount())
			}
		}
		if len(got) != len(ps) {
			t.Fatalf("%d plugins in the index, want %d", len(got), len(ps))
		}
	}
	a := loadIn(t, e, "wat-echo", "a", cfg)
	if a.instanceCost != cost {
		t.Fatalf("an instance costs %d, want %d", a.instanceCost, cost)
	}
	b := loadIn(t, e, "wat-echo", "b", cfg)
	has(a, b)
	c := loadIn(t, e, "wat-echo", "c", cfg) // makes room: closes a's or b's
	if n := a.pool.idleCount() + b.pool.idleCount(); n != 1 {
		t.Fatalf("a and b have %d idle instances after c's load, want 1", n)
	}
	kept := a
	if a.pool.idleCount() == 0 {
		kept = b
	}
	has(kept, c)
	kept.ReleaseIdle()
	has(c)
	if _, err := a.Invoke(context.Background(), &abi.Request{Command: "wat-echo", Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	has(a, c)
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	has(a)
}
