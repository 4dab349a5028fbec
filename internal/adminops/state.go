package adminops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/state"
)

// The state ops (admin.OpStateNamespaces and the others): the host's
// state store read and written for the operator. The namespaces and
// their sizes are open, as stats is; the ops that read keys and values
// (which may be secrets) and those that write need the token or the
// ACL's admin identity, as install does. Each write is one commit,
// bounded as a call's writes are (the store's commit bounds, a plugin's
// namespace by its operator file's quota), and audited as an admin
// event; each read is logged with who asked.

// StateStore is the state store the state ops use: *state.Disk.
type StateStore interface {
	state.Backend
	// Namespaces returns every namespace that holds keys, with its
	// usage.
	Namespaces(ctx context.Context) (map[string]state.Usage, error)
	// Limits are the store's bounds, defaults resolved.
	Limits() state.Limits
}

// opMaker makes the command of an admin op (Commands' op).
type opMaker func(name string, guarded, raw bool, f func(ctx context.Context, r *abi.Request, req admin.Request) (any, error)) rpc.Command

// stateOps are the state ops' commands.
func (a *Ops) stateOps(op opMaker) []rpc.Command {
	return []rpc.Command{
		op(admin.OpStateNamespaces, false, true, func(ctx context.Context, _ *abi.Request, _ admin.Request) (any, error) {
			return a.stateNamespaces(ctx)
		}),
		op(admin.OpStateGet, true, true, a.stateGet),
		op(admin.OpStateList, true, true, a.stateList),
		op(admin.OpStateSet, true, true, a.stateSet),
		op(admin.OpStateDelete, true, true, a.stateDelete),
		op(admin.OpStateImport, true, true, a.stateImport),
	}
}

// noState answers a state op on a host without a state store.
func noState() *abi.Response {
	return &abi.Response{Status: abi.StatusServiceUnavailable, Message: "this host has no state store the admin ops can read (serve --state-dir off, or its state is in --store's Redis or in the broker of --state aio)"}
}

// stateNamespaces answers admin.OpStateNamespaces.
func (a *Ops) stateNamespaces(ctx context.Context) (any, error) {
	if a.cfg.State == nil {
		return noState(), nil
	}
	out, err := Namespaces(ctx, a.cfg.State)
	if err != nil {
		return a.stateRefusal(err, "", nil), nil
	}
	out.ReplicaID = a.Replica()
	return out, nil
}

// Namespaces is what st holds: each namespace that holds keys, sorted,
// with its keys and bytes, and the totals. `cmdhost state namespaces`
// offline uses it too, as it does the other exported functions here:
// the CLI and the host answer by the same code.
func Namespaces(ctx context.Context, st StateStore) (admin.StateNamespaces, error) {
	all, err := st.Namespaces(ctx)
	if err != nil {
		return admin.StateNamespaces{}, err
	}
	out := admin.StateNamespaces{Namespaces: []admin.StateNamespace{}, MaxBytes: st.Limits().MaxTotalBytes}
	for ns, u := range all {
		out.Namespaces = append(out.Namespaces, admin.StateNamespace{Namespace: ns, Keys: u.Keys, Bytes: u.Bytes})
		out.Keys += u.Keys
		out.Bytes += u.Bytes
	}
	slices.SortFunc(out.Namespaces, func(x, y admin.StateNamespace) int { return strings.Compare(x.Namespace, y.Namespace) })
	return out, nil
}

// stateRequest reads r's payload into req and checks its namespace; a
// refusal says what is wrong.
func (a *Ops) stateRequest(r *abi.Request, req any, ns func() string) (StateStore, string, *abi.Response) {
	if a.cfg.State == nil {
		return nil, "", noState()
	}
	if err := json.Unmarshal(r.Payload, req); err != nil {
		return nil, "", bad(fmt.Sprintf(`payload must be JSON such as {"namespace":"plugin/NAME","key":"K"}: %v`, err))
	}
	plugin, err := admin.CheckNamespace(ns())
	if err != nil {
		return nil, "", bad(err.Error())
	}
	return a.cfg.State, plugin, nil
}

