package wasm

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

// The compile budget is CPU time (compilebudget.go): a compile whose
// thread's clock does not advance (it waits for a core) is not cut
// however long it takes on the wall clock, one whose clock runs past the
// budget is cut at the end of a function, and the wall-clock bound behind
// it cuts a compile that never gets a core.
func TestCompileBudgetIsCPUTime(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
	defer rt.Close(ctx)
	unit := compileShapes[0].unit
	waiting := func() time.Duration { return 0 }

	small := shapeModule{code: strings.Repeat(unit, 1_500), codeFuncs: 3}.bytes()
	start := time.Now()
	bctx, stop := budgetContext(ctx, time.Millisecond, time.Hour, waiting)
	c, err := rt.CompileModule(bctx, small)
	stop()
	if took := time.Since(start); err != nil || took <= 10*compileBudgetPoll {
		t.Fatalf("a compile that spent none of its CPU budget in %v of wall time: %v", took, err)
	}
	_ = c.Close(ctx)

	big := shapeModule{code: strings.Repeat(unit, 1_500), codeFuncs: 100}.bytes() // ~10 s of a core
	var cpu atomic.Int64
	running := func() time.Duration { return time.Duration(cpu.Add(int64(100 * time.Millisecond))) }
	for _, c := range []struct {
		name string
		read func() time.Duration
		wall time.Duration
	}{{"its CPU time past the budget", running, time.Hour}, {"never given a core", waiting, 200 * time.Millisecond}} {
		start := time.Now()
		bctx, stop := budgetContext(ctx, time.Second, c.wall, c.read)
		_, err := rt.CompileModule(bctx, big)
		stop()
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 30*time.Second {
			t.Fatalf("%s: a compile of ~10 s of a core ended after %v with %v", c.name, time.Since(start), err)
		}
	}
}
