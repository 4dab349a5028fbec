package wasm

import (
	"context"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/httpout"
	"github.com/cmdhost/cmdhost/internal/ratelog"
)

// Outbound HTTP: a guest sends a request with abi.FnHTTPRequest, which
// blocks it until the response is read, the request fails or the call's
// deadline passes, and reads the encoded result with
// abi.FnHTTPResultRead, as invoke and invoke_result_read do. The engine
// checks the call's bound of requests and gives a non-idempotent
// command's requests their Idempotency-Key; the plugin's httpout.Client
// (made from Grants.HTTP at load) checks the grant, connects, bounds and
// counts. Every failure of the request is inside the result: a plugin
// whose operator file grants no HTTP loads, and each request it makes is
// denied with the grant it lacks.

// httpFuncs are the HTTP functions of one plugin version.
type httpFuncs struct {
	plugin string
	client *httpout.Client // nil: the operator file grants no HTTP
	max    int             // a call's requests
	stats  func() *httpout.Stats
	log    *slog.Logger
	denied ratelog.Limiter
}

// newHTTPFuncs makes the HTTP functions of plugin, with a client when g
// grants anything; an error when the client cannot be made (its CA file).
func (e *Engine) newHTTPFuncs(plugin string, g httpout.Grant) (*httpFuncs, error) {
	h := &httpFuncs{plugin: plugin, max: httpout.DefaultMaxRequests, log: e.log, denied: ratelog.Limiter{Interval: time.Second},
		stats: func() *httpout.Stats { return e.httpStatsOf(plugin) }}
	if !g.Granted() {
		return h, nil
	}
	c, err := httpout.New(g, httpout.Config{Plugin: plugin, Logger: e.log, Stats: e.httpStatsOf(plugin)})
	if err != nil {
		return nil, err
	}
	h.client, h.max = c, c.Grant().MaxRequests
	return h, nil
}

// close releases the client's idle connections.
func (h *httpFuncs) close() {
	if h != nil && h.client != nil {
		h.client.Close()
	}
}

func (h *httpFuncs) table() map[string]hostFunc {
	return map[string]hostFunc{
		abi.FnHTTPRequest:    {[]api.ValueType{i32, i32}, []api.ValueType{i32}, h.request},
		abi.FnHTTPResultRead: {[]api.ValueType{i32, i32}, []api.ValueType{i32}, h.resultRead},
	}
}

// request is abi.FnHTTPRequest (ptr, len) -> i32.
func (h *httpFuncs) request(ctx context.Context, mod api.Module, stack []uint64) {
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
	st.httpResult = nil
	start := time.Now()
	res, counted := h.do(ctx, st, view)
	if !counted {
		h.stats().Record(res.Failure.String(), time.Since(start))
	}
	endIfCut(ctx)
	out := abi.AppendHTTPResult(nil, res)
	if len(out) > math.MaxInt32 {
		ret(stack, abi.ResultTooLarge)
		return
	}
	st.httpResult = out
	stack[0] = api.EncodeI32(int32(len(out)))
}

// maxEnvelope is how much more than its body an encoded request may
// hold: its URL, its headers and their records.
const maxEnvelope = abi.MaxHTTPURL + abi.MaxHTTPHeaderBytes + (abi.MaxHTTPHeaders+8)*9 + abi.MaxHTTPMethod

// do runs the request encoded in view (guest memory) for the call st;
// counted says whether the client counted it (the engine counts those it
// refuses first). The index of each request in the call (its
// Idempotency-Key's) counts every request but those over the call's
// bound.
func (h *httpFuncs) do(ctx context.Context, st *callState, view []byte) (_ *abi.HTTPResult, counted bool) {
	if st.httpCalls >= h.max {
		return &abi.HTTPResult{Failure: abi.HTTPLimit, Message: "over the call's bound of " + strconv.Itoa(h.max) + " requests (the grant's maxRequests)"}, false
	}
	i := st.httpCalls
	st.httpCalls++
	if h.client == nil {
		h.refuse()
		return &abi.HTTPResult{Failure: abi.HTTPDenied, Message: `the operator file grants no HTTP: "http": {"hosts": [...]} in ` + h.plugin + ".json"}, false
	}
	if limit := h.client.Grant().MaxRequestBytes + maxEnvelope; len(view) > limit {
		// Not even copied out of guest memory.
		return &abi.HTTPResult{Failure: abi.HTTPTooLarge, Message: "the request is " + strconv.Itoa(len(view)) +
			" bytes encoded: its body is over the grant's bound of " + strconv.Itoa(h.client.Grant().MaxRequestBytes) + " (maxRequestBytes)"}, false
	}
	r, err := abi.DecodeHTTPRequest(view) // copies out of guest memory
	if err != nil {
		return &abi.HTTPResult{Failure: abi.HTTPInvalid, Message: err.Error()}, false
	}
	key, _ := httpout.IdempotencyKey(ctx, st.req.CorrelationID, i)
	return h.client.Do(ctx, r, key), true
}

// resultRead is abi.FnHTTPResultRead (ptr, cap) -> i32.
func (h *httpFuncs) resultRead(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateOf(ctx)
	if st == nil || st.httpResult == nil {
		ret(stack, abi.ResultState)
		return
	}
	if int(uint32(stack[1])) < len(st.httpResult) {
		ret(stack, abi.ResultTooSmall)
		return
	}
	if !mod.Memory().Write(uint32(stack[0]), st.httpResult) {
		ret(stack, abi.ResultFault)
		return
	}
	stack[0] = api.EncodeI32(int32(len(st.httpResult)))
}

// refuse logs a request of a plugin granted no HTTP, at most once a
// second.
func (h *httpFuncs) refuse() {
	ok, leftOut := h.denied.Allow(time.Now())
	if !ok {
		return
	}
	args := []any{"plugin", h.plugin, "grant", `"http": {"hosts": ["api.example.com"]} in ` + h.plugin + `.json`}
	if leftOut > 0 {
		args = append(args, "refusals_not_logged", leftOut)
	}
	h.log.Warn("HTTP request refused: the operator file grants no HTTP", args...)
}

// httpStatsOf returns the HTTP counters of the named plugin, which
// outlive its versions.
func (e *Engine) httpStatsOf(plugin string) *httpout.Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.httpStats[plugin]
	if !ok {
		if e.httpStats == nil {
			e.httpStats = map[string]*httpout.Stats{}
		}
		s = &httpout.Stats{}
		e.httpStats[plugin] = s
	}
	return s
}

// HTTPStats returns what each plugin's HTTP requests counted, by plugin
// name (plugins that never had an HTTP grant are absent).
func (e *Engine) HTTPStats() map[string]httpout.Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]httpout.Snapshot, len(e.httpStats))
	for name, s := range e.httpStats {
		out[name] = s.Snapshot()
	}
	return out
}
