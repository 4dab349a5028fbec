package meter

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// BenchmarkCheckShape measures what a check costs a call-heavy guest, by
// shape of check, on wazero's compiler: fib(25) as a call tree (242,785
// calls), each module written by hand (testdata/shapes/NAME.wat, built
// with wat2wasm), the tick handing out batches of 65,536 units as the
// engine's does. Compare each with bare (no check): BENCHMARKS.md,
// "Compute", records the ratios and why the meter keeps its shape.
func BenchmarkCheckShape(b *testing.B) {
	for _, shape := range []string{"bare", "counter", "tick", "tickend", "trapend", "register"} {
		b.Run(shape, func(b *testing.B) {
			wasm, err := os.ReadFile(filepath.Join("testdata", "shapes", shape+".wasm"))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			rt := wazero.NewRuntime(ctx)
			defer func() { _ = rt.Close(ctx) }()
			_, err = rt.NewHostModuleBuilder(ImportModule).NewFunctionBuilder().
				WithGoFunction(api.GoFunc(func(_ context.Context, stack []uint64) { stack[0] = 1 << 16 }),
					[]api.ValueType{api.ValueTypeI64}, []api.ValueType{api.ValueTypeI64}).
				Export(ImportName).Instantiate(ctx)
			if err != nil {
				b.Fatal(err)
			}
			mod, err := rt.Instantiate(ctx, wasm)
			if err != nil {
				b.Fatal(err)
			}
			run := mod.ExportedFunction("run")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := run.Call(ctx, 25)
				if err != nil || res[0] != 75025 {
					b.Fatalf("fib(25) = %v, %v", res, err)
				}
			}
		})
	}
}
