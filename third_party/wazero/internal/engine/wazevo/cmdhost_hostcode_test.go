package wazevo_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// cmdhost: (module (import "env" "get" (func (result i32)))
// (func (export "run") (result i32) (call 0)))
var callGetWasm = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, // type: () -> i32
	0x02, 0x0b, 0x01, 0x03, 'e', 'n', 'v', 0x03, 'g', 'e', 't', 0x00, 0x00, // import env.get
	0x03, 0x02, 0x01, 0x00, // func 1: type 0
	0x07, 0x07, 0x01, 0x03, 'r', 'u', 'n', 0x00, 0x01, // export "run"
	0x0a, 0x06, 0x01, 0x04, 0x00, 0x10, 0x00, 0x0b, // call 0 end
}

// cmdhost: host modules of one shape share their trampolines across the
// runtimes of a compilation cache (cmdhost_hostcode.go); each module's
// guest still reaches its own module's Go functions, whether the module
// was compiled first or found the code kept, in runtimes alive together
// and after some closed.
func TestHostModulesOfOneShapeCallTheirOwnFunctions(t *testing.T) {
	ctx := context.Background()
	cache := wazero.NewCompilationCache()
	defer cache.Close(ctx)
	const n = 4
	rts := make([]wazero.Runtime, n)
	runs := make([]api.Function, n)
	for i := range n {
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache))
		rts[i] = rt
		get := func(_ context.Context, _ api.Module, stack []uint64) { stack[0] = api.EncodeI32(int32(100 + i)) }
		b := rt.NewHostModuleBuilder("env")
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(get), nil, []api.ValueType{api.ValueTypeI32}).Export("get")
		// A second function of another signature: the index in the exit
		// code must select get, not it.
		b.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(context.Context, []uint64) { panic("not called") }),
			[]api.ValueType{api.ValueTypeI64}, nil).Export("zz")
		if _, err := b.Instantiate(ctx); err != nil {
			t.Fatal(err)
		}
		mod, err := rt.InstantiateWithConfig(ctx, callGetWasm, wazero.NewModuleConfig().WithName(fmt.Sprint("guest", i)))
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = mod.ExportedFunction("run")
	}
	check := func(i int) {
		t.Helper()
		res, err := runs[i].Call(ctx)
		if err != nil {
			t.Fatalf("runtime %d: %v", i, err)
		}
		if got := api.DecodeI32(res[0]); got != int32(100+i) {
			t.Errorf("runtime %d: its guest's host function returned %d, want %d", i, got, 100+i)
		}
	}
	for i := range n {
		check(i)
	}
	if err := rts[0].Close(ctx); err != nil { // the one that compiled the code
		t.Fatal(err)
	}
	for i := 1; i < n; i++ {
		check(i)
		_ = rts[i].Close(ctx)
	}
}
