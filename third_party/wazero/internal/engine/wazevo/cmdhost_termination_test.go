package wazevo_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/sys"
)

// cmdhost: the inline termination check (CMDHOST.md). Each module is
// written by hand; the exports never return on their own.
var (
	// (func (export "spin") (loop (br 0)))
	spinWasm = []byte{
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
		0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type: () -> ()
		0x03, 0x02, 0x01, 0x00, // func 0: type 0
		0x07, 0x08, 0x01, 0x04, 's', 'p', 'i', 'n', 0x00, 0x00, // export "spin"
		0x0a, 0x09, 0x01, 0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, // loop br 0 end end
	}
	// (func (export "nop"))
	nopWasm = []byte{
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
		0x01, 0x04, 0x01, 0x60, 0x00, 0x00,
		0x03, 0x02, 0x01, 0x00,
		0x07, 0x07, 0x01, 0x03, 'n', 'o', 'p', 0x00, 0x00,
		0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b,
	}
	// (func $tree (export "tree") (param i32) (result i32)
	//   local.get 0 i32.const 1 i32.add call $tree
	//   local.get 0 i32.const 2 i32.add call $tree i32.add)
	// An endless call tree with no loop: every call recurses twice. It
	// overflows the stack if nothing cuts it first.
	treeWasm = []byte{
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
		0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f, // type: (i32) -> i32
		0x03, 0x02, 0x01, 0x00,
		0x07, 0x08, 0x01, 0x04, 't', 'r', 'e', 'e', 0x00, 0x00,
		0x0a, 0x13, 0x01, 0x11, 0x00,
		0x20, 0x00, 0x41, 0x01, 0x6a, 0x10, 0x00, // local.get 0 i32.const 1 i32.add call 0
		0x20, 0x00, 0x41, 0x02, 0x6a, 0x10, 0x00, // local.get 0 i32.const 2 i32.add call 0
		0x6a, 0x0b, // i32.add end
	}
)

// More guests spinning than there are Ps are all cut at their deadline:
// compiled code cannot be preempted by Go, so without the P handed off
// while it runs (native.go), the goroutine that closes a module at its
// context's end would wait for a P for as long as the guests spin.
func TestTerminationWithEveryPSpinning(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
	defer rt.Close(ctx)
	compiled, err := rt.CompileModule(ctx, spinWasm)
	if err != nil {
		t.Fatal(err)
	}
	n := runtime.GOMAXPROCS(0) + 1
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		mod, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName(""))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			_, errs[i] = mod.ExportedFunction("spin").Call(cctx)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%d guests spinning on %d Ps were not cut a minute after their deadline", n, n-1)
	}
	for i, err := range errs {
		if !isExit(err, sys.ExitCodeDeadlineExceeded) {
			t.Errorf("guest %d: want the deadline's exit, got %v", i, err)
		}
	}
}

// A call tree with no loop is cut: the check runs at function entries too
// (upstream checks at loop headers only), long before the stack overflows.
func TestTerminationOfACallTree(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, treeWasm)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(10*time.Millisecond, cancel)
	_, err = mod.ExportedFunction("tree").Call(cctx, 0)
	if !isExit(err, sys.ExitCodeContextCanceled) {
		t.Fatalf("want the cancel's exit, got %v", err)
	}
}

// A module closed while its call runs (not by the call's context) stops
// the call too, as upstream's check did.
func TestTerminationOnClose(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, spinWasm)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(10*time.Millisecond, func() { _ = mod.CloseWithExitCode(ctx, 7) })
	_, err = mod.ExportedFunction("spin").Call(ctx)
	if !isExit(err, 7) {
		t.Fatalf("want exit code 7, got %v", err)
	}
}

// A call whose context ends as it returns either fails with the context's
// exit and leaves its module closed, or succeeds and leaves it open: never
// succeeds and has its module closed afterwards, which the next call would
// find.
func TestTerminationRacingTheReturn(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
	defer rt.Close(ctx)
	compiled, err := rt.CompileModule(ctx, nopWasm)
	if err != nil {
		t.Fatal(err)
	}
	var cut, returned int
	for range 2000 {
		mod, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName(""))
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		go cancel()
		_, err = mod.ExportedFunction("nop").Call(cctx)
		switch {
		case err == nil && mod.IsClosed():
			t.Fatal("the call returned, and its module was closed after")
		case err == nil:
			returned++
		case isExit(err, sys.ExitCodeContextCanceled) && mod.IsClosed():
			cut++
		default:
			t.Fatalf("want the call's result or the cancel's exit, got %v", err)
		}
		cancel()
		if err == nil && mod.IsClosed() {
			t.Fatal("the context's end closed a module whose call had returned")
		}
		_ = mod.Close(ctx)
	}
	t.Logf("%d calls returned, %d were cut", returned, cut)
}

func isExit(err error, code uint32) bool {
	var exit *sys.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == code
}
