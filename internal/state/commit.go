package state

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cmdhost/cmdhost/internal/hlc"
)

// Group commit. Every commit goes through one writer goroutine: it takes
// what is queued (up to maxBatch commits), applies each in turn to the
// batch being built, checking its conditions and bounds against what is
// committed plus what the commits before it in the batch applied, and
// then writes and syncs the batch once. A commit that fails its checks is
// left out of the batch and told why; the others are told once the sync
// returned. So N calls finishing together cost one fsync, not N, and
// commits are serialisable: each sees every one before it.

const (
	queueLen = 4096 // commits waiting for the writer
	maxBatch = 512  // commits in one batch
	// sweepMax bounds the expired keys and outcomes one sweep removes, so
	// that a sweep never holds the writer long.
	sweepMax = 1000
)

// pending is a commit (or a sweep) waiting for the writer.
type pending struct {
	c       *Commit
	sweep   bool
	dequeue [][]byte // the outbox's keys of messages sent (outbox.go)
	res     []Result
	err     error
	done    chan struct{}
}

// Commit applies c all or nothing and returns once it is durable. ctx
// bounds only the wait for room in the writer's queue: once queued, the
// commit's fate is waited for whatever ctx says (an outcome must not be
// reported unknown when it was written).
func (d *Disk) Commit(ctx context.Context, c *Commit) ([]Result, error) {
	if err := d.limits.CheckCommit(c); err != nil {
		return nil, err
	}
	start := time.Now()
	p := &pending{c: c, done: make(chan struct{})}
	if err := d.enqueue(ctx, p); err != nil {
		return nil, err
	}
	<-p.done
	d.stats.latency.observe(time.Since(start))
	return p.res, p.err
}

// Sweep removes the keys and outcomes that expired (the writer does it
// every DiskConfig.SweepEvery; tests call it with a clock of their own).
func (d *Disk) Sweep(ctx context.Context) error {
	p := &pending{sweep: true, done: make(chan struct{})}
	if err := d.enqueue(ctx, p); err != nil {
		return err
	}
	<-p.done
	return p.err
}

func (d *Disk) enqueue(ctx context.Context, p *pending) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return fmt.Errorf("%w: the store is closed", ErrUnavailable)
	}
	select {
	case d.queue <- p:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: waiting to commit: %w", ErrUnavailable, ctx.Err())
	}
}

// CheckCommit checks a commit's size and its ops' names and sizes, before
// it is queued.
func (l Limits) CheckCommit(c *Commit) error {
	if len(c.Ops) > l.MaxCommitOps {
		return fmt.Errorf("%w: %d writes in one commit, over the bound of %d", ErrTooLarge, len(c.Ops), l.MaxCommitOps)
	}
	size := 0
	for i := range c.Ops {
		if err := l.checkOp(&c.Ops[i]); err != nil {
			return err
		}
		size += len(c.Ops[i].Key) + len(c.Ops[i].Value)
	}
	for _, m := range c.Messages {
		size += len(m.ID) + len(m.Body)
	}
	if size > l.MaxCommitBytes {
		return fmt.Errorf("%w: %d bytes of writes in one commit, over the bound of %d", ErrTooLarge, size, l.MaxCommitBytes)
	}
	return nil
}

// writer is the state of the writer goroutine; only it touches it.
type writer struct {
	d     *Disk
	every time.Duration
	seq   uint64           // the last version given
	total int64            // every namespace's bytes
	queue outboxCount      // the outbox's next number and bytes (outbox.go)
	usage map[string]Usage // namespaces' usage, as committed, read as needed
	// behind: the last sweep stopped at its bound with more expired; the
	// next follows the next batch (or comes at once when none waits), so
	// that a host recording more than sweepMax outcomes a second keeps
	// up, without holding commits back for long.
	behind bool
	// live is the keep-until (Unix ns) of each outcome this writer
	// recorded, the last recorded of its id, until the sweep removes it:
	// so the sweep removes those without reading them back (sweep.go).
	live map[[32]byte]int64
	// outcomesFrom is where the sweep reads the outcome index from: every
	// entry before it was swept. Without it each sweep would step again
	// over the deletions of the sweeps before it, until a compaction.
	// Nil: from the start.
	outcomesFrom []byte
}

func newWriter(d *Disk, every time.Duration) (*writer, error) {
	w := &writer{d: d, every: every, live: map[[32]byte]int64{}}
	if err := w.load(); err != nil {
		return nil, err
	}
	return w, nil
}

// load reads the store's numbers from the database (at start, and after
// a batch failed to write).
func (w *writer) load() error {
	w.usage = map[string]Usage{}
	w.seq, w.total, w.queue = 0, 0, outboxCount{}
	if v, closer, err := w.d.db.Get(metaQueue); err == nil {
		w.queue = decodeOutboxCount(v)
		_ = closer.Close()
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return unavailable("reading the outbox's numbers", err)
	}
	w.d.queueBytes.Store(w.queue.bytes)
	for _, m := range []struct {
		key []byte
		to  func(uint64)
	}{{metaSeq, func(v uint64) { w.seq = v }}, {metaTotal, func(v uint64) { w.total = int64(v) }}} {
		v, closer, err := w.d.db.Get(m.key)
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return unavailable("reading the store's numbers", err)
		}
		if len(v) == 8 {
			m.to(binary.BigEndian.Uint64(v))
		}
		_ = closer.Close()
	}
	return nil
}

func (w *writer) run() {
	defer close(w.d.stopped)
	tick := time.NewTicker(w.every)
	defer tick.Stop()
	for {
		if w.behind {
			select {
			case p, ok := <-w.d.queue:
				if !ok {
					return
				}
				w.write(w.collect(p))
			default:
			}
			w.sweepNoting()
			continue
		}
		select {
		case p, ok := <-w.d.queue:
			if !ok {
				return
			}
			w.write(w.collect(p))
		case <-tick.C:
			w.sweepNoting()
		}
	}
}

// collect is p and what else is queued, up to maxBatch commits.
func (w *writer) collect(p *pending) []*pending {
	batch := []*pending{p}
	for len(batch) < maxBatch {
		select {
		case p, ok := <-w.d.queue:
			if !ok {
				return batch
			}
			batch = append(batch, p)
		default:
			return batch
		}
	}
	return batch
}

// sweepNoting sweeps and logs a failure.
func (w *writer) sweepNoting() {
	if err := w.sweep(); err != nil {
		w.d.log.Warn("state store: removing expired keys failed; trying again later", "err", err)
	}
}

// write applies and syncs one batch, and tells each commit its fate.
func (w *writer) write(batch []*pending) {
	if w.d.beforeBatch != nil {
		w.d.beforeBatch()
	}
	start := time.Now()
	b := newBatch(w)
	for _, p := range batch {
		if p.sweep {
			continue
		}
		if p.dequeue != nil {
			tx := b.begin()
			if p.err = tx.dequeue(p.dequeue); p.err == nil {
				b.keep(tx)
			}
			continue
		}
		tx := b.begin()
		res, err := tx.apply(p.c)
		if err != nil {
			p.err = err
			continue
		}
		p.res = res
		b.keep(tx)
	}
	err := b.write(pebble.Sync)
	for _, p := range batch {
		switch {
		case p.sweep:
			p.err = w.sweep()
		case err != nil && p.err == nil:
			p.err, p.res = err, nil
		}
	}
	if err == nil {
		w.d.observers.notify(b.changes)
	}
	w.d.stats.record(batch, time.Since(start))
	for _, p := range batch {
		close(p.done)
	}
}

