package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
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
// A nested local call stages into a Child: it reads its caller's writes,
// and its own join them (Merge) only if it succeeds. Branches of a
// fan-out run at once, each with its own Child, so a Txn is safe for
// concurrent use: one mutex guards it, taken child before parent.
type Txn struct {
	b      Backend
	parent *Txn // a nested call's: reads go through it, Merge joins it
	limits Limits
	clock  func() time.Time

	mu    sync.Mutex
	ops   []Op
	msgs  []Message          // published, for the outbox (Publish)
	view  map[string]*staged // by string(itemKey): what the call wrote
	bytes int
	grown map[string]int64 // bytes the staged writes add to each namespace, at most
	keys  map[string]int64 // keys the staged writes add to each namespace, at most
	// used is each namespace's usage as the call first read it: the
	// check at staging is a first one (the commit's is exact), and a
	// store on another machine is asked once per call, not per write.
	used map[string]Usage
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

// Child starts the writes of a call t's call makes (a nested local
// call): they see t's, and join them at Merge.
func (t *Txn) Child() *Txn { return &Txn{b: t.b, parent: t, limits: t.limits, clock: t.clock} }

// Merge adds a child's writes to its parent's (the nested call
// succeeded); a child not merged is dropped. A parent's write made since
// the child read it wins where they touch the same key: the child's
// writes are applied after it, in the child's order.
func (t *Txn) Merge() error {
	if t.parent == nil {
		return errors.New("state: Merge of a call's own writes (only a nested call's merge)")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.parent
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ops)+len(t.ops) > t.limits.MaxCommitOps || p.bytes+t.bytes > t.limits.MaxCommitBytes {
		return fmt.Errorf("%w: a call and its nested calls write at most %d keys and %d bytes", ErrTooLarge, t.limits.MaxCommitOps, t.limits.MaxCommitBytes)
	}
	if p.view == nil && len(t.view) > 0 {
		p.view = map[string]*staged{}
	}
	for k, s := range t.view {
		p.view[k] = s
	}
	p.ops = append(p.ops, t.ops...)
	p.msgs = append(p.msgs, t.msgs...)
	p.bytes += t.bytes
	t.ops, t.msgs, t.view, t.bytes = nil, nil, nil, 0
	return nil
}

// Writes is the number of writes staged.
func (t *Txn) Writes() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.ops)
}

// Reset drops every staged write (the call runs again).
func (t *Txn) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ops, t.msgs, t.view, t.bytes, t.grown, t.keys, t.used = nil, nil, nil, 0, nil, nil, nil
}

// Publish stages a message for the outbox, published by a plugin whose
// namespace is ns: sent once the call commits (with its id,
// NameMessages). It counts against the call's bytes, and is refused when
// the outbox is full already (the store's, or, in Redis, ns's:
// OutboxBytesIn).
func (t *Txn) Publish(ns string, body []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, size := t.stagedSize()
	if size+len(body) > t.limits.MaxCommitBytes {
		return fmt.Errorf("%w: a call writes and publishes at most %d bytes", ErrTooLarge, t.limits.MaxCommitBytes)
	}
	held := int64(0)
	switch o := t.b.(type) {
	case interface{ OutboxBytes() int64 }:
		held = o.OutboxBytes()
	case interface{ OutboxBytesIn(ns string) int64 }:
		held = o.OutboxBytesIn(ns)
	}
	if held+int64(len(body)) > t.limits.MaxOutboxBytes {
		return &QuotaError{What: "outbox bytes", Limit: t.limits.MaxOutboxBytes}
	}
	t.msgs = append(t.msgs, Message{NS: ns, Body: slices.Clone(body)})
	t.bytes += len(body)
	return nil
}

// Messages is the number of messages staged.
func (t *Txn) Messages() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.msgs)
}

// NameMessages gives each staged message its id: id(i) for the i-th.
func (t *Txn) NameMessages(id func(i int) string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.msgs {
		t.msgs[i].ID = id(i)
	}
}

// Get returns key in sp as the call sees it: its own write, its callers',
// or the committed item.
func (t *Txn) Get(ctx context.Context, sp Space, key []byte) (Item, error) {
	it, _, err := t.find(ctx, sp, key)
	if err != nil {
		return Item{}, err
	}
	if it == nil {
		return Item{}, ErrNotFound
	}
	return *it, nil
}

// find returns key in sp as the call sees it (nil: absent) and whether
// the call, or a caller, wrote it.
func (t *Txn) find(ctx context.Context, sp Space, key []byte) (*Item, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.findLocked(ctx, sp, key)
}

func (t *Txn) findLocked(ctx context.Context, sp Space, key []byte) (*Item, bool, error) {
	if s, ok := t.view[string(itemKey(sp.NS, key))]; ok {
		if s.deleted || (!s.expires.IsZero() && !t.clock().Before(s.expires)) {
			return nil, true, nil
		}
		return &Item{Key: slices.Clone(key), Value: slices.Clone(s.value), Expires: s.expires}, true, nil
	}
	if t.parent != nil {
		return t.parent.find(ctx, sp, key)
	}
	it, err := t.b.Get(ctx, sp.NS, key)
	switch {
	case err == nil:
		return &it, false, nil
	case errors.Is(err, ErrNotFound):
		return nil, false, nil
	}
	return nil, false, err
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
	t.mu.Lock()
	defer t.mu.Unlock()
	cur, mine, err := t.findLocked(ctx, sp, key)
	if err != nil {
		return err
	}
	return t.stage(ctx, sp, &op, cur, mine)
}

