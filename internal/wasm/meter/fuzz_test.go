package meter

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/cmdhost/cmdhost/internal/wasmbin"
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
		if !boundedForWazero(wasm) {
			return // the engine refuses it before wazero sees it (internal/wasm boundModule)
		}
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

// boundedForWazero screens out the modules whose decoding alone makes
// wazero allocate without bound: a count larger than the bytes that could
// hold its items, a table or memory larger than a fuzz run can hold, an
// import of anything but a function. The engine never hands wazero such a
// module (internal/wasm's boundModule refuses or lowers them first); the
// fuzzer finds them within seconds, and wazero then runs out of memory.
func boundedForWazero(wasm []byte) bool {
	r := &wasmbin.Reader{B: wasm, Off: 8}
	if len(wasm) < 8 {
		return true // wazero says what is wrong at once
	}
	for !r.Done() {
		id, err := r.Byte()
		if err != nil {
			return true
		}
		n, err := r.U32()
		if err != nil {
			return true
		}
		body, err := r.Bytes(n)
		if err != nil {
			// A section cut short: wazero reads its count before it finds
			// the end (an export count of 2^28 makes a map that size).
			body, r.Off = wasm[r.Off:], len(wasm)
		}
		if id == 0 || id == 8 || id == 12 { // custom, start, data count: no vector
			continue
		}
		if !boundedSection(id, body) {
			return false
		}
	}
	return true
}

// boundedSection checks one section's counts and limits (see
// boundedForWazero); a section it cannot read is left to wazero.
func boundedSection(id byte, body []byte) bool {
	const fuzzLimit = 1 << 10 // table entries, memory pages
	r := &wasmbin.Reader{B: body}
	count, err := r.U32()
	if err != nil {
		return true
	}
	if count > uint32(len(body)) {
		return false
	}
	small := func() bool { // a u32 within what the section could hold
		v, err := r.U32()
		return err != nil || v <= uint32(len(body))
	}
	limits := func() bool { // flags, min, max if flag 1: each within fuzzLimit
		flags, err := r.Byte()
		if err != nil {
			return true
		}
		for i := 0; i < 1+int(flags&1); i++ {
			if v, err := r.U32(); err == nil && v > fuzzLimit {
				return false
			}
		}
		return true
	}
	for i := uint32(0); i < count; i++ {
		switch id {
		case 1: // type: 0x60, params, results
			if _, err := r.Byte(); err != nil {
				return true
			}
			for j := 0; j < 2; j++ {
				save := r.Off
				if !small() {
					return false
				}
				r.Off = save
				k, err := r.U32()
				if err != nil {
					return true
				}
				for ; k > 0; k-- {
					if r.ValType() != nil {
						return true
					}
				}
			}
		case 2: // import: only functions
			for j := 0; j < 2; j++ {
				if _, err := r.Name(); err != nil {
					return true
				}
			}
			if kind, err := r.Byte(); err != nil || kind != 0 {
				return err != nil
			}
			if r.SkipLEB(5) != nil {
				return true
			}
		case 4: // table: reference type, limits
			if r.ValType() != nil {
				return true
			}
			if !limits() {
				return false
			}
		case 5: // memory: limits
			if !limits() {
				return false
			}
		default:
			return true // counted above; the items need not be read
		}
	}
	return true
}