// batch is a batch being built: what its commits applied so far.
type batch struct {
	w       *writer
	now     time.Time
	pb      *pebble.Batch
	items   map[string]*Item // by store key; nil: absent
	usage   map[string]Usage // the namespaces touched
	seq     uint64
	total   int64
	changes []Change
	queue   outboxCount // the outbox's, as the batch leaves it (outbox.go)
	// outcomes are the outcomes recorded by the commits kept, in order;
	// swept, those the sweep removes (both for writer.live).
	outcomes, swept []indexedOutcome
}

// indexedOutcome is an outcome's entry in the index by keep-until.
type indexedOutcome struct {
	h     [32]byte
	until int64 // Unix ns
}

func newBatch(w *writer) *batch {
	return &batch{w: w, now: w.d.clock.Now(), pb: w.d.db.NewBatch(), items: map[string]*Item{}, usage: map[string]Usage{},
		seq: w.seq, total: w.total, queue: w.queue}
}

// begin starts applying one commit on top of what the batch holds.
func (b *batch) begin() *commitTx {
	return &commitTx{b: b, seq: b.seq, total: b.total, queue: b.queue}
}

// keep adds what tx applied to the batch.
func (b *batch) keep(tx *commitTx) {
	for _, m := range tx.muts {
		if m.del {
			_ = b.pb.Delete(m.key, nil)
		} else {
			_ = b.pb.Set(m.key, m.value, nil)
		}
	}
	for k, it := range tx.items {
		b.items[k] = it
	}
	for ns, u := range tx.usage {
		b.usage[ns] = u
	}
	b.seq, b.total, b.queue = tx.seq, tx.total, tx.queue
	b.changes = append(b.changes, tx.changes...)
	b.outcomes = append(b.outcomes, tx.outcomes...)
	b.swept = append(b.swept, tx.swept...)
}

// write writes the batch with the store's numbers, and on success makes
// them the writer's.
func (b *batch) write(sync *pebble.WriteOptions) error {
	defer b.pb.Close()
	if b.pb.Empty() {
		return nil
	}
	_ = b.pb.Set(metaSeq, binary.BigEndian.AppendUint64(nil, b.seq), nil)
	_ = b.pb.Set(metaTotal, binary.BigEndian.AppendUint64(nil, uint64(b.total)), nil)
	if b.queue != b.w.queue {
		_ = b.pb.Set(metaQueue, b.queue.encode(), nil)
	}
	for ns, u := range b.usage {
		if u.Keys == 0 && u.Bytes == 0 {
			_ = b.pb.Delete(usageKey(ns), nil)
		} else {
			_ = b.pb.Set(usageKey(ns), encodeUsage(u), nil)
		}
	}
	err := b.pb.Commit(sync)
	b.w.d.stats.health.wrote(err)
	if err != nil {
		// What the writer holds may be ahead of the disk: read it again.
		if lerr := b.w.load(); lerr != nil {
			b.w.d.log.Error("state store: reading its numbers again after a failed write", "err", lerr)
		}
		return unavailable("writing to the state folder", err)
	}
	queued := b.queue.next > b.w.queue.next
	b.w.seq, b.w.total, b.w.queue = b.seq, b.total, b.queue
	b.w.d.queueBytes.Store(b.queue.bytes)
	for ns, u := range b.usage {
		b.w.usage[ns] = u
	}
	for _, o := range b.swept {
		delete(b.w.live, o.h)
	}
	for _, o := range b.outcomes {
		b.w.live[o.h] = o.until
	}
	if queued {
		b.w.d.signalOutbox()
	}
	return nil
}

// current returns the item under store key k as the batch sees it,
// expired or not; nil when absent.
func (b *batch) current(k []byte) (*Item, error) {
	if it, ok := b.items[string(k)]; ok {
		return it, nil
	}
	v, closer, err := b.w.d.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		b.items[string(k)] = nil
		return nil, nil
	}
	if err != nil {
		return nil, unavailable("reading a key", err)
	}
	defer closer.Close()
	it, err := decodeItem(nil, v)
	if err != nil {
		return nil, unavailable("reading a key", err)
	}
	c := copyItem(it)
	b.items[string(k)] = &c
	return &c, nil
}