// Delete stages the removal of key from sp, only if its version is
// ifVersion when that is not 0, and says whether the key exists now.
func (t *Txn) Delete(ctx context.Context, sp Space, key []byte, ifVersion uint64) (bool, error) {
	op := Op{Kind: OpDelete, NS: sp.NS, Key: slices.Clone(key), Quota: sp.Quota, If: Cond{Version: ifVersion}}
	t.mu.Lock()
	defer t.mu.Unlock()
	cur, mine, err := t.findLocked(ctx, sp, key)
	if err != nil {
		return false, err
	}
	return cur != nil, t.stage(ctx, sp, &op, cur, mine)
}

// Add reads key as a decimal integer (absent: 0), stages the sum with
// delta, and returns it. The key keeps its expiry.
func (t *Txn) Add(ctx context.Context, sp Space, key []byte, delta int64) (int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur, mine, err := t.findLocked(ctx, sp, key)
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
	if err := t.stage(ctx, sp, &op, cur, mine); err != nil {
		return 0, err
	}
	return n, nil
}

// stage checks op's bounds and condition against cur, the key as the
// call sees it (read once, by the caller: an add's condition is the
// version it read, whatever was committed since), and whether the call
// wrote it (mine), and stages op. t.mu is held.
func (t *Txn) stage(ctx context.Context, sp Space, op *Op, cur *Item, mine bool) error {
	if err := t.limits.checkOp(op); err != nil {
		return err
	}
	ops, size := t.stagedSize()
	if ops >= t.limits.MaxCommitOps {
		return fmt.Errorf("%w: a call writes at most %d keys", ErrTooLarge, t.limits.MaxCommitOps)
	}
	if size+len(op.Key)+len(op.Value) > t.limits.MaxCommitBytes {
		return fmt.Errorf("%w: a call writes at most %d bytes", ErrTooLarge, t.limits.MaxCommitBytes)
	}
	size = len(op.Key) + len(op.Value)
	if c, ok := t.b.(OpChecker); ok { // a write it cannot do is refused whether its condition holds or not
		check := *op
		if mine {
			check.If = Cond{} // as it commits: below
		}
		if err := c.CheckOp(check, t.conditionalStaged()); err != nil {
			return err
		}
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

// stagedSize counts the writes staged by the call and its callers, and
// their bytes. t.mu is held.
func (t *Txn) stagedSize() (ops, size int) {
	ops, size = len(t.ops), t.bytes
	for p := t.parent; p != nil; p = p.parent {
		p.mu.Lock()
		ops, size = ops+len(p.ops), size+p.bytes
		p.mu.Unlock()
	}
	return ops, size
}

// conditionalStaged counts the writes staged by the call and its callers
// that carry a condition. t.mu is held.
func (t *Txn) conditionalStaged() int {
	n := countConditional(t.ops)
	for p := t.parent; p != nil; p = p.parent {
		p.mu.Lock()
		n += countConditional(p.ops)
		p.mu.Unlock()
	}
	return n
}

func countConditional(ops []Op) int {
	n := 0
	for i := range ops {
		if !ops[i].If.IsZero() {
			n++
		}
	}
	return n
}

// checkQuota refuses a set that would take its namespace over its bound,
// counting what is committed and what the call staged (at most: a key
// written twice counts twice). The commit checks again, exactly.
func (t *Txn) checkQuota(ctx context.Context, sp Space, op *Op, cur *Item) error {
	q := sp.Quota.Or(t.limits.Namespace)
	u, ok := t.used[sp.NS]
	if !ok {
		var err error
		if u, err = t.b.Usage(ctx, sp.NS); err != nil {
			return err
		}
		if t.used == nil {
			t.used = map[string]Usage{}
		}
		t.used[sp.NS] = u
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
	var keys [][]byte
	var more bool
	var err error
	if t.parent != nil {
		keys, more, err = t.parent.List(ctx, sp, prefix, after, limit)
	} else {
		keys, more, err = t.b.List(ctx, sp.NS, prefix, after, limit)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
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

// StagedMessages returns the messages staged, in order, for a store that
// commits them itself (Staged).
func (t *Txn) StagedMessages() []Message {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.msgs)
}

// Staged returns the writes staged, in order, for a store that commits
// them itself (with a request's outcome, in one script: the Redis dedup
// store). A nested call's are its caller's once merged.
func (t *Txn) Staged() []Op {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.ops)
}

// Commit applies the staged writes and records outcome (nil: none), all
// or nothing; with neither, it does nothing.
func (t *Txn) Commit(ctx context.Context, outcome *Outcome, after uint64) ([]Result, error) {
	if t.parent != nil {
		return nil, errors.New("state: Commit of a nested call's writes (Merge them into its caller's)")
	}
	t.mu.Lock()
	ops, msgs := t.ops, t.msgs
	t.mu.Unlock()
	if len(ops) == 0 && len(msgs) == 0 && outcome == nil {
		return nil, nil
	}
	return t.b.Commit(ctx, &Commit{Ops: ops, Outcome: outcome, After: after, Messages: msgs})
}
