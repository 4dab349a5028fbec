package wasm

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/ratelog"
	"github.com/cmdhost/cmdhost/internal/state"
)

// The state store's host functions (abi.FnStateGet and the others). The
// engine only checks the grant and moves bytes: the call's writes are
// staged in the state.Txn its context carries (set by the executor, which
// commits it with the call's outcome); without one, every function
// answers ResultUnavailable. A namespace the plugin was not granted is
// ResultDenied, logged (at most once a second per plugin) with the grant
// that would allow it.

// stateFuncs are the state functions of one plugin.
type stateFuncs struct {
	plugin string
	grant  StateGrant
	log    *slog.Logger
	denied ratelog.Limiter
	ops    *stateOpCounts // the plugin's (Stats.StateOps)
}

func (s *stateFuncs) table() map[string]hostFunc {
	c := s.ops
	if c == nil {
		c = new(stateOpCounts)
	}
	return map[string]hostFunc{
		abi.FnStateGet:    {[]api.ValueType{i32, i32, i32, i32, i32, i32, i32}, []api.ValueType{i32}, c.counted(0, s.get)},
		abi.FnStateSet:    {[]api.ValueType{i32, i32, i32, i32, i32, i32, i64, i64, i32}, []api.ValueType{i32}, c.counted(1, s.set)},
		abi.FnStateDelete: {[]api.ValueType{i32, i32, i32, i32, i64}, []api.ValueType{i32}, c.counted(2, s.delete)},
		abi.FnStateAdd:    {[]api.ValueType{i32, i32, i32, i32, i64, i32}, []api.ValueType{i32}, c.counted(3, s.add)},
		abi.FnStateList:   {[]api.ValueType{i32, i32, i32, i32, i32, i32, i32, i32}, []api.ValueType{i32}, c.counted(4, s.list)},
	}
}

// space resolves the namespace a guest named (ns_ptr, ns_len at stack[0:2])
// for a read or a write, with the call's Txn.
func (s *stateFuncs) space(ctx context.Context, mod api.Module, stack []uint64, write bool) (*state.Txn, state.Space, abi.Result) {
	st := stateOf(ctx)
	if st == nil || st.request == nil {
		return nil, state.Space{}, abi.ResultState
	}
	tx := state.TxnFrom(ctx)
	if tx == nil {
		return nil, state.Space{}, abi.ResultUnavailable
	}
	if uint32(stack[1]) == 0 {
		return tx, state.Space{NS: state.PluginNamespace(s.plugin), Quota: s.grant.Own}, abi.ResultOK
	}
	name, ok := mod.Memory().Read(uint32(stack[0]), uint32(stack[1]))
	if !ok {
		return nil, state.Space{}, abi.ResultFault
	}
	if CheckSharedName(string(name)) != nil {
		return nil, state.Space{}, abi.ResultInvalid
	}
	access := s.grant.Shared[string(name)]
	if access == StateReadWrite || (access == StateRead && !write) {
		return tx, state.Space{NS: state.SharedNamespace(string(name))}, abi.ResultOK
	}
	s.refuse(string(name), access, write)
	return nil, state.Space{}, abi.ResultDenied
}

// refuse logs a namespace refused, with the grant that would allow it.
func (s *stateFuncs) refuse(name string, had StateAccess, write bool) {
	ok, leftOut := s.denied.Allow(time.Now())
	if !ok {
		return
	}
	want := "read"
	if write {
		want = "read-write"
	}
	args := []any{"plugin", s.plugin, "namespace", name, "wants", want,
		"grant", `"state": {"shared": {"` + name + `": "` + want + `"}} in ` + s.plugin + `.json`}
	if had != 0 {
		args = append(args, "granted", had.String())
	}
	if leftOut > 0 {
		args = append(args, "refusals_not_logged", leftOut)
	}
	s.log.Warn("state namespace refused: the operator file does not grant it", args...)
}

// stateResult is the Result of a state error.
func stateResult(err error) abi.Result {
	switch {
	case err == nil:
		return abi.ResultOK
	case errors.Is(err, state.ErrNotFound):
		return abi.ResultNotFound
	case errors.Is(err, state.ErrConflict), errors.Is(err, state.ErrFenced):
		return abi.ResultConflict
	case errors.Is(err, state.ErrQuota):
		return abi.ResultLimit
	case errors.Is(err, state.ErrTooLarge):
		return abi.ResultTooLarge
	case errors.Is(err, state.ErrNotInteger):
		return abi.ResultNotInteger
	case errors.Is(err, state.ErrInvalid):
		return abi.ResultInvalid
	}
	return abi.ResultUnavailable
}

// get is abi.FnStateGet (ns_ptr, ns_len, key_ptr, key_len, buf, cap, version_out) -> i32.
func (s *stateFuncs) get(ctx context.Context, mod api.Module, stack []uint64) {
	tx, sp, r := s.space(ctx, mod, stack, false)
	if r != abi.ResultOK {
		ret(stack, r)
		return
	}
	key, ok := mod.Memory().Read(uint32(stack[2]), uint32(stack[3]))
	if !ok {
		ret(stack, abi.ResultFault)
		return
	}
	it, err := tx.Get(ctx, sp, key)
	if err != nil {
		ret(stack, stateResult(err))
		return
	}
	if !mod.Memory().WriteUint64Le(uint32(stack[6]), it.Version) {
		ret(stack, abi.ResultFault)
		return
	}
	if len(it.Value) <= int(uint32(stack[5])) && !mod.Memory().Write(uint32(stack[4]), it.Value) {
		ret(stack, abi.ResultFault)
		return
	}
	stack[0] = api.EncodeI32(int32(len(it.Value)))
}