// nsUsage is ns's usage as the batch sees it.
func (b *batch) nsUsage(ns string) (Usage, error) {
	if u, ok := b.usage[ns]; ok {
		return u, nil
	}
	if u, ok := b.w.usage[ns]; ok {
		return u, nil
	}
	v, closer, err := b.w.d.db.Get(usageKey(ns))
	if errors.Is(err, pebble.ErrNotFound) {
		return Usage{}, nil
	}
	if err != nil {
		return Usage{}, unavailable("reading a namespace's usage", err)
	}
	defer closer.Close()
	u := decodeUsage(v)
	b.w.usage[ns] = u
	return u, nil
}

// mutation is one write of a commit to the batch.
type mutation struct {
	key, value []byte
	del        bool
}

// commitTx applies one commit on top of a batch; kept only if every op
// applies.
type commitTx struct {
	b       *batch
	items   map[string]*Item
	usage   map[string]Usage
	seq     uint64
	total   int64
	queue   outboxCount
	muts    []mutation
	changes []Change
	// outcomes and swept: as batch's, for this commit (or sweep).
	outcomes, swept []indexedOutcome
}

func (tx *commitTx) current(k []byte) (*Item, error) {
	if it, ok := tx.items[string(k)]; ok {
		return it, nil
	}
	return tx.b.current(k)
}

func (tx *commitTx) nsUsage(ns string) (Usage, error) {
	if u, ok := tx.usage[ns]; ok {
		return u, nil
	}
	return tx.b.nsUsage(ns)
}

// noteItem and noteUsage record what tx applied, for the ops after it
// (maps made on first use: most commits only record an outcome).
func (tx *commitTx) noteItem(k []byte, it *Item) {
	if tx.items == nil {
		tx.items = map[string]*Item{}
	}
	tx.items[string(k)] = it
}

func (tx *commitTx) noteUsage(ns string, u Usage) {
	if tx.usage == nil {
		tx.usage = map[string]Usage{}
	}
	tx.usage[ns] = u
}

func (tx *commitTx) set(k, v []byte) { tx.muts = append(tx.muts, mutation{key: k, value: v}) }
func (tx *commitTx) del(k []byte)    { tx.muts = append(tx.muts, mutation{key: k, del: true}) }

// apply applies c's ops in order, then records its outcome.
func (tx *commitTx) apply(c *Commit) ([]Result, error) {
	res := make([]Result, len(c.Ops))
	for i := range c.Ops {
		r, err := tx.applyOp(c, i)
		if err != nil {
			return nil, err
		}
		res[i] = r
	}
	if o := c.Outcome; o != nil {
		h := outcomeHash(o.ID)
		tx.set(outcomeKey(h), encodeOutcome(o))
		end := outcomeEndKey(o.KeepUntil, h)
		tx.set(end, nil)
		if from := tx.b.w.outcomesFrom; from != nil && bytes.Compare(end, from) < 0 {
			tx.b.w.outcomesFrom = nil // an entry behind the sweep (its keep-until passed): read from the start
		}
		tx.outcomes = append(tx.outcomes, indexedOutcome{h: h, until: o.KeepUntil.UnixNano()})
	}
	if err := tx.enqueue(c.Messages); err != nil {
		return nil, err
	}
	return res, nil
}

// applyOp applies op i of c.
func (tx *commitTx) applyOp(c *Commit, i int) (Result, error) {
	op := &c.Ops[i]
	now := tx.b.now
	k := itemKey(op.NS, op.Key)
	cur, err := tx.current(k)
	if err != nil {
		return Result{}, err
	}
	visible := cur
	if cur != nil && expired(cur, now) {
		visible = nil
	}
	if err := checkFence(op, visible); err != nil {
		return Result{}, err
	}
	if ok, why := op.If.holds(visible); !ok {
		return Result{}, &ConflictError{Op: i, Namespace: op.NS, Key: op.Key, Why: why}
	}
	if op.Kind == OpDelete && cur == nil {
		return Result{}, nil // nothing to delete: no version taken
	}
	u, err := tx.nsUsage(op.NS)
	if err != nil {
		return Result{}, err
	}
	if cur != nil {
		u.Bytes -= itemBytes(op.Key, cur.Value)
		tx.total -= itemBytes(op.Key, cur.Value)
		u.Keys--
		if !cur.Expires.IsZero() {
			tx.del(expiryKey(cur.Expires, op.NS, op.Key))
		}
	}
	tx.seq = nextVersion(tx.seq, now, c.After)
	res := Result{Existed: visible != nil, Version: tx.seq}
	if op.Kind == OpDelete {
		tx.noteUsage(op.NS, u)
		tx.del(k)
		tx.noteItem(k, nil)
		// An expired key not yet swept goes now: its observers learn it
		// expired.
		tx.changes = append(tx.changes, Change{NS: op.NS, Key: op.Key, Deleted: true, Expired: visible == nil, Version: tx.seq})
		return res, nil
	}
	it := &Item{Value: op.Value, Version: tx.seq, Fence: newerFence(op.Fence, visible)}
	if op.TTL > 0 {
		it.Expires = now.Add(op.TTL)
		tx.set(expiryKey(it.Expires, op.NS, op.Key), nil)
	}
	u.Keys++
	u.Bytes += itemBytes(op.Key, op.Value)
	tx.total += itemBytes(op.Key, op.Value)
	if err := tx.checkQuota(op, u, cur); err != nil {
		return Result{}, err
	}
	tx.noteUsage(op.NS, u)
	tx.set(k, encodeItem(it))
	tx.noteItem(k, it)
	tx.changes = append(tx.changes, Change{NS: op.NS, Key: op.Key, Value: op.Value, Version: tx.seq})
	return res, nil
}

// checkQuota refuses a set that takes its namespace, or the store, over
// its bound (a set that shrinks what is held always passes).
func (tx *commitTx) checkQuota(op *Op, u Usage, cur *Item) error {
	limits := tx.b.w.d.limits
	q := op.Quota.Or(limits.Namespace)
	grows := cur == nil || len(op.Value) > len(cur.Value)
	switch {
	case cur == nil && u.Keys > q.MaxKeys:
		return &QuotaError{Namespace: op.NS, What: "keys", Limit: q.MaxKeys}
	case grows && u.Bytes > q.MaxBytes:
		return &QuotaError{Namespace: op.NS, What: "bytes", Limit: q.MaxBytes}
	case grows && tx.total > limits.MaxTotalBytes:
		return &QuotaError{What: "bytes", Limit: limits.MaxTotalBytes}
	}
	return nil
}

// checkFence refuses a write to a fenced key without a token, or with an
// older one.
func checkFence(op *Op, cur *Item) error {
	if cur == nil || cur.Fence == "" {
		return nil
	}
	if op.Fence == "" {
		return &FenceError{Namespace: op.NS, Key: op.Key, Missing: true}
	}
	if compareFences(op.Fence, cur.Fence) < 0 {
		return &FenceError{Namespace: op.NS, Key: op.Key}
	}
	return nil
}

// newerFence is the fence a set leaves on its key: the newer of its own
// and the key's.
func newerFence(token string, cur *Item) string {
	if cur == nil || cur.Fence == "" {
		return token
	}
	if token == "" || compareFences(token, cur.Fence) < 0 {
		return cur.Fence
	}
	return token
}

// compareFences orders two fencing tokens (HLCs); one that does not parse
// is older than one that does (the protocol layer refuses malformed
// tokens before they get here).
func compareFences(a, b string) int {
	ta, errA := hlc.Parse(a)
	tb, errB := hlc.Parse(b)
	switch {
	case errA != nil && errB != nil:
		return 0
	case errA != nil:
		return -1
	case errB != nil:
		return 1
	}
	return ta.Compare(tb)
}
