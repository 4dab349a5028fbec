package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// Space is a namespace as a call uses it: its name and its bounds.
type Space struct {
	NS    string
	Quota Quota // zero fields: the store's defaults
}

// Txn is one call's writes, staged: nothing is visible to anyone else
// until Commit, which applies them all or none, with the call's outcome.
// The call reads its own writes (Get, List), and every write's bounds and
// conditions are checked as it is staged (so the guest learns at once)
// and again at the commit (where another call may have written since).
//
// A key the call has written has version 0 until the commit. An add reads
// the key and stages a set conditioned on the version it read: two calls
// adding to one key at once cannot both commit (ErrConflict), so no
// update is lost.
//
// A Txn belongs to one call: it is not safe for concurrent use.
type Txn struct {
	b      Backend
	limits Limits
	clock  func() time.Time
	ops    []Op
	view   map[string]*staged // by string(itemKey): what the call wrote
	bytes  int
	grown  map[string]int64 // bytes the staged writes add to each namespace, at most
	keys   map[string]int64 // keys the staged writes add to each namespace, at most
}

// staged is a key as the call left it.
type staged struct {
	value   []byte
	deleted bool
	expires time.Time
}

// NewTxn starts a call's writes on b, bounded by limits (defaults
// resolved by the caller: Disk.Limits).
func NewTxn(b Backend, limits Limits, now func() time.Time) *Txn {
	return &Txn{b: b, limits: limits.WithDefaults(), clock: now}
}

// Writes is the number of writes staged.
func (t *Txn) Writes() int { return len(t.ops) }

// Reset drops every staged write (the call runs again).
func (t *Txn) Reset() {
	t.ops, t.view, t.bytes, t.grown, t.keys = nil, nil, 0, nil, nil
}

// Get returns key in sp as the call sees it: its own write, or the
// committed item.
func (t *Txn) Get(ctx context.Context, sp Space, key []byte) (Item, error) {
	if s, ok := t.view[string(itemKey(sp.NS, key))]; ok {
		if s.deleted || (!s.expires.IsZero() && !t.clock().Before(s.expires)) {
			return Item{}, ErrNotFound
		}
		return Item{Key: slices.Clone(key), Value: slices.Clone(s.value), Expires: s.expires}, nil
	}
	return t.b.Get(ctx, sp.NS, key)
}

// current is Get with absence as nil, and whether the call wrote the key.
func (t *Txn) current(ctx context.Context, sp Space, key []byte) (*Item, bool, error) {
	_, mine := t.view[string(itemKey(sp.NS, key))]
	it, err := t.Get(ctx, sp, key)
	switch {
	case err == nil:
		return &it, mine, nil
	case isNotFound(err):
		return nil, mine, nil
	}
	return nil, mine, err
}

// SetOptions are a set's expiry and condition.
type SetOptions struct {
	TTL       time.Duration // 0: never expires
	IfAbsent  bool          // only if the key does not exist
	IfVersion uint64        // not 0: only if the key's version is this
}

// Set stages key = value in sp. A condition that does not hold now is
// ErrConflict at once.
func (t *Txn) Set(ctx context.Context, sp Space, key, value []byte, o SetOptions) error {
	op := Op{Kind: OpSet, NS: sp.NS, Key: slices.Clone(key), Value: slices.Clone(value), TTL: o.TTL, Quota: sp.Quota,
		If: Cond{Absent: o.IfAbsent, Version: o.IfVersion}}
	return t.stage(ctx, sp, &op)
}

// Delete stages the removal of key from sp, only if its version is
// ifVersion when that is not 0, and says whether the key exists now.
func (t *Txn) Delete(ctx context.Context, sp Space, key []byte, ifVersion uint64) (bool, error) {
	op := Op{Kind: OpDelete, NS: sp.NS, Key: slices.Clone(key), Quota: sp.Quota, If: Cond{Version: ifVersion}}
	cur, _, err := t.current(ctx, sp, key)
	if err != nil {
		return false, err
	}
	return cur != nil, t.stage(ctx, sp, &op)
}

// Add reads key as a decimal integer (absent: 0), stages the sum with
// delta, and returns it. The key keeps its expiry.
func (t *Txn) Add(ctx context.Context, sp Space, key []byte, delta int64) (int64, error) {
	cur, mine, err := t.current(ctx, sp, key)
	if err != nil {
		return 0, err
	}
	var n int64
	op := Op{Kind: OpSet, NS: sp.NS, Key: slices.Clone(key), Quota: sp.Quota}
	if cur != nil {
		if n, err = strconv.ParseInt(string(cur.Value), 10, 64); err != nil {
			return 0, fmt.Errorf("%w: key %s holds %s", ErrNotInteger, quoteKey(key), quoteKey(cur.Value))
		}
		if !cur.Expires.IsZero() {
			op.TTL = max(time.Millisecond, cur.Expires.Sub(t.clock()))
		}
	}
	if (delta > 0 && n > math.MaxInt64-delta) || (delta < 0 && n < math.MinInt64-delta) {
		return 0, fmt.Errorf("%w: %d + %d overflows 64 bits", ErrNotInteger, n, delta)
	}
	n += delta
	op.Value = strconv.AppendInt(nil, n, 10)
	switch {
	case mine: // the call's own write decides
	case cur == nil:
		op.If.Absent = true
	default:
		op.If.Version = cur.Version
	}
	if err := t.stage(ctx, sp, &op); err != nil {
		return 0, err
	}
	return n, nil
}