// keyRequest reads the payload of get or delete: the request and its
// key, or a refusal.
func (a *Ops) keyRequest(r *abi.Request) (StateStore, string, admin.StateKeyRequest, []byte, *abi.Response) {
	var req admin.StateKeyRequest
	st, plugin, refusal := a.stateRequest(r, &req, func() string { return req.Namespace })
	if refusal != nil {
		return nil, "", req, nil, refusal
	}
	key, err := req.StateKey.Bytes()
	if err != nil {
		return nil, "", req, nil, bad(err.Error())
	}
	return st, plugin, req, key, nil
}

// stateGet answers admin.OpStateGet.
func (a *Ops) stateGet(ctx context.Context, r *abi.Request, _ admin.Request) (any, error) {
	st, _, req, key, refusal := a.keyRequest(r)
	if refusal != nil {
		return refusal, nil
	}
	a.logRead(r, admin.OpStateGet, req.Namespace)
	it, err := st.Get(ctx, req.Namespace, key)
	if err != nil {
		return a.stateRefusal(err, req.Namespace, key), nil
	}
	return admin.NewStateItem(it, true), nil
}

// stateList answers admin.OpStateList.
func (a *Ops) stateList(ctx context.Context, r *abi.Request, _ admin.Request) (any, error) {
	var req admin.StateListRequest
	st, _, refusal := a.stateRequest(r, &req, func() string { return req.Namespace })
	if refusal != nil {
		return refusal, nil
	}
	a.logRead(r, admin.OpStateList, req.Namespace)
	page, err := ListPage(ctx, st, req)
	var wrong *badRequest
	switch {
	case errors.As(err, &wrong):
		return bad(wrong.msg), nil
	case err != nil:
		return a.stateRefusal(err, req.Namespace, nil), nil
	}
	return page, nil
}

// ListPage is the page of st that req asks for: up to its limit
// (admin.MaxStatePage at most) of keys, each with its version and
// expiry and, when asked, its value (within admin.MaxStatePageBytes,
// one key at least). A request that is not one is a *badRequest.
func ListPage(ctx context.Context, st state.Backend, req admin.StateListRequest) (admin.StatePage, error) {
	limit := req.Limit
	if limit <= 0 || limit > admin.MaxStatePage {
		limit = admin.MaxStatePage
	}
	var after []byte
	if req.After != nil {
		var err error
		if after, err = req.After.Bytes(); err != nil {
			return admin.StatePage{}, &badRequest{"after: " + err.Error()}
		}
	}
	keys, more, err := st.List(ctx, req.Namespace, []byte(req.Prefix), after, limit)
	if err != nil {
		return admin.StatePage{}, err
	}
	page := admin.StatePage{Items: []admin.StateItem{}, More: more}
	size := 0
	for i, k := range keys {
		if req.Values && i > 0 && size >= admin.MaxStatePageBytes {
			page.More = true // the rest in the next page
			break
		}
		it, err := st.Get(ctx, req.Namespace, k)
		switch {
		case errors.Is(err, state.ErrNotFound):
			continue // deleted or expired since the list
		case err != nil:
			return admin.StatePage{}, err
		}
		page.Items = append(page.Items, admin.NewStateItem(it, req.Values))
		size += len(k) + len(it.Value)
	}
	return page, nil
}

// stateSet answers admin.OpStateSet: one commit of one write.
func (a *Ops) stateSet(ctx context.Context, r *abi.Request, _ admin.Request) (any, error) {
	var req admin.StateSetRequest
	st, plugin, refusal := a.stateRequest(r, &req, func() string { return req.Namespace })
	if refusal != nil {
		return refusal, nil
	}
	op, err := SetOp(req, a.stateQuota(plugin))
	if err != nil {
		return bad(err.Error()), nil
	}
	res, err := st.Commit(ctx, &state.Commit{Ops: []state.Op{op}})
	target := stateTarget(req.Namespace, op.Key)
	if err != nil {
		return a.stateWriteRefused(r, admin.OpStateSet, plugin, target, err, op.Key), nil
	}
	a.auditState(r, admin.OpStateSet, plugin, target, events.VerdictDone, "")
	return admin.StateSetResult{Version: res[0].Version}, nil
}

