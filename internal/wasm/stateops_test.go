package wasm

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"github.com/cmdhost/cmdhost/abi"
)

// A state call is counted by the result it returns: a count or
// ResultOK is ok, a result code its name, an unknown code other.
func TestStateOpsCounted(t *testing.T) {
	var c stateOpCounts
	for _, r := range []int32{0, 7, int32(abi.ResultNotFound), int32(abi.ResultConflict), int32(abi.ResultUnavailable), -99} {
		fn := c.counted(1, func(_ context.Context, _ api.Module, stack []uint64) { stack[0] = api.EncodeI32(r) })
		fn(context.Background(), nil, make([]uint64, 1))
	}
	got := c.snapshot()
	want := map[string]int64{"ok": 2, "not_found": 1, "conflict": 1, "unavailable": 1, "other": 1}
	for i, name := range StateResultNames {
		if got[1][i] != want[name] {
			t.Errorf("set %s: %d, want %d", name, got[1][i], want[name])
		}
	}
	var sum StateOps
	sum.Add(got)
	sum.Add(got)
	if sum[1][0] != 4 || sum[0][0] != 0 {
		t.Errorf("Add: %v", sum)
	}
}
