package state

import (
	"encoding/binary"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// sweep removes up to sweepMax keys that expired and up to sweepMax
// outcomes whose keep-until passed, in one batch of their own, unsynced
// (a sweep lost in a crash is done again). Expired keys were invisible
// already (reads and conditions check the expiry); the sweep gives back
// their bytes and tells the observers (an expiry is a DELETE for the
// Azure IoT Operations protocol's notifications). One that stops at a
// bound leaves the writer behind: another sweep follows soon.
func (w *writer) sweep() error {
	w.behind = false
	b := newBatch(w)
	tx := b.begin()
	items, err := w.sweepItems(tx, b.now)
	if err != nil {
		return err
	}
	outcomes, last, err := w.sweepOutcomes(tx, b.now)
	if err != nil {
		return err
	}
	b.keep(tx)
	if err := b.write(pebble.NoSync); err != nil {
		return err
	}
	if last != nil {
		w.outcomesFrom = last // every entry up to it is gone
	}
	w.behind = items == sweepMax || outcomes == sweepMax
	w.d.observers.notify(b.changes)
	if w.d.afterSweep != nil {
		w.d.afterSweep(w.behind)
	}
	return nil
}

// sweepItems removes up to sweepMax keys that expired at now and
// returns how many index entries it went through.
func (w *writer) sweepItems(tx *commitTx, now time.Time) (n int, err error) {
	upper := binary.BigEndian.AppendUint64([]byte{tagExpiry}, uint64(now.UnixNano())+1)
	it, err := w.d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{tagExpiry}, UpperBound: upper})
	if err != nil {
		return 0, unavailable("sweeping expired keys", err)
	}
	defer it.Close()
	for ok := it.First(); ok && n < sweepMax; ok, n = it.Next(), n+1 {
		idx := append([]byte(nil), it.Key()...)
		tx.del(idx)
		ns, key, ok := splitExpiryKey(idx)
		if !ok {
			continue
		}
		k := itemKey(ns, key)
		cur, err := tx.current(k)
		if err != nil {
			return n, err
		}
		if cur == nil || cur.Expires.IsZero() || cur.Expires.UnixNano() != int64(binary.BigEndian.Uint64(idx[1:9])) {
			continue // written again since: the index entry was stale
		}
		u, err := tx.nsUsage(ns)
		if err != nil {
			return n, err
		}
		u.Keys--
		u.Bytes -= itemBytes(key, cur.Value)
		tx.total -= itemBytes(key, cur.Value)
		tx.noteUsage(ns, u)
		tx.del(k)
		tx.noteItem(k, nil)
		tx.seq = nextVersion(tx.seq, now, 0)
		tx.changes = append(tx.changes, Change{NS: ns, Key: append([]byte(nil), key...), Deleted: true, Expired: true, Version: tx.seq})
	}
	if err := it.Error(); err != nil {
		return n, unavailable("sweeping expired keys", err)
	}
	return n, nil
}

// sweepOutcomes removes up to sweepMax outcomes kept past their
// keep-until and returns how many index entries it went through. An
// outcome this writer recorded last under that keep-until (writer.live)
// goes without a read; any other (recorded before Open, or an index
// entry left behind when its id was recorded again) is read first, and
// kept when it was recorded again for longer.
func (w *writer) sweepOutcomes(tx *commitTx, now time.Time) (n int, last []byte, err error) {
	upper := binary.BigEndian.AppendUint64([]byte{tagOutcomeEnd}, uint64(now.UnixNano())+1)
	lower := []byte{tagOutcomeEnd}
	if w.outcomesFrom != nil {
		lower = w.outcomesFrom
	}
	it, err := w.d.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return 0, nil, unavailable("sweeping outcomes", err)
	}
	defer it.Close()
	for ok := it.First(); ok && n < sweepMax; ok, n = it.Next(), n+1 {
		idx := append([]byte(nil), it.Key()...)
		last = idx
		tx.del(idx)
		if len(idx) != 41 {
			continue
		}
		var h [32]byte
		copy(h[:], idx[9:])
		until := int64(binary.BigEndian.Uint64(idx[1:9]))
		if t, ok := w.live[h]; ok && t == until {
			tx.del(outcomeKey(h))
			tx.swept = append(tx.swept, indexedOutcome{h: h, until: until})
			continue
		}
		v, closer, err := w.d.db.Get(outcomeKey(h))
		if err != nil {
			continue // gone already (or unreadable: left for the next sweep's index)
		}
		o, derr := decodeOutcome(v)
		_ = closer.Close()
		if derr == nil && o.KeepUntil.After(now) {
			continue // recorded again since, kept longer
		}
		tx.del(outcomeKey(h))
	}
	if err := it.Error(); err != nil {
		return n, nil, unavailable("sweeping outcomes", err)
	}
	return n, last, nil
}