// stage checks op's bounds and condition against what the call sees,
// and stages it.
func (t *Txn) stage(ctx context.Context, sp Space, op *Op) error {
	if err := t.limits.checkOp(op); err != nil {
		return err
	}
	if len(t.ops) >= t.limits.MaxCommitOps {
		return fmt.Errorf("%w: a call writes at most %d keys", ErrTooLarge, t.limits.MaxCommitOps)
	}
	size := len(op.Key) + len(op.Value)
	if t.bytes+size > t.limits.MaxCommitBytes {
		return fmt.Errorf("%w: a call writes at most %d bytes", ErrTooLarge, t.limits.MaxCommitBytes)
	}
	cur, mine, err := t.current(ctx, sp, op.Key)
	if err != nil {
		return err
	}
	if mine && op.If.Version != 0 {
		return &ConflictError{Namespace: sp.NS, Key: op.Key, Why: "the call wrote the key: it has no version until the call commits"}
	}
	if ok, why := op.If.holds(cur); !ok {
		return &ConflictError{Namespace: sp.NS, Key: op.Key, Why: why}
	}
	if mine {
		op.If = Cond{} // relative to the call's own write, which carries the key's condition
	}
	if op.Kind == OpSet {
		if err := t.checkQuota(ctx, sp, op, cur); err != nil {
			return err
		}
	}
	k := string(itemKey(sp.NS, op.Key))
	if t.view == nil {
		t.view = map[string]*staged{}
	}
	s := &staged{value: op.Value, deleted: op.Kind == OpDelete}
	if op.TTL > 0 {
		s.expires = t.clock().Add(op.TTL)
	}
	t.view[k] = s
	t.ops = append(t.ops, *op)
	t.bytes += size
	return nil
}

// checkQuota refuses a set that would take its namespace over its bound,
// counting what is committed and what the call staged (at most: a key
// written twice counts twice). The commit checks again, exactly.
func (t *Txn) checkQuota(ctx context.Context, sp Space, op *Op, cur *Item) error {
	q := sp.Quota.or(t.limits.Namespace)
	u, err := t.b.Usage(ctx, sp.NS)
	if err != nil {
		return err
	}
	if t.grown == nil {
		t.grown, t.keys = map[string]int64{}, map[string]int64{}
	}
	if cur == nil {
		if u.Keys+t.keys[sp.NS]+1 > q.MaxKeys {
			return &QuotaError{Namespace: sp.NS, What: "keys", Limit: q.MaxKeys}
		}
		t.keys[sp.NS]++
	}
	grow := itemBytes(op.Key, op.Value)
	if cur != nil {
		grow -= itemBytes(op.Key, cur.Value)
	}
	if grow > 0 {
		if u.Bytes+t.grown[sp.NS]+grow > q.MaxBytes {
			return &QuotaError{Namespace: sp.NS, What: "bytes", Limit: q.MaxBytes}
		}
		t.grown[sp.NS] += grow
	}
	return nil
}

// List returns up to limit keys of sp that start with prefix and sort
// after after, as the call sees them (its own writes included), and
// whether more follow.
func (t *Txn) List(ctx context.Context, sp Space, prefix, after []byte, limit int) ([][]byte, bool, error) {
	keys, more, err := t.b.List(ctx, sp.NS, prefix, after, limit)
	if err != nil || len(t.view) == 0 {
		return keys, more, err
	}
	// The call's own writes in the range the committed page covers: up
	// to its last key when more follow, to the end of the prefix when not.
	base := nsPrefix(sp.NS)
	now := t.clock()
	var last []byte
	if more && len(keys) > 0 {
		last = keys[len(keys)-1]
	}
	seen := map[string]bool{}
	merged := keys[:0:0]
	for _, k := range keys {
		seen[string(k)] = true
		if s, ok := t.view[string(base)+string(k)]; ok && (s.deleted || (!s.expires.IsZero() && !now.Before(s.expires))) {
			continue
		}
		merged = append(merged, k)
	}
	for full, s := range t.view {
		if len(full) < len(base) || full[:len(base)] != string(base) {
			continue
		}
		k := []byte(full[len(base):])
		if seen[string(k)] || s.deleted || (!s.expires.IsZero() && !now.Before(s.expires)) || !bytes.HasPrefix(k, prefix) ||
			bytes.Compare(k, after) <= 0 || (last != nil && bytes.Compare(k, last) > 0) {
			continue
		}
		merged = append(merged, k)
	}
	slices.SortFunc(merged, bytes.Compare)
	if len(merged) > limit {
		merged, more = merged[:limit], true
	}
	return merged, more, nil
}

// Commit applies the staged writes and records outcome (nil: none), all
// or nothing; with neither, it does nothing.
func (t *Txn) Commit(ctx context.Context, outcome *Outcome, after uint64) ([]Result, error) {
	if len(t.ops) == 0 && outcome == nil {
		return nil, nil
	}
	return t.b.Commit(ctx, &Commit{Ops: t.ops, Outcome: outcome, After: after})
}

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
