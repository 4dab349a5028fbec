package state

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"time"
)

// The layout of the Disk store's keys. Every key starts with a byte that
// says what it is; a namespace never holds a NUL (CheckNamespace), so the
// NUL after it ends it, and a namespace's keys are one contiguous range.
//
//	'd' ns 0 key                 an item: record
//	'n' ns                       a namespace's usage: keys, bytes
//	'x' expires(8) ns 0 key      an item that expires, by when (the sweep's index)
//	'o' sha256(id)               an outcome: outcomeRecord
//	'y' keepUntil(8) sha256(id)  an outcome, by when it may go
//	'q' number(8)                a message in the outbox: id, body (outbox.go)
//	'm' name                     the store's own numbers: "seq", "total", "queue"
const (
	tagItem       = 'd'
	tagUsage      = 'n'
	tagExpiry     = 'x'
	tagOutcome    = 'o'
	tagOutcomeEnd = 'y'
	tagMeta       = 'm'
	tagOutbox     = 'q'
)

var (
	metaSeq   = []byte{tagMeta, 's', 'e', 'q'}
	metaTotal = []byte{tagMeta, 't', 'o', 't', 'a', 'l'}
	metaQueue = []byte{tagMeta, 'q', 'u', 'e', 'u', 'e'}
)

// itemKey is the store key of key in ns.
func itemKey(ns string, key []byte) []byte {
	b := make([]byte, 0, 2+len(ns)+len(key))
	b = append(b, tagItem)
	b = append(b, ns...)
	b = append(b, 0)
	return append(b, key...)
}

// nsPrefix is the prefix of every item key of ns.
func nsPrefix(ns string) []byte { return itemKey(ns, nil) }

// usageKey is the store key of ns's usage.
func usageKey(ns string) []byte { return append([]byte{tagUsage}, ns...) }

// expiryKey is the sweep's index entry of an item that expires at t.
func expiryKey(t time.Time, ns string, key []byte) []byte {
	b := make([]byte, 0, 11+len(ns)+len(key))
	b = append(b, tagExpiry)
	b = binary.BigEndian.AppendUint64(b, uint64(t.UnixNano()))
	b = append(b, ns...)
	b = append(b, 0)
	return append(b, key...)
}

// splitExpiryKey reads an expiry index key back.
func splitExpiryKey(k []byte) (ns string, key []byte, ok bool) {
	if len(k) < 9 || k[0] != tagExpiry {
		return "", nil, false
	}
	rest := k[9:]
	for i, c := range rest {
		if c == 0 {
			return string(rest[:i]), rest[i+1:], true
		}
	}
	return "", nil, false
}

// outcomeHash names an outcome in the store's keys.
func outcomeHash(id OutcomeID) [32]byte {
	h := sha256.New()
	h.Write([]byte(id.Correlation))
	h.Write([]byte{0})
	h.Write([]byte(id.ResponseTopic))
	var out [32]byte
	h.Sum(out[:0])
	return out
}

func outcomeKey(h [32]byte) []byte { return append([]byte{tagOutcome}, h[:]...) }

func outcomeEndKey(t time.Time, h [32]byte) []byte {
	b := make([]byte, 0, 41)
	b = append(b, tagOutcomeEnd)
	b = binary.BigEndian.AppendUint64(b, uint64(t.UnixNano()))
	return append(b, h[:]...)
}

// recordFormat is the first byte of an item's record.
const recordFormat = 1

// encodeItem is an item's record: format, version, expiry (Unix ns, 0:
// never), fence (length-prefixed), value.
func encodeItem(it *Item) []byte {
	b := make([]byte, 0, 1+8+8+binary.MaxVarintLen64+len(it.Fence)+len(it.Value))
	b = append(b, recordFormat)
	b = binary.BigEndian.AppendUint64(b, it.Version)
	var exp uint64
	if !it.Expires.IsZero() {
		exp = uint64(it.Expires.UnixNano())
	}
	b = binary.BigEndian.AppendUint64(b, exp)
	b = binary.AppendUvarint(b, uint64(len(it.Fence)))
	b = append(b, it.Fence...)
	return append(b, it.Value...)
}

var errBadRecord = errors.New("a record that does not decode")

// decodeItem reads a record (copying nothing: the item's slices are b's).
func decodeItem(key, b []byte) (Item, error) {
	if len(b) < 17 || b[0] != recordFormat {
		return Item{}, errBadRecord
	}
	it := Item{Key: key, Version: binary.BigEndian.Uint64(b[1:9])}
	if exp := binary.BigEndian.Uint64(b[9:17]); exp != 0 {
		it.Expires = time.Unix(0, int64(exp))
	}
	n, w := binary.Uvarint(b[17:])
	if w <= 0 || n > uint64(len(b)-17-w) {
		return Item{}, errBadRecord
	}
	at := 17 + w
	it.Fence = string(b[at : at+int(n)])
	it.Value = b[at+int(n):]
	return it, nil
}

// encodeUsage and decodeUsage: two big-endian int64s.
func encodeUsage(u Usage) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(u.Keys))
	return binary.BigEndian.AppendUint64(b, uint64(u.Bytes))
}

func decodeUsage(b []byte) Usage {
	if len(b) != 16 {
		return Usage{}
	}
	return Usage{Keys: int64(binary.BigEndian.Uint64(b)), Bytes: int64(binary.BigEndian.Uint64(b[8:]))}
}

// encodeOutcome is an outcome's record: keep-until, the id (to tell two
// ids of one hash apart), the value.
func encodeOutcome(o *Outcome) []byte {
	b := make([]byte, 0, 8+2*binary.MaxVarintLen64+len(o.ID.Correlation)+len(o.ID.ResponseTopic)+len(o.Value))
	b = binary.BigEndian.AppendUint64(b, uint64(o.KeepUntil.UnixNano()))
	b = binary.AppendUvarint(b, uint64(len(o.ID.Correlation)))
	b = append(b, o.ID.Correlation...)
	b = binary.AppendUvarint(b, uint64(len(o.ID.ResponseTopic)))
	b = append(b, o.ID.ResponseTopic...)
	return append(b, o.Value...)
}

// decodeOutcome reads an outcome's record.
func decodeOutcome(b []byte) (Outcome, error) {
	if len(b) < 8 {
		return Outcome{}, errBadRecord
	}
	o := Outcome{KeepUntil: time.Unix(0, int64(binary.BigEndian.Uint64(b)))}
	rest := b[8:]
	var parts [2]string
	for i := range parts {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return Outcome{}, errBadRecord
		}
		parts[i] = string(rest[w : w+int(n)])
		rest = rest[w+int(n):]
	}
	o.ID = OutcomeID{Correlation: parts[0], ResponseTopic: parts[1]}
	o.Value = rest
	return o, nil
}

// prefixEnd is the first key after every key that starts with p; nil
// when there is none (p is all 0xff).
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
