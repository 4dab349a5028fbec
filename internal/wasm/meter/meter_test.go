package meter

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// features are what the tests' runtimes accept: wazero's default (core 2.0)
// and tail calls, which kernels.wasm uses.
const features = api.CoreFeaturesV2 | experimental.CoreFeaturesTailCall

// errBudget ends a run whose ticks ran out (runner.budget).
var errBudget = errors.New("budget exhausted")

// runner runs a module's exports on wazero, its metered version with a
// tick that hands out batches and counts the units used.
type runner struct {
	rt      wazero.Runtime
	mod     api.Module
	batch   int64
	used    int64 // units charged so far: batches handed out minus what is left
	given   int64 // the last batch handed out
	budget  int64 // 0: none
	ticks   int   // tick calls
	metered bool
}

func newRunner(t testing.TB, wasm []byte, metered bool, batch int64) (*runner, error) {
	return newRunnerWith(t, wazero.NewRuntimeConfig(), wasm, metered, batch, 0)
}

// newRunnerWith makes a runner on a runtime of cfg whose tick ends the
// module's start function past budget units (0: no budget).
func newRunnerWith(t testing.TB, cfg wazero.RuntimeConfig, wasm []byte, metered bool, batch, budget int64) (*runner, error) {
	ctx := context.Background()
	r := &runner{rt: wazero.NewRuntimeWithConfig(ctx, cfg.WithCoreFeatures(features)),
		batch: batch, metered: metered, budget: budget}
	t.Cleanup(func() { _ = r.rt.Close(ctx) })
	_, err := r.rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func(a, b int32) int32 { return a + b }).Export("add").Instantiate(ctx)
	if err != nil {
		return nil, err
	}
	_, err = r.rt.NewHostModuleBuilder(ImportModule).NewFunctionBuilder().
		WithFunc(func(counter int64) int64 {
			r.ticks++
			r.used += r.given - counter
			r.given = r.batch
			if r.budget > 0 {
				if r.used > r.budget {
					panic(errBudget)
				}
				r.given = min(r.batch, r.budget-r.used)
			}
			return r.given
		}).Export(ImportName).Instantiate(ctx)
	if err != nil {
		return nil, err
	}
	compiled, err := r.rt.CompileModule(ctx, wasm)
	if err != nil {
		return nil, err
	}
	r.mod, err = r.rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName(""))
	return r, err
}

// call runs an export of no parameters and returns its result, and the
// units it used when metered.
func (r *runner) call(name string) (uint64, int64, error) {
	var counter api.MutableGlobal
	if r.metered {
		counter = r.mod.ExportedGlobal(CounterExport).(api.MutableGlobal)
		r.used, r.given = 0, r.batch
		if r.budget > 0 {
			r.given = min(r.batch, r.budget)
		}
		counter.Set(uint64(r.given))
	}
	res, err := r.mod.ExportedFunction(name).Call(context.Background())
	if r.metered && err == nil {
		r.used += r.given - int64(counter.Get())
	}
	var v uint64
	if len(res) > 0 {
		v = res[0]
	}
	return v, r.used, err
}