// SetOp is the write of req, its namespace bounded by quota; an error
// says what in req is wrong (its namespace is checked before).
func SetOp(req admin.StateSetRequest, quota state.Quota) (state.Op, error) {
	key, err := req.StateKey.Bytes()
	if err != nil {
		return state.Op{}, err
	}
	value, err := req.StateValue.Bytes()
	if err != nil {
		return state.Op{}, err
	}
	var ttl time.Duration
	if req.TTL != "" {
		if ttl, err = time.ParseDuration(req.TTL); err != nil || ttl <= 0 {
			return state.Op{}, fmt.Errorf("ttl %q: give a positive Go duration such as 1h30m", session.CleanText(req.TTL, 64))
		}
	}
	if req.IfAbsent && req.IfVersion != 0 {
		return state.Op{}, errors.New("ifAbsent and ifVersion: a key cannot be both absent and of a version")
	}
	return state.Op{Kind: state.OpSet, NS: req.Namespace, Key: key, Value: value, TTL: ttl,
		If: state.Cond{Absent: req.IfAbsent, Version: req.IfVersion}, Quota: quota}, nil
}

// stateDelete answers admin.OpStateDelete: one commit of one delete.
func (a *Ops) stateDelete(ctx context.Context, r *abi.Request, _ admin.Request) (any, error) {
	st, plugin, req, key, refusal := a.keyRequest(r)
	if refusal != nil {
		return refusal, nil
	}
	res, err := st.Commit(ctx, &state.Commit{Ops: []state.Op{DeleteOp(req.Namespace, key, req.IfVersion)}})
	target := stateTarget(req.Namespace, key)
	if err != nil {
		return a.stateWriteRefused(r, admin.OpStateDelete, plugin, target, err, key), nil
	}
	a.auditState(r, admin.OpStateDelete, plugin, target, events.VerdictDone, "")
	return admin.StateDeleteResult{Existed: res[0].Existed}, nil
}

// DeleteOp is the delete of key in ns, only if its version is ifVersion
// when that is not 0.
func DeleteOp(ns string, key []byte, ifVersion uint64) state.Op {
	return state.Op{Kind: state.OpDelete, NS: ns, Key: key, If: state.Cond{Version: ifVersion}}
}

// stateImport answers admin.OpStateImport: the items in one commit, all
// or none; an item that expired already is left out.
func (a *Ops) stateImport(ctx context.Context, r *abi.Request, _ admin.Request) (any, error) {
	var req admin.StateImportRequest
	st, plugin, refusal := a.stateRequest(r, &req, func() string { return req.Namespace })
	if refusal != nil {
		return refusal, nil
	}
	ops, expired, err := ImportOps(req.Namespace, req.Items, a.stateQuota(plugin), a.clk.Now())
	if err != nil {
		return bad(err.Error()), nil
	}
	target := fmt.Sprintf("%s (%d keys)", req.Namespace, len(ops))
	if len(ops) > 0 {
		if _, err := st.Commit(ctx, &state.Commit{Ops: ops}); err != nil {
			return a.stateWriteRefused(r, admin.OpStateImport, plugin, target, err, nil), nil
		}
	}
	a.auditState(r, admin.OpStateImport, plugin, target, events.VerdictDone, "")
	return admin.StateImported{Keys: len(ops), Expired: expired}, nil
}

// ImportOps are the writes of an import of items into namespace ns at
// now: a set of each, with quota, expiring when it says (those expired
// already left out, counted). An item that is not one is an error
// naming it (item N, from 1). `cmdhost state import` offline uses it
// too.
func ImportOps(ns string, items []admin.StateItem, quota state.Quota, now time.Time) (ops []state.Op, expired int, err error) {
	ops = make([]state.Op, 0, len(items))
	for i, it := range items {
		key, err := it.StateKey.Bytes()
		if err != nil {
			return nil, 0, fmt.Errorf("item %d: %w", i+1, err)
		}
		value, err := it.StateValue.Bytes()
		if err != nil {
			return nil, 0, fmt.Errorf("item %d: %w", i+1, err)
		}
		op := state.Op{Kind: state.OpSet, NS: ns, Key: key, Value: value, Quota: quota}
		if !it.Expires.IsZero() {
			if !it.Expires.After(now) {
				expired++
				continue
			}
			op.TTL = it.Expires.Sub(now)
		}
		ops = append(ops, op)
	}
	return ops, expired, nil
}

