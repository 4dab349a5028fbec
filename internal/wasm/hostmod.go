package wasm

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/cmdhost/cmdhost/abi"
)

// callState is what the host functions of one call read and write. The
// call's context carries it (the wazero idiom for per-call host state); it
// belongs to one instance, which runs one call at a time.
type callState struct {
	request  []byte       // the encoded request (ExportHandle only)
	req      *abi.Request // the request, for nested invocations (ExportHandle only)
	describe bool         // ExportDescribe is running
	maxResp  int
	afterRun func() // Plugin.afterRun

	invokeResult []byte // the encoded result of the last FnInvoke

	response *abi.Response    // the decoded response, once written
	desc     *abi.Description // the decoded description, once handed over
	outErr   error            // why a response or description was refused

	// out is what the instance's guest wrote during the call so far
	// (trapout.go); set by run. reason is its first line at warning level
	// or above, set by run when the call returns.
	out    *callOutput
	reason string

	fuel  int64      // the call's fuel budget; 0: none
	meter meterState // the call's units used (metering.go)

	// published counts the messages the call published (publish.go) and
	// publishedBytes their payloads.
	published, publishedBytes int

	// httpCalls counts the call's HTTP requests (httpfns.go);
	// httpResult is the encoded result of the last one.
	httpCalls  int
	httpResult []byte
}

// guestReason is what an error says of why the guest failed a call it
// returned from: the first warning it wrote during the call.
func (st *callState) guestReason() string {
	if st.reason == "" {
		return "the guest wrote no warning or error to say why"
	}
	return st.reason
}

type callKey struct{}

func stateOf(ctx context.Context) *callState {
	st, _ := ctx.Value(callKey{}).(*callState)
	return st
}

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// hostFuncs are the `cmdhost` import module of one plugin. Host functions
// never panic: a bad pointer is ResultFault, a call out of place
// ResultState.
type hostFuncs struct {
	plugin  string
	output  *outputGate       // the plugin's log lines go through it
	config  map[string]string // read only after load
	vars    func() *Vars
	nester  func() Nester // nil result: nested invocation is off
	state   *stateFuncs   // the state store's functions (statefns.go)
	publish *publishFuncs // FnPublish (publish.go)
	http    *httpFuncs    // FnHTTPRequest, FnHTTPResultRead (httpfns.go)
}

// hostFunc is one export of the host module: its wasm signature and body.
type hostFunc struct {
	params, results []api.ValueType
	fn              api.GoModuleFunc
}

func (h *hostFuncs) table() map[string]hostFunc {
	t := h.ownTable()
	if h.state != nil {
		maps.Copy(t, h.state.table())
	}
	if h.publish != nil {
		t[abi.FnPublish] = hostFunc{[]api.ValueType{i32, i32}, []api.ValueType{i32}, h.publish.publish}
	}
	if h.http != nil {
		maps.Copy(t, h.http.table())
	}
	return t
}

func (h *hostFuncs) ownTable() map[string]hostFunc {
	return map[string]hostFunc{
		abi.FnDescribe:         {[]api.ValueType{i32, i32}, []api.ValueType{i32}, h.describe},
		abi.FnRequestLen:       {nil, []api.ValueType{i32}, h.requestLen},
		abi.FnRequestRead:      {[]api.ValueType{i32, i32}, []api.ValueType{i32}, h.requestRead},
		abi.FnResponseWrite:    {[]api.ValueType{i32, i32}, []api.ValueType{i32}, h.responseWrite},
		abi.FnLog:              {[]api.ValueType{i32, i32, i32}, nil, h.logLine},
		abi.FnConfigGet:        {[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}, h.configGet},
		abi.FnVarGet:           {[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}, h.varGet},
		abi.FnVarSet:           {[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}, h.varSet},
		abi.FnVarAdd:           {[]api.ValueType{i32, i32, i64, i32}, []api.ValueType{i32}, h.varAdd},
		abi.FnInvoke:           {[]api.ValueType{i32, i32}, []api.ValueType{i32}, h.invoke},
		abi.FnInvokeResultRead: {[]api.ValueType{i32, i32}, []api.ValueType{i32}, h.invokeResultRead},
	}
}

// builder returns the host module, ready to compile or instantiate. Its
// functions are exported in the order of their names: cmdhost's wazero
// compiles the trampolines of a host module once per engine for every
// module with the same functions in the same order (its
// cmdhost_hostcode.go), where a map's order made every plugin's module a
// shape of its own.
func (h *hostFuncs) builder(rt wazero.Runtime) wazero.HostModuleBuilder {
	b := rt.NewHostModuleBuilder(abi.HostModule)
	t := h.table()
	for _, name := range slices.Sorted(maps.Keys(t)) {
		f := t[name]
		b.NewFunctionBuilder().WithGoModuleFunction(f.fn, f.params, f.results).Export(name)
	}
	return b
}

func ret(stack []uint64, r abi.Result) { stack[0] = api.EncodeI32(int32(r)) }

func (h *hostFuncs) describe(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateOf(ctx)
	if st == nil || !st.describe || st.desc != nil {
		ret(stack, abi.ResultState)
		return
	}
	view, ok := mod.Memory().Read(uint32(stack[0]), uint32(stack[1]))
	if !ok {
		ret(stack, abi.ResultFault)
		return
	}
	desc, err := abi.DecodeDescription(view) // copies out of guest memory
	if err != nil {
		st.outErr = err
		ret(stack, abi.ResultInvalid)
		return
	}
	st.desc = desc
	ret(stack, abi.ResultOK)
}