func readKernels(t testing.TB) []byte {
	b, err := os.ReadFile("testdata/kernels.wasm")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var kernelExports = []string{"fib", "indirect", "global", "tail", "loop", "nested", "loopcall", "bulk", "tablebulk", "simd", "multi", "start", "trap",
	"dfib", "tree", "leafloop", "arms", "exit"}

// TestKernelsBehaveTheSame: each export of the sample kernels answers the
// same before and after instrumenting, and the metered run counts units:
// the same count twice, and more for more work.
func TestKernelsBehaveTheSame(t *testing.T) {
	orig := readKernels(t)
	metered, err := Instrument(orig)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := newRunner(t, orig, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := newRunner(t, metered, true, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range kernelExports {
		want, _, wantErr := plain.call(name)
		got, used, err := m.call(name)
		if (wantErr == nil) != (err == nil) || got != want {
			t.Errorf("%s: metered %d, %v; original %d, %v", name, got, err, want, wantErr)
		}
		// A trap's stack trace names the functions as the original's
		// does: before, each was named by its index after the tick's
		// import, one more than the original's.
		if err != nil && wantErr != nil && err.Error() != wantErr.Error() {
			t.Errorf("%s: metered, the trap says %q; the original says %q", name, err, wantErr)
		}
		if _, again, _ := m.call(name); again != used {
			t.Errorf("%s: used %d units, then %d: not deterministic", name, used, again)
		}
		if used <= 0 && name != "trap" {
			t.Errorf("%s: used %d units", name, used)
		}
		t.Logf("%s = %d: %d units", name, got, used)
	}
	_, loop, _ := m.call("loop") // 100,000 iterations
	_, nested, _ := m.call("nested")
	if loop < 100_000 || nested < 200*300 {
		t.Errorf("loop used %d units for 100,000 iterations, nested %d for 60,000", loop, nested)
	}
	// The longest path, not every arm: a round of arms runs 60
	// instructions of its if and ~15 around them, never 100.
	if _, arms, _ := m.call("arms"); arms < 1000*60 || arms >= 1000*(60+40) {
		t.Errorf("arms used %d units for 1,000 rounds of 60 instructions and their loop's", arms)
	}
	// The 60 instructions reached by a branch out of the inner loop are
	// charged each outer round.
	if _, exit, _ := m.call("exit"); exit < 500*60 {
		t.Errorf("exit used %d units for 500 rounds of 60 instructions past an inner loop", exit)
	}
	_, bulk, _ := m.call("bulk")
	if bulk < (65536+1000)>>BulkShift {
		t.Errorf("bulk used %d units for 66,536 bytes", bulk)
	}
	if _, tables, _ := m.call("tablebulk"); tables < 10000+9999 {
		t.Errorf("tablebulk used %d units for 19,999 table entries", tables)
	}
}

// TestBudgetCutsEveryShape: a budget below what a kernel uses ends it in
// the tick, whatever the shape: loops, recursion, tail calls.
func TestBudgetCutsEveryShape(t *testing.T) {
	metered, err := Instrument(readKernels(t))
	if err != nil {
		t.Fatal(err)
	}
	m, err := newRunner(t, metered, true, 64)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fib", "tail", "loop", "nested", "loopcall", "bulk", "tablebulk", "dfib", "tree", "leafloop"} {
		m.budget = 0
		_, used, err := m.call(name)
		if err != nil {
			t.Fatal(err)
		}
		m.budget = used / 2
		if _, _, err := m.call(name); !errors.Is(err, errBudget) {
			t.Errorf("%s with a budget of %d of its %d units: %v, want the budget's error", name, used/2, used, err)
		}
		// Past the budget by at most a batch and one charge (a bulk
		// operation's, charged before it runs).
		if m.used > used/2+64+65536>>BulkShift {
			t.Errorf("%s: cut after %d units, budget %d", name, m.used, used/2)
		}
	}
}

// TestRefusals: what the rewriter refuses, with errors that say why; an
// index the original could not use is refused, since after rewriting it
// would reach the counter, the tick or the added local.
func TestRefusals(t *testing.T) {
	mod := func(sections ...[]byte) []byte {
		b := []byte(magic)
		for _, s := range sections {
			b = append(b, s...)
		}
		return b
	}
	sec := func(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	typ := sec(secType, 1, 0x60, 0, 0)
	fn := sec(secFunction, 1, 0)
	code := func(instrs ...byte) []byte {
		body := append([]byte{0}, instrs...)
		return sec(secCode, append([]byte{1, byte(len(body))}, body...)...)
	}
	for _, c := range []struct {
		name, want string
		wasm       []byte
	}{
		{"global past the module's", "global index 0 out of range", mod(typ, fn, code(0x23, 0, 0x1a, 0x0b))},
		{"call past the functions", "function index 1 out of range", mod(typ, fn, code(0x10, 1, 0x0b))},
		{"local past the locals", "local index 0 out of range", mod(typ, fn, code(0x20, 0, 0x1a, 0x0b))},
		{"exceptions", "opcode 0x6 cannot be metered", mod(typ, fn, code(0x06, 0x40, 0x0b, 0x0b))},
		{"the host's import", `module "cmdhost_meter"`, mod(typ, sec(secImport, append(append([]byte{1}, appendName(appendName(nil, ImportModule), "x")...), 0, 0)...))},
		{"not wasm", "not a WebAssembly module", []byte("hello")},
	} {
		_, err := Instrument(c.wasm)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestTestPluginsStayValid: the test plugins the host serves (Go, Rust,
// C, AssemblyScript and WAT guests) still compile once instrumented. Of
// the Go guests (~2–4 MB, the same runtime in each) two are enough.
func TestTestPluginsStayValid(t *testing.T) {
	var files []string
	for _, dir := range []string{"plugins", "plugins-kit", "plugins-hostile", "plugins-alt", "plugins-bench"} {
		f, _ := filepath.Glob(filepath.Join("../../../testdata", dir, "*.wasm"))
		files = append(files, f...)
	}
	if len(files) == 0 {
		t.Skip("no test plugins: make plugins")
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter()) // compiles (validates) fast
	defer rt.Close(ctx)
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if base := filepath.Base(file); len(b) > 1<<20 && base != "echo.wasm" && base != "kit-go.wasm" {
			continue
		}
		if _, err := rt.CompileModule(ctx, b); err != nil {
			continue // a module meant to be refused
		}
		out, err := Instrument(b)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if _, err := rt.CompileModule(ctx, out); err != nil {
			t.Errorf("%s: instrumented, wazero refuses it: %v", file, err)
		}
	}
}

// BenchmarkInstrument is what metering adds to a load: rewriting a Go
// guest of 3.8 MB (the probe test plugin).
func BenchmarkInstrument(b *testing.B) {
	wasm, err := os.ReadFile("../../../testdata/plugins/probe.wasm")
	if err != nil {
		b.Skip("no test plugins: make plugins")
	}
	b.SetBytes(int64(len(wasm)))
	for b.Loop() {
		if _, err := Instrument(wasm); err != nil {
			b.Fatal(err)
		}
	}
}