// stateQuota is the bound of plugin's namespace (its operator file's),
// or of a shared one (the store's default: "" plugin).
func (a *Ops) stateQuota(plugin string) state.Quota {
	if plugin == "" {
		return state.Quota{}
	}
	return a.cfg.Manager.StateQuota(plugin)
}

// stateTarget names a key of a namespace in an audit event.
func stateTarget(ns string, key []byte) string {
	return fmt.Sprintf("%s key %s", ns, session.CleanText(fmt.Sprintf("%.64q", key), 80))
}

// stateWriteRefused audits a write the store refused and answers it.
func (a *Ops) stateWriteRefused(r *abi.Request, op, plugin, target string, err error, key []byte) *abi.Response {
	resp := a.stateRefusal(err, "", key)
	a.auditState(r, op, plugin, target, events.VerdictRefused, resp.Message)
	return resp
}

// stateRefusal answers a state error (Refusal); the error of a store
// that cannot be read or written is logged, not sent: it may name the
// state folder.
func (a *Ops) stateRefusal(err error, ns string, key []byte) *abi.Response {
	status, msg := Refusal(err, ns, key)
	if status == abi.StatusServiceUnavailable {
		a.log.Error("state op: the state store failed", "err", err)
		msg = "the state store cannot be read or written now (see the host's log and /readyz); nothing was written"
	}
	return &abi.Response{Status: status, Message: msg}
}

// Refusal is the status and message of a state error: 404 no such key
// (ns and key name it), 409 a condition that does not hold, 400 a bound
// or a bad name, 503 a store that cannot be read or written.
func Refusal(err error, ns string, key []byte) (abi.Status, string) {
	switch {
	case errors.Is(err, state.ErrNotFound):
		return admin.StatusNotFound, fmt.Sprintf("no key %.64q in namespace %s", key, ns)
	case errors.Is(err, state.ErrConflict):
		return admin.StatusConflict, err.Error() + "; nothing was written"
	case errors.Is(err, state.ErrQuota), errors.Is(err, state.ErrTooLarge), errors.Is(err, state.ErrInvalid), errors.Is(err, state.ErrFenced):
		return abi.StatusBadRequest, err.Error() + "; nothing was written"
	}
	return abi.StatusServiceUnavailable, err.Error()
}

// auditState reports a write of the state store, done or refused.
func (a *Ops) auditState(r *abi.Request, op, plugin, target, verdict, reason string) {
	a.events.Emit(events.Finish(events.Event{Kind: events.KindAdmin, Op: op, Type: op, Plugin: plugin, Target: target,
		Invoker: session.CleanText(r.InvokerID, 128), User: session.CleanText(r.Caller.User, 128),
		ClientID: session.CleanText(r.Caller.ClientID, 128), Verdict: verdict, Reason: reason, Time: a.clk.Now()}))
}

// logRead logs a read of a namespace's keys or values, with who asked.
func (a *Ops) logRead(r *abi.Request, op, ns string) {
	a.log.Info("admin state read", "op", op, "namespace", ns, "invoker", session.CleanText(r.InvokerID, 128),
		"user", session.CleanText(r.Caller.User, 128), "client_id", session.CleanText(r.Caller.ClientID, 128))
}

// stateUsage is what plugin's namespace holds, for its view: 0, 0 when
// the host has no state store or it cannot be read (the view is not
// refused for it).
func (a *Ops) stateUsage(plugin string) (keys, bytes int64) {
	if a.cfg.State == nil {
		return 0, 0
	}
	u, err := a.cfg.State.Usage(context.Background(), state.PluginNamespace(plugin))
	if err != nil {
		return 0, 0
	}
	return u.Keys, u.Bytes
}
