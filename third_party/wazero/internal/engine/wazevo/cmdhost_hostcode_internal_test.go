package wazevo

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/internal/wasm"
)

// cmdhost: the engine compiles a shape of host module once
// (cmdhost_hostcode.go): a second module of the same functions, names and
// order runs on the same executable; another order gets code of its own.
func TestHostModuleCodeSharedByShape(t *testing.T) {
	ctx := context.Background()
	e := NewEngine(ctx, api.CoreFeaturesV2, nil).(*engine)
	defer e.Close()
	fn := api.GoModuleFunc(func(context.Context, api.Module, []uint64) {})
	hostModule := func(names ...string) *wasm.Module {
		t.Helper()
		funcs := map[string]*wasm.HostFunc{}
		for _, name := range names {
			funcs[name] = &wasm.HostFunc{ExportName: name, ParamTypes: []wasm.ValueType{wasm.ValueTypeI32},
				ResultTypes: []wasm.ValueType{wasm.ValueTypeI32}, Code: wasm.Code{GoFunc: fn}}
		}
		m, err := wasm.NewHostModule("env", names, funcs, api.CoreFeaturesV2)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	code := func(m *wasm.Module) *byte {
		t.Helper()
		if err := e.CompileModule(ctx, m, nil, false); err != nil {
			t.Fatal(err)
		}
		cm, ok := e.getCompiledModuleFromMemory(m, false)
		if !ok {
			t.Fatal("not compiled")
		}
		return &cm.executable[0]
	}
	first := code(hostModule("a", "b"))
	if same := code(hostModule("a", "b")); same != first {
		t.Error("a module of the same shape was compiled again")
	}
	if other := code(hostModule("b", "a")); other == first {
		t.Error("a module with its functions in another order runs on the first one's code")
	}
	if len(e.hostCodes) != 2 {
		t.Errorf("the engine keeps %d shapes, want 2", len(e.hostCodes))
	}
}