func (h *hostFuncs) requestLen(ctx context.Context, _ api.Module, stack []uint64) {
	st := stateOf(ctx)
	if st == nil || st.request == nil {
		ret(stack, abi.ResultState)
		return
	}
	stack[0] = api.EncodeI32(int32(len(st.request)))
}

func (h *hostFuncs) requestRead(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateOf(ctx)
	if st == nil || st.request == nil {
		ret(stack, abi.ResultState)
		return
	}
	ptr, capacity := uint32(stack[0]), uint32(stack[1])
	if int(capacity) < len(st.request) {
		ret(stack, abi.ResultTooSmall)
		return
	}
	if !mod.Memory().Write(ptr, st.request) {
		ret(stack, abi.ResultFault)
		return
	}
	stack[0] = api.EncodeI32(int32(len(st.request)))
}

func (h *hostFuncs) responseWrite(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateOf(ctx)
	if st == nil || st.request == nil || st.response != nil {
		ret(stack, abi.ResultState)
		return
	}
	n := uint32(stack[1])
	if int(n) > st.maxResp {
		st.outErr = fmt.Errorf("response of %d bytes exceeds the limit of %d (serve --max-response-bytes, or the plugin's operator maxResponseBytes)", n, st.maxResp)
		ret(stack, abi.ResultTooLarge)
		return
	}
	view, ok := mod.Memory().Read(uint32(stack[0]), n)
	if !ok {
		st.outErr = fmt.Errorf("response pointer %d+%d is outside guest memory", stack[0], n)
		ret(stack, abi.ResultFault)
		return
	}
	resp, err := abi.DecodeResponse(view) // copies out of guest memory
	if err != nil {
		st.outErr = err
		ret(stack, abi.ResultInvalid)
		return
	}
	st.response, st.outErr = resp, nil
	ret(stack, abi.ResultOK)
}

// logLine logs a guest's line through the plugin's output gate, and
// notes it for the call (a describe's reason). It reads one byte past the
// gate's MaxLine at most, so that a longer line is cut and marked.
func (h *hostFuncs) logLine(ctx context.Context, mod api.Module, stack []uint64) {
	n := min(uint32(stack[2]), uint32(h.output.limits.MaxLine+1))
	msg, ok := mod.Memory().Read(uint32(stack[1]), n)
	if !ok {
		return
	}
	level := slog.Level(api.DecodeI32(stack[0]))
	if st := stateOf(ctx); st != nil && st.out != nil {
		st.out.note(level, msg)
	}
	h.output.emit(level, "guest", msg)
}

// copyValue writes val into the guest's buffer when it fits and returns its
// length either way.
func copyValue(mod api.Module, stack []uint64, val []byte) {
	if len(val) <= int(uint32(stack[3])) && !mod.Memory().Write(uint32(stack[2]), val) {
		ret(stack, abi.ResultFault)
		return
	}
	stack[0] = api.EncodeI32(int32(len(val)))
}

func (h *hostFuncs) configGet(_ context.Context, mod api.Module, stack []uint64) {
	key, ok := mod.Memory().Read(uint32(stack[0]), uint32(stack[1]))
	if !ok {
		ret(stack, abi.ResultFault)
		return
	}
	val, found := h.config[string(key)]
	if !found {
		ret(stack, abi.ResultNotFound)
		return
	}
	copyValue(mod, stack, []byte(val))
}

func (h *hostFuncs) varGet(_ context.Context, mod api.Module, stack []uint64) {
	key, ok := mod.Memory().Read(uint32(stack[0]), uint32(stack[1]))
	if !ok {
		ret(stack, abi.ResultFault)
		return
	}
	val, found := h.vars().Get(string(key))
	if !found {
		ret(stack, abi.ResultNotFound)
		return
	}
	copyValue(mod, stack, val)
}

func (h *hostFuncs) varSet(_ context.Context, mod api.Module, stack []uint64) {
	key, ok1 := mod.Memory().Read(uint32(stack[0]), uint32(stack[1]))
	val, ok2 := mod.Memory().Read(uint32(stack[2]), uint32(stack[3]))
	if !ok1 || !ok2 {
		ret(stack, abi.ResultFault)
		return
	}
	ret(stack, h.vars().Set(string(key), val))
}

func (h *hostFuncs) varAdd(_ context.Context, mod api.Module, stack []uint64) {
	key, ok := mod.Memory().Read(uint32(stack[0]), uint32(stack[1]))
	if !ok || uint64(uint32(stack[3]))+8 > uint64(mod.Memory().Size()) {
		ret(stack, abi.ResultFault) // checked before adding, so a fault changes nothing
		return
	}
	n, r := h.vars().Add(string(key), int64(stack[2]))
	if r != abi.ResultOK {
		ret(stack, r)
		return
	}
	var out [8]byte
	binary.LittleEndian.PutUint64(out[:], uint64(n))
	if !mod.Memory().Write(uint32(stack[3]), out[:]) {
		ret(stack, abi.ResultFault)
		return
	}
	ret(stack, abi.ResultOK)
}
