package wazevo_test

import (
	"context"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
)

// cmdhost: runtimes of one compilation cache compiling at once a module its
// file cache holds and its memory does not each get it whole: one of them
// found it in memory before its entry preambles were compiled, and calling
// its export panicked (index out of range in moduleEngine.NewFunction).
func TestConcurrentCompilesFromTheFileCache(t *testing.T) {
	// (module (func (export "f")))
	bin := []byte{0, 'a', 's', 'm', 1, 0, 0, 0,
		1, 4, 1, 0x60, 0, 0, // type: () -> ()
		3, 2, 1, 0, // func 0: type 0
		7, 5, 1, 1, 'f', 0, 0, // export "f": func 0
		10, 4, 1, 2, 0, 0x0b} // code: empty body
	ctx := context.Background()
	dir := t.TempDir()
	warm, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(warm))
	if _, err := rt.CompileModule(ctx, bin); err != nil {
		t.Fatal(err)
	}
	_ = rt.Close(ctx)
	_ = warm.Close(ctx)
	for range 300 {
		cache, err := wazero.NewCompilationCacheWithDir(dir) // memory empty, the file cache warm
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(cache))
				defer rt.Close(ctx)
				cm, err := rt.CompileModule(ctx, bin)
				if err != nil {
					t.Error(err)
					return
				}
				m, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := m.ExportedFunction("f").Call(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		_ = cache.Close(ctx)
	}
}
