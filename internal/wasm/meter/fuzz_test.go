package meter

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"
)

// FuzzInstrument: any module wazero accepts is accepted after rewriting,
// and its exports of no parameters behave the same: same result, or a trap
// both ways. The metered run goes first, under a budget; the original runs
// only when the metered one finished within it, since the units charged
// bound the instructions run (so the original cannot loop for ever). For
// any input, Instrument never panics.
func FuzzInstrument(f *testing.F) {
	f.Add(readKernels(f))
	for _, dir := range []string{"../../../testdata/plugins-hostile", "../../../testdata/plugins-bad", "../../../testdata/plugins-kit"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.wasm"))
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil && len(b) < 64<<10 {
				f.Add(b)
			}
		}
	}
	ctx := context.Background()
	validate := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCoreFeatures(features))
	defer validate.Close(ctx)
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, err := Instrument(bytes.Clone(wasm))
		orig, origErr := validate.CompileModule(ctx, wasm)
		if origErr != nil {
			return
		}
		exports := orig.ExportedFunctions()
		_ = orig.Close(ctx)
		if err != nil {
			t.Fatalf("wazero accepts the module, Instrument refuses it: %v", err)
		}
		compiled, err := validate.CompileModule(ctx, out)
		if err != nil {
			t.Fatalf("the instrumented module is refused: %v", err)
		}
		_ = compiled.Close(ctx)
		const budget = 200_000
		cfg := wazero.NewRuntimeConfigInterpreter().WithMemoryLimitPages(64)
		m, err := newRunnerWith(t, cfg, out, true, 1000, budget)
		if err != nil {
			return // imports it cannot have, a start function that trapped or ran too long
		}
		plain, err := newRunnerWith(t, cfg, wasm, false, 0, 0)
		if err != nil {
			t.Fatalf("the metered module instantiated, the original does not: %v", err)
		}
		for name, def := range exports {
			if len(def.ParamTypes()) > 0 {
				continue
			}
			got, _, err := m.call(name)
			if errors.Is(err, errBudget) {
				continue
			}
			want, _, wantErr := plain.call(name)
			if (err == nil) != (wantErr == nil) || got != want {
				t.Fatalf("export %s: metered %d, %v; original %d, %v", name, got, err, want, wantErr)
			}
		}
	})
}
