package wasm

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/cmdhost/cmdhost/internal/wasmbin"
)

// Instruction sequences of the shapes of function that cost wazero's
// compiler the most for their size (measured: the memory and time it
// spends per instruction, and the passes that are more than linear in a
// function's blocks). Each is repeated to a function's compile weight.
var compileShapes = []struct {
	name       string
	unit       string // one repetition (what comes first and last is added)
	head, tail string
}{
	// memory.fill: a loop of blocks, its bounds check and the termination
	// check's exit: 40 KiB of the compiler's memory each.
	{name: "memory.fill", unit: "\x41\x00\x41\x00\x41\x10\xfc\x0b\x00"},
	// memory.copy: quadratic in the SSA builder's findValueInLinearPath.
	{name: "memory.copy", unit: "\x41\x00\x41\x00\x41\x10\xfc\x0a\x00\x00"},
	{name: "table.fill", unit: "\x41\x00\xd0\x70\x41\x01\xfc\x11\x00"},
	{name: "table.copy", unit: "\x41\x00\x41\x00\x41\x01\xfc\x0e\x00\x00"},
	{name: "call_indirect", unit: "\x41\x00\x11\x02\x00"},
	// nested loops and blocks: the dominator tree as deep as they are.
	{name: "nested loops", unit: "\x03\x40", tail: "\x0b"},
	{name: "nested blocks", unit: "\x02\x40", tail: "\x0b"},
	// (block) (local.get) drop: a chain of blocks, a read of a local at
	// each, walked back to its definition (findValue).
	{name: "block, local.get", unit: "\x02\x40\x0b\x20\x00\x1a"},
	// a loop of blocks, each with a branch back to it: a header of many
	// predecessors (the dominators' intersect).
	{name: "loop of br_if", head: "\x03\x40", unit: "\x02\x40\x0b\x41\x00\x0d\x00", tail: "\x0b"},
	{name: "if", unit: "\x41\x00\x04\x40\x0b"},
	{name: "store", unit: "\x41\x00\x41\x00\x36\x02\x00"},
}

// compileShape returns shape's function repeated n times (the tails of
// nested shapes closed after all the heads).
func compileShape(head, unit, tail string, n int) string {
	if tail != "" && head == "" { // nested: n units, then n tails
		return strings.Repeat(unit, n) + strings.Repeat(tail, n)
	}
	return head + strings.Repeat(unit, n) + tail
}

// shapeWeight is the compile weight of a function body's instructions.
func shapeWeight(t *testing.T, code string) uint64 {
	t.Helper()
	w, err := checkCompileWeight(&wasmbin.Reader{B: []byte(code)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// The shapes that made compile-time bombs (issue 36, item 11) are refused
// at load, before wazero sees them, with an error naming the bound: one
// function of 20,000 memory.fill (180 KB: 45-100 s and up to 0.8 GB to
// compile before), one of 100,000 nested blocks (46-78 s), and a module of
// functions each within the bound but together over the module's.
func TestCompileBombsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    shapeModule
		want string
	}{
		{"20,000 memory.fill", shapeModule{code: strings.Repeat(compileShapes[0].unit, 20_000), codeFuncs: 1},
			"function body 3 is too large to compile here"},
		{"100,000 nested blocks", shapeModule{code: compileShape("", "\x02\x40", "\x0b", 100_000), codeFuncs: 1},
			"function body 3 is too large to compile here"},
		{"131 functions of 1,500 memory.fill", shapeModule{code: strings.Repeat(compileShapes[0].unit, 1_500), codeFuncs: 131},
			"the module's functions are too large to compile here together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := sharedEngine.Load(context.Background(), "bomb", tc.m.bytes(), PluginConfig{})
			if err == nil {
				_ = p.Close(context.Background())
				t.Fatal("loaded; want a refusal")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

// A function of each costly shape, as heavy as the bound lets it be,
// compiles within what docs/plugins.md promises: its thread's CPU time
// (the compile runs on the calling goroutine, locked to its thread) is
// logged, and bounded at 2 s (measured: at most ~0.5 s on the project's
// machine; the race detector's runs only log). With fuel counted, the
// metering adds a check to each loop and bulk operation.
func TestCompileAtTheBound(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, s := range compileShapes {
		one := shapeWeight(t, compileShape(s.head, s.unit, s.tail, 1))
		per := shapeWeight(t, compileShape(s.head, s.unit, s.tail, 2)) - one
		n := int((maxFuncWeight-one)/per) + 1
		code := compileShape(s.head, s.unit, s.tail, n)
		wasm := shapeModule{code: code, codeFuncs: 1}.bytes()
		for _, fuel := range []bool{false, true} {
			ctx := context.Background()
			rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(!fuel))
			before, _ := threadCPU()
			compiled, err := compile(ctx, rt, wasm, PluginConfig{CountFuel: fuel}.withDefaults())
			cpu, _ := threadCPU()
			cpu -= before
			if err == nil {
				_ = compiled.Close(ctx)
			}
			_ = rt.Close(ctx)
			if err != nil {
				t.Fatalf("%s ×%d (fuel %v): %v", s.name, n, fuel, err)
			}
			t.Logf("%-16s ×%6d, %6d bytes, fuel %-5v: compiled in %v of CPU", s.name, n, len(code), fuel, cpu.Round(time.Millisecond))
			if cpu > 2*time.Second && !raceEnabled {
				t.Errorf("%s ×%d (fuel %v): compiling one function at the bound took %v of CPU, want ≤ 2 s", s.name, n, fuel, cpu)
			}
		}
	}
}

// A compile that runs past PluginConfig.CompileTimeout is abandoned at the
// end of the function it is compiling, and the module refused with an
// error naming the timeout: 100 functions of 1,500 memory.fill (~10 s of
// a core to compile) under a timeout of 50 ms stop after ~one function.
// What the compile ran is measured in its thread's CPU time: at most the
// timeout and one function (bounded loosely at 2 s). Before, nothing
// stopped a compile.
func TestCompileTimeout(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	wasm := shapeModule{code: strings.Repeat(compileShapes[0].unit, 1_500), codeFuncs: 100}.bytes()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
	defer rt.Close(ctx)
	before, _ := threadCPU()
	_, err := compile(ctx, rt, wasm, PluginConfig{CompileTimeout: 50 * time.Millisecond}.withDefaults())
	cpu, _ := threadCPU()
	cpu -= before
	t.Logf("refused after %v of CPU: %v", cpu.Round(time.Millisecond), err)
	if err == nil || !strings.Contains(err.Error(), "compile timeout of 50ms") {
		t.Fatalf("want a refusal naming the compile timeout, got %v", err)
	}
	if cpu > 2*time.Second && !raceEnabled {
		t.Errorf("the compile ran %v of CPU past a timeout of 50 ms", cpu)
	}
}
