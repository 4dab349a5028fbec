package wasm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/wasm/meter"
)

// benchPluginDir holds the compute kernels of make bench-compute
// (testdata/bench-c, testdata/bench-rust).
const benchPluginDir = "../../testdata/plugins-bench"

// computeKernels are make bench-compute's kernels: each is a command of a
// bench plugin and the same code as an export k_NAME(n) of its module.
var computeKernels = []struct {
	name, plugin, command, export string
	n                             uint32
}{
	{"fib(30) C", "bench-c", "fib", "k_fib", 30},
	{"loop 2e7 C", "bench-c", "loop", "k_loop", 20_000_000},
	{"sha256 1MiB C", "bench-c", "sha", "k_sha", 1 << 20},
	{"fib(30) Rust", "bench-rust", "rfib", "k_fib", 30},
	{"json 1MiB Rust", "bench-rust", "json", "k_json", 1 << 20},
}

// TestBenchCompute is make bench-compute: each kernel run (a) as a plugin
// command by the engine, in process, with a deadline, and (b) as the same
// module on bare wazero with no interruption check; (c) is bare wazero with
// its check on (WithCloseOnContextDone(true) and a deadline): the inline
// check of cmdhost's copy (third_party/wazero), the engine's way for a
// plugin that counts no fuel, without the engine. Best of computeRuns each; the
// ratios a/b and c/b come from one run, on the same machine.
func TestBenchCompute(t *testing.T) {
	if os.Getenv("CMDHOST_BENCH_COMPUTE") == "" {
		t.Skip("set CMDHOST_BENCH_COMPUTE=1 (make bench-compute)")
	}
	runs, _ := strconv.Atoi(os.Getenv("CMDHOST_BENCH_RUNS"))
	if runs <= 0 {
		runs = 7
	}
	ctx := context.Background()
	mods := map[string][]byte{}
	plugins := map[string]*Plugin{}
	for _, k := range computeKernels {
		if _, ok := mods[k.plugin]; ok {
			continue
		}
		b, err := os.ReadFile(filepath.Join(benchPluginDir, k.plugin+".wasm"))
		if err != nil {
			t.Fatalf("%v (make bench-compute builds it)", err)
		}
		mods[k.plugin] = b
		p, err := sharedEngine.Load(ctx, k.plugin, b, PluginConfig{PoolSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close(ctx) })
		plugins[k.plugin] = p
	}
	fmt.Printf("%-16s %12s %12s %12s %8s %8s\n", "kernel", "engine (a)", "bare (b)", "check (c)", "a/b", "c/b")
	for _, k := range computeKernels {
		arg := strconv.FormatUint(uint64(k.n), 10)
		engine := func() string {
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			resp, err := plugins[k.plugin].Invoke(cctx, &abi.Request{Command: k.command, Payload: []byte(arg)})
			if err != nil {
				t.Fatalf("%s: %v", k.name, err)
			}
			return string(resp.Payload)
		}
		bare := bareKernel(t, mods[k.plugin], k.export, k.n, false)
		check := bareKernel(t, mods[k.plugin], k.export, k.n, true)
		// Round robin, best of each: a machine busy with something else
		// for a while slows the three alike.
		var a, b, c timed
		for i := 0; i < runs; i++ {
			a = a.best(engine)
			b = b.best(bare)
			c = c.best(check)
		}
		if a.sum != b.sum {
			t.Fatalf("%s: the engine answered %s, bare wazero %s", k.name, a.sum, b.sum)
		}
		fmt.Printf("%-16s %12s %12s %12s %7.2f× %7.2f×\n", k.name, ms(a.d), ms(b.d), ms(c.d),
			float64(a.d)/float64(b.d), float64(c.d)/float64(b.d))
	}
}

type timed struct {
	d   time.Duration
	sum string
}

// best runs f once and returns the faster of that run and t.
func (t timed) best(f func() string) timed {
	start := time.Now()
	s := f()
	if d := time.Since(start); t.d == 0 || d < t.d {
		return timed{d, s}
	}
	return t
}

// TestBenchMetered isolates the metering code from the engine: each
// kernel (but the loop) as its module rewritten by meter.Instrument, on
// bare wazero with a tick that hands out meterBatch units, against the
// module unchanged (bareKernel), best of CMDHOST_BENCH_RUNS (25) each,
// round robin. It prints the ratios only: the variant table of
// BENCHMARKS.md ("Compute: the call-heavy kernels").
func TestBenchMetered(t *testing.T) {
	if os.Getenv("CMDHOST_BENCH_METERED") == "" {
		t.Skip("set CMDHOST_BENCH_METERED=1")
	}
	runs, _ := strconv.Atoi(os.Getenv("CMDHOST_BENCH_RUNS"))
	if runs <= 0 {
		runs = 25
	}
	for _, k := range computeKernels {
		if k.export == "k_loop" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(benchPluginDir, k.plugin+".wasm"))
		if err != nil {
			t.Fatalf("%v (make bench-compute builds it)", err)
		}
		metered, err := meter.Instrument(b)
		if err != nil {
			t.Fatal(err)
		}
		m := bareKernelWith(t, metered, k.export, k.n, false, func(ctx context.Context, rt wazero.Runtime) error {
			_, err := rt.NewHostModuleBuilder(meter.ImportModule).NewFunctionBuilder().
				WithFunc(func(int64) int64 { return meterBatch }).Export(meter.ImportName).Instantiate(ctx)
			return err
		})
		bare := bareKernel(t, b, k.export, k.n, false)
		var a, c timed
		for i := 0; i < runs; i++ {
			a = a.best(m)
			c = c.best(bare)
		}
		if a.sum != c.sum {
			t.Fatalf("%s: metered %s, bare %s", k.name, a.sum, c.sum)
		}
		fmt.Printf("%-16s %6.3f×\n", k.name, float64(a.d)/float64(c.d))
	}
}

// bareKernel returns a run of the module's export on bare wazero (the
// compiler, as the engine uses), its cmdhost imports stubbed (the kernels
// call none); the run returns the export's result. check turns wazero's own
// interruption check on, with a deadline on each call.
func bareKernel(t *testing.T, wasm []byte, export string, n uint32, check bool) func() string {
	return bareKernelWith(t, wasm, export, n, check, nil)
}

// bareKernelWith is bareKernel with more host modules, instantiated by
// host (nil: none).
func bareKernelWith(t *testing.T, wasm []byte, export string, n uint32, check bool,
	host func(context.Context, wazero.Runtime) error) func() string {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(check))
	t.Cleanup(func() { _ = rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	if host != nil {
		if err := host(ctx, rt); err != nil {
			t.Fatal(err)
		}
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	stubs := rt.NewHostModuleBuilder(abi.HostModule)
	for _, f := range compiled.ImportedFunctions() {
		if mod, name, _ := f.Import(); mod == abi.HostModule {
			results := f.ResultTypes()
			stubs.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
				for i := range results {
					stack[i] = 0
				}
			}), f.ParamTypes(), results).Export(name)
		}
	}
	if _, err := stubs.Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName("").WithStartFunctions(abi.ExportInitialize))
	if err != nil {
		t.Fatal(err)
	}
	fn := mod.ExportedFunction(export)
	return func() string {
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		res, err := fn.Call(cctx, uint64(n))
		if err != nil {
			t.Fatal(err)
		}
		return strconv.FormatUint(res[0], 10)
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }
