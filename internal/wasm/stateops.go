package wasm

import (
	"context"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"
)

// The guest's state calls, counted by op and result for the metrics
// (cmdhost_plugin_state_ops_total): what a plugin asks of the state
// store, and what it is told.

// StateOpNames name the state calls, StateOps' first index.
var StateOpNames = [...]string{"get", "set", "delete", "add", "list"}

// StateResultNames name the results, StateOps' second index: "ok", then
// abi's results by their code's magnitude (abi.ResultNotFound, -1, is 1;
// abi.ResultLimit is "quota"), then "other".
var StateResultNames = [...]string{"ok", "not_found", "too_large", "quota", "fault", "not_integer", "state",
	"invalid", "too_small", "denied", "conflict", "unavailable", "other"}

// StateOps counts a plugin's state calls: [op][result], by the indexes of
// StateOpNames and StateResultNames.
type StateOps [len(StateOpNames)][len(StateResultNames)]int64

// Add adds o's counts to s (a plugin's versions summed).
func (s *StateOps) Add(o StateOps) {
	for i := range s {
		for j := range s[i] {
			s[i][j] += o[i][j]
		}
	}
}

// stateOpCounts counts as StateOps does, without a lock.
type stateOpCounts [len(StateOpNames)][len(StateResultNames)]atomic.Int64

func (c *stateOpCounts) snapshot() StateOps {
	var out StateOps
	for i := range c {
		for j := range c[i] {
			out[i][j] = c[i][j].Load()
		}
	}
	return out
}

// counted is fn, the state call op, counted in c by the result it
// returns: its i32 result, a negative abi.Result or a count (ok).
func (c *stateOpCounts) counted(op int, fn api.GoModuleFunc) api.GoModuleFunc {
	return func(ctx context.Context, mod api.Module, stack []uint64) {
		fn(ctx, mod, stack)
		r := int32(api.DecodeI32(stack[0]))
		i := 0 // ok: a count or abi.ResultOK
		if r < 0 {
			i = min(int(-r), len(StateResultNames)-1) // a result abi.ResultUnavailable's successors would add: other
		}
		c[op][i].Add(1)
	}
}
