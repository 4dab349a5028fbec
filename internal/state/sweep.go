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
// Azure IoT Operations protocol's notifications).
func (w *writer) sweep() error {
	b := newBatch(w)
	tx := b.begin()
	if err := w.sweepItems(tx, b.now); err != nil {
		return err
	}
	if err := w.sweepOutcomes(tx, b.now); err != nil {
		return err
	}
	b.keep(tx)
	if err := b.write(pebble.NoSync); err != nil {
		return err
	}
	w.d.observers.notify(b.changes)
	return nil
}

// sweepItems removes the keys that expired at now.
func (w *writer) sweepItems(tx *commitTx, now time.Time) error {
	upper := binary.BigEndian.AppendUint64([]byte{tagExpiry}, uint64(now.UnixNano())+1)
	it, err := w.d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{tagExpiry}, UpperBound: upper})
	if err != nil {
		return unavailable("sweeping expired keys", err)
	}
	defer it.Close()
	for ok, n := it.First(), 0; ok && n < sweepMax; ok, n = it.Next(), n+1 {
		idx := append([]byte(nil), it.Key()...)
		tx.del(idx)
		ns, key, ok := splitExpiryKey(idx)
		if !ok {
			continue
		}
		k := itemKey(ns, key)
		cur, err := tx.current(k)
		if err != nil {
			return err
		}
		if cur == nil || cur.Expires.IsZero() || cur.Expires.UnixNano() != int64(binary.BigEndian.Uint64(idx[1:9])) {
			continue // written again since: the index entry was stale
		}
		u, err := tx.nsUsage(ns)
		if err != nil {
			return err
		}
		u.Keys--
		u.Bytes -= itemBytes(key, cur.Value)
		tx.total -= itemBytes(key, cur.Value)
		tx.usage[ns] = u
		tx.del(k)
		tx.items[string(k)] = nil
		tx.seq = nextVersion(tx.seq, now, 0)
		tx.changes = append(tx.changes, Change{NS: ns, Key: append([]byte(nil), key...), Deleted: true, Expired: true, Version: tx.seq})
	}
	if err := it.Error(); err != nil {
		return unavailable("sweeping expired keys", err)
	}
	return nil
}

// sweepOutcomes removes the outcomes kept past their keep-until.
func (w *writer) sweepOutcomes(tx *commitTx, now time.Time) error {
	upper := binary.BigEndian.AppendUint64([]byte{tagOutcomeEnd}, uint64(now.UnixNano())+1)
	it, err := w.d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{tagOutcomeEnd}, UpperBound: upper})
	if err != nil {
		return unavailable("sweeping outcomes", err)
	}
	defer it.Close()
	for ok, n := it.First(), 0; ok && n < sweepMax; ok, n = it.Next(), n+1 {
		idx := append([]byte(nil), it.Key()...)
		tx.del(idx)
		if len(idx) != 41 {
			continue
		}
		var h [32]byte
		copy(h[:], idx[9:])
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
		return unavailable("sweeping outcomes", err)
	}
	return nil
}
