package wasm

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// A module whose shape would make wazero spend memory without bound —
// when compiling it, or in every instance — is refused at load, before it
// is compiled, with a message naming what is over which bound. One item
// fewer loads.
func TestModuleShapeLimits(t *testing.T) {
	t.Run("base", func(t *testing.T) {
		p := loadModule(t, "shape", shapeModule{}.bytes(), PluginConfig{})
		mustCall(t, p, "shape", "")
	})
	// The base module has 3 types, 2 imports, 3 functions, 4 exports and
	// 2 data segments.
	cases := []struct {
		name  string
		over  shapeModule
		under shapeModule // at the bound: loads
		want  string
	}{
		{"types", shapeModule{types: maxTypes - 2}, shapeModule{types: maxTypes - 3},
			fmt.Sprintf("the module has %d function types, more than this host accepts (%d)", maxTypes+1, maxTypes)},
		{"imports", shapeModule{imports: maxImports - 1}, shapeModule{imports: maxImports - 2},
			fmt.Sprintf("the module has %d imports, more than this host accepts (%d)", maxImports+1, maxImports)},
		{"functions", shapeModule{funcs: maxFunctions - 2}, shapeModule{},
			fmt.Sprintf("the module has %d functions, more than this host accepts (%d)", maxFunctions+1, maxFunctions)},
		{"tables", shapeModule{tables: maxTables + 1}, shapeModule{tables: maxTables},
			fmt.Sprintf("the module has %d tables, more than this host accepts (%d)", maxTables+1, maxTables)},
		{"globals", shapeModule{globals: maxGlobals + 1}, shapeModule{globals: maxGlobals},
			fmt.Sprintf("the module has %d globals, more than this host accepts (%d)", maxGlobals+1, maxGlobals)},
		{"exports", shapeModule{exports: maxExports - 3}, shapeModule{exports: maxExports - 4},
			fmt.Sprintf("the module has %d exports, more than this host accepts (%d)", maxExports+1, maxExports)},
		{"element segments", shapeModule{elemSegs: maxElemSegments + 1}, shapeModule{elemSegs: maxElemSegments},
			fmt.Sprintf("the module has %d element segments, more than this host accepts (%d)", maxElemSegments+1, maxElemSegments)},
		{"element entries", shapeModule{elemEntries: DefaultTableEntries + 1}, shapeModule{elemEntries: DefaultTableEntries},
			`element segments hold more than 65536 entries, the plugin's table limit: raise the table limit ("tableEntries"`},
		{"data segments", shapeModule{dataSegs: maxDataSegments - 1}, shapeModule{},
			fmt.Sprintf("the module has %d data segments, more than this host accepts (%d)", maxDataSegments+1, maxDataSegments)},
		{"locals", shapeModule{locals: 1<<32 - 1, localFuncs: 1}, shapeModule{locals: maxFuncLocals, localFuncs: 1},
			fmt.Sprintf("function body 3 declares 4294967295 locals, more than this host accepts in a function (%d)", maxFuncLocals)},
		{"all locals", shapeModule{locals: maxFuncLocals, localFuncs: maxLocals/maxFuncLocals + 1}, shapeModule{},
			fmt.Sprintf("the module's functions declare more than %d locals together", maxLocals)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := sharedEngine.Load(context.Background(), "shape", tc.over.bytes(), PluginConfig{})
			if err == nil {
				_ = p.Close(context.Background())
				t.Fatal("loaded; want a refusal")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
			if tc.under != (shapeModule{}) {
				p := loadModule(t, "shape", tc.under.bytes(), PluginConfig{})
				mustCall(t, p, "shape", "")
			}
		})
	}
}

// loadModule loads a module given as bytes and closes it with the test.
func loadModule(t *testing.T, name string, wasm []byte, cfg PluginConfig) *Plugin {
	t.Helper()
	p, err := sharedEngine.Load(context.Background(), name, wasm, cfg)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// A module of a few bytes that declares a vector of 2^32 - 1 items, or a
// name or data segment of 4 GiB, is refused at load, and the host lives:
// wazero's decoder made anything of the size declared before it read the
// items, and the process died out of memory, a fatal error no recover
// catches (cmdhost's copy of wazero checks the size against the bytes
// left: third_party/wazero/CMDHOST.md). Each case is one well-framed
// section of the module.
func TestAllocationBombsRefused(t *testing.T) {
	const huge = "\xff\xff\xff\xff\x0f" // 2^32 - 1, as a LEB128 u32
	section := func(id byte, body string) []byte {
		return append([]byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00, id, byte(len(body))}, body...)
	}
	cases := []struct {
		name   string
		module []byte
	}{
		{"function type results", section(1, "\x01\x60\x00"+huge)},
		{"function type params", section(1, "\x01\x60"+huge)},
		{"import module name", section(2, "\x01"+huge)},
		{"export name", section(7, "\x01"+huge)},
		{"custom section name", section(0, huge)},
		{"function names", section(0, "\x04name\x01\x05"+huge)},
		{"data segment", append(section(5, "\x01\x00\x01"), section(11, "\x01\x00\x41\x00\x0b"+huge)[8:]...)},
		{"element segment", append(section(4, "\x01\x70\x00\x01"), section(9, "\x01\x00\x41\x00\x0b"+huge)[8:]...)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := sharedEngine.Load(context.Background(), "bomb", c.module, PluginConfig{})
			if err == nil {
				_ = p.Close(context.Background())
				t.Fatal("loaded; want a refusal")
			}
			t.Log(err)
		})
	}
}
