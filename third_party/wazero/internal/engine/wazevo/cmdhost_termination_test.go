package wazevo_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
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
	//   (if (result i32) (i32.eqz (local.get 0)) (then (i32.const 1))
	//     (else (i32.add (call $tree (i32.sub (local.get 0) (i32.const 1)))
	//                    (call $tree (i32.sub (local.get 0) (i32.const 1)))))))
	// A call tree with no loop: 2^n calls, n deep, so that tree(60) runs
	// for ever (at a human scale) without nearing a stack overflow.
	treeWasm = []byte{
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f,
		0x03, 0x02, 0x01, 0x00, 0x07, 0x08, 0x01, 0x04, 0x74, 0x72, 0x65, 0x65, 0x00, 0x00, 0x0a, 0x1c,
		0x01, 0x1a, 0x00, 0x20, 0x00, 0x45, 0x04, 0x7f, 0x41, 0x01, 0x05, 0x20, 0x00, 0x41, 0x01, 0x6b,
		0x10, 0x00, 0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x00, 0x6a, 0x0b, 0x0b,
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
// (upstream checks at loop headers only, and this tree would run on).
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
	_, err = mod.ExportedFunction("tree").Call(cctx, 60)
	if !isExit(err, sys.ExitCodeContextCanceled) {
		t.Fatalf("want the cancel's exit, got %v", err)
	}
}

// A function of bulk operations and no loop is cut between two of them:
// 2,000 fills of 16 MiB run for a second or more, then call the host's
// env.done (the check follows each bulk operation; a function entry and
// loop headers alone would not see the cancel until all were done, and
// the call would reach env.done).
func TestTerminationBetweenBulkOperations(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
	defer rt.Close(ctx)
	var reachedEnd atomic.Bool
	if _, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().WithFunc(func() { reachedEnd.Store(true) }).
		Export("done").Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Instantiate(ctx, fillsModule(2000, 256))
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(10*time.Millisecond, cancel)
	_, err = mod.ExportedFunction("fills").Call(cctx)
	if !isExit(err, sys.ExitCodeContextCanceled) || reachedEnd.Load() {
		t.Fatalf("want the cancel's exit before the end, got %v (the end reached: %v)", err, reachedEnd.Load())
	}
}

// fillsModule is a module of one memory of pages pages and an export
// "fills" that fills all of it n times over, with no loop, then calls the
// import env.done.
func fillsModule(n, pages int) []byte {
	uleb := func(b []byte, v uint32) []byte {
		for {
			c := byte(v & 0x7f)
			if v >>= 7; v != 0 {
				b = append(b, c|0x80)
				continue
			}
			return append(b, c)
		}
	}
	sleb := func(b []byte, v int32) []byte {
		for {
			c := byte(v & 0x7f)
			v >>= 7
			if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
				return append(b, c)
			}
			b = append(b, c|0x80)
		}
	}
	section := func(m []byte, id byte, body []byte) []byte {
		return append(uleb(append(m, id), uint32(len(body))), body...)
	}
	body := []byte{0x00} // no locals
	for range n {
		body = append(body, 0x41, 0x00, 0x41, 0x00, 0x41) // i32.const 0, i32.const 0, i32.const size
		body = sleb(body, int32(pages*65536))
		body = append(body, 0xfc, 0x0b, 0x00) // memory.fill 0
	}
	body = append(body, 0x10, 0x00, 0x0b) // call env.done, end
	m := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	m = section(m, 1, []byte{0x01, 0x60, 0x00, 0x00})
	m = section(m, 2, []byte{0x01, 0x03, 'e', 'n', 'v', 0x04, 'd', 'o', 'n', 'e', 0x00, 0x00})
	m = section(m, 3, []byte{0x01, 0x00})
	m = section(m, 5, uleb([]byte{0x01, 0x00}, uint32(pages)))
	m = section(m, 7, []byte{0x01, 0x05, 'f', 'i', 'l', 'l', 's', 0x00, 0x01})
	return section(m, 10, append(uleb([]byte{0x01}, uint32(len(body))), body...))
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