// set is abi.FnStateSet (ns_ptr, ns_len, key_ptr, key_len, val_ptr, val_len, ttl_ms, if_version, flags) -> i32.
func (s *stateFuncs) set(ctx context.Context, mod api.Module, stack []uint64) {
	tx, sp, r := s.space(ctx, mod, stack, true)
	if r != abi.ResultOK {
		ret(stack, r)
		return
	}
	key, ok1 := mod.Memory().Read(uint32(stack[2]), uint32(stack[3]))
	val, ok2 := mod.Memory().Read(uint32(stack[4]), uint32(stack[5]))
	if !ok1 || !ok2 {
		ret(stack, abi.ResultFault)
		return
	}
	ttl, flags := int64(stack[6]), uint32(stack[8])
	if ttl < 0 || ttl > maxTTLMillis || flags&^abi.StateIfAbsent != 0 {
		ret(stack, abi.ResultInvalid)
		return
	}
	o := state.SetOptions{TTL: time.Duration(ttl) * time.Millisecond, IfVersion: stack[7], IfAbsent: flags&abi.StateIfAbsent != 0}
	ret(stack, stateResult(tx.Set(ctx, sp, key, val, o))) // Set copies key and value
}

// maxTTLMillis is the longest time to live a set may give: about 292
// years, the most a time.Duration holds.
const maxTTLMillis = int64(1<<63-1) / int64(time.Millisecond)

// delete is abi.FnStateDelete (ns_ptr, ns_len, key_ptr, key_len, if_version) -> i32.
func (s *stateFuncs) delete(ctx context.Context, mod api.Module, stack []uint64) {
	tx, sp, r := s.space(ctx, mod, stack, true)
	if r != abi.ResultOK {
		ret(stack, r)
		return
	}
	key, ok := mod.Memory().Read(uint32(stack[2]), uint32(stack[3]))
	if !ok {
		ret(stack, abi.ResultFault)
		return
	}
	existed, err := tx.Delete(ctx, sp, key, stack[4])
	switch {
	case err != nil:
		ret(stack, stateResult(err))
	case existed:
		stack[0] = api.EncodeI32(1)
	default:
		stack[0] = api.EncodeI32(0)
	}
}

// add is abi.FnStateAdd (ns_ptr, ns_len, key_ptr, key_len, delta, out) -> i32.
func (s *stateFuncs) add(ctx context.Context, mod api.Module, stack []uint64) {
	tx, sp, r := s.space(ctx, mod, stack, true)
	if r != abi.ResultOK {
		ret(stack, r)
		return
	}
	key, ok := mod.Memory().Read(uint32(stack[2]), uint32(stack[3]))
	if !ok {
		ret(stack, abi.ResultFault)
		return
	}
	out := uint32(stack[5])
	if _, ok := mod.Memory().Read(out, 8); !ok { // checked before anything is staged
		ret(stack, abi.ResultFault)
		return
	}
	n, err := tx.Add(ctx, sp, key, int64(stack[4]))
	if err != nil {
		ret(stack, stateResult(err))
		return
	}
	mod.Memory().WriteUint64Le(out, uint64(n))
	ret(stack, abi.ResultOK)
}

// list is abi.FnStateList (ns_ptr, ns_len, prefix_ptr, prefix_len, after_ptr, after_len, buf, cap) -> i32.
func (s *stateFuncs) list(ctx context.Context, mod api.Module, stack []uint64) {
	tx, sp, r := s.space(ctx, mod, stack, false)
	if r != abi.ResultOK {
		ret(stack, r)
		return
	}
	prefix, ok1 := mod.Memory().Read(uint32(stack[2]), uint32(stack[3]))
	after, ok2 := mod.Memory().Read(uint32(stack[4]), uint32(stack[5]))
	if !ok1 || !ok2 {
		ret(stack, abi.ResultFault)
		return
	}
	keys, more, err := tx.List(ctx, sp, prefix, after, abi.StateListMax)
	if err != nil {
		ret(stack, stateResult(err))
		return
	}
	page, fit := encodeListPage(keys, more, int(uint32(stack[7])))
	if fit == 0 && len(keys) > 0 {
		ret(stack, abi.ResultTooSmall)
		return
	}
	if !mod.Memory().Write(uint32(stack[6]), page) {
		ret(stack, abi.ResultFault)
		return
	}
	stack[0] = api.EncodeI32(int32(len(page)))
}

// encodeListPage encodes the keys that fit in limit bytes, with the more
// record when keys are left out or more follow; fit is how many went in.
func encodeListPage(keys [][]byte, more bool, limit int) (page []byte, fit int) {
	const moreRecord = 6 // tag, len, one byte
	for _, k := range keys {
		if len(page)+5+len(k)+moreRecord > limit {
			more = true
			break
		}
		page = append(page, abi.StateListKey)
		page = binary.LittleEndian.AppendUint32(page, uint32(len(k)))
		page = append(page, k...)
		fit++
	}
	if more {
		page = append(page, abi.StateListMore, 1, 0, 0, 0, 1)
	}
	return page, fit
}
