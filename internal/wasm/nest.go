package wasm

import (
	"context"
	"math"

	"github.com/tetratelabs/wazero/api"

	"github.com/cmdhost/cmdhost/abi"
)

// Nested invocation: a guest calls other commands through abi.FnInvoke.
// The engine only moves bytes: it decodes the guest's Invocation, hands it
// to the Nester set with SetNester, blocks the guest until the Nester
// returns, and keeps the encoded result for abi.FnInvokeResultRead. What a
// branch runs on (a local plugin, a remote executor), its deadline, the
// cycle guard and the sync rule are the Nester's business (package host).

// Nester runs the nested invocations guests ask for.
type Nester interface {
	// Nest runs inv for caller and returns its result, never nil. ctx is
	// the caller's call context: its deadline is the caller's, and when it
	// is done (deadline, cancel, the caller's module closed) Nest must
	// return at once; the guest is being stopped and reads nothing.
	Nest(ctx context.Context, caller Caller, inv *abi.Invocation) *abi.InvocationResult
}

// NesterFunc adapts a function to Nester.
type NesterFunc func(ctx context.Context, caller Caller, inv *abi.Invocation) *abi.InvocationResult

// Nest calls f.
func (f NesterFunc) Nest(ctx context.Context, caller Caller, inv *abi.Invocation) *abi.InvocationResult {
	return f(ctx, caller, inv)
}

// Caller is the call that asks for a nested invocation.
type Caller struct {
	// Plugin is the name of the calling plugin.
	Plugin string
	// Request is the request the caller is handling (command, metadata
	// with the call chain, correlation). Its Deadline may be zero: the
	// call's context has the deadline. Nesters must not modify it.
	Request *abi.Request
}

// nesterBox lets an interface value live in an atomic.Pointer.
type nesterBox struct{ n Nester }

// SetNester sets the Nester that serves abi.FnInvoke for every plugin of
// the engine, loaded or to be loaded; nil turns nested invocation off. It
// exists because the engine is made before what the Nester needs (the
// plugins manager, the broker connection). Until it is set, FnInvoke
// answers every guest with an InvocationResult failed with
// abi.ReasonUnavailable.
func (e *Engine) SetNester(n Nester) {
	if n == nil {
		e.nester.Store(nil)
		return
	}
	e.nester.Store(&nesterBox{n})
}

func (e *Engine) currentNester() Nester {
	if b := e.nester.Load(); b != nil {
		return b.n
	}
	return nil
}

// invoke is abi.FnInvoke (ptr, len) -> i32.
func (h *hostFuncs) invoke(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateOf(ctx)
	if st == nil || st.request == nil {
		ret(stack, abi.ResultState)
		return
	}
	view, ok := mod.Memory().Read(uint32(stack[0]), uint32(stack[1]))
	if !ok {
		ret(stack, abi.ResultFault)
		return
	}
	st.invokeResult = nil
	var res *abi.InvocationResult
	inv, err := abi.DecodeInvocation(view) // copies out of guest memory
	switch n := h.nester(); {
	case err != nil:
		res = &abi.InvocationResult{Failure: abi.ReasonInvalid, Message: err.Error()}
	case n == nil:
		res = &abi.InvocationResult{Failure: abi.ReasonUnavailable,
			Message: "nested invocation is not available on this host (no dispatcher is set)"}
	default:
		if res = n.Nest(ctx, Caller{Plugin: h.plugin, Request: st.req}, inv); res == nil {
			res = &abi.InvocationResult{Failure: abi.ReasonUnavailable, Message: "the host's dispatcher returned no result"}
		}
	}
	endIfCut(ctx)
	out := abi.AppendInvocationResult(nil, res)
	if len(out) > math.MaxInt32 {
		ret(stack, abi.ResultTooLarge)
		return
	}
	st.invokeResult = out
	stack[0] = api.EncodeI32(int32(len(out)))
}

// invokeResultRead is abi.FnInvokeResultRead (ptr, cap) -> i32.
func (h *hostFuncs) invokeResultRead(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateOf(ctx)
	if st == nil || st.invokeResult == nil {
		ret(stack, abi.ResultState)
		return
	}
	if int(uint32(stack[1])) < len(st.invokeResult) {
		ret(stack, abi.ResultTooSmall)
		return
	}
	if !mod.Memory().Write(uint32(stack[0]), st.invokeResult) {
		ret(stack, abi.ResultFault)
		return
	}
	stack[0] = api.EncodeI32(int32(len(st.invokeResult)))
}
