package state

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// The outbox: the messages a non-idempotent call published join it in the
// commit of its outcome and writes (Commit.Messages), so that they are
// sent if and only if the call's outcome is recorded, and survive a crash
// until they are. A sender (package outbox) reads them in the order they
// joined (Queued), sends each, and takes out what the broker acknowledged
// (Dequeue). A message is sent at least once; its id is the same at every
// send, so a receiver can drop what it already has.
//
// The outbox is bounded in bytes (Limits.MaxOutboxBytes): a commit that
// would pass it is refused (a *QuotaError), and the guest that publishes
// into a full outbox is told at once (Txn.Publish).

// outboxCount is the outbox's next message number and the bytes it holds.
type outboxCount struct {
	next  uint64
	bytes int64
}

func (c outboxCount) encode() []byte {
	b := binary.BigEndian.AppendUint64(nil, c.next)
	return binary.BigEndian.AppendUint64(b, uint64(c.bytes))
}

func decodeOutboxCount(b []byte) outboxCount {
	if len(b) != 16 {
		return outboxCount{}
	}
	return outboxCount{next: binary.BigEndian.Uint64(b), bytes: int64(binary.BigEndian.Uint64(b[8:]))}
}

func outboxKey(n uint64) []byte { return binary.BigEndian.AppendUint64([]byte{tagOutbox}, n) }

// encodeMessage is a message's record: its id (length-prefixed), its body.
func encodeMessage(m Message) []byte {
	b := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(m.ID)+len(m.Body)), uint64(len(m.ID)))
	b = append(b, m.ID...)
	return append(b, m.Body...)
}

func decodeMessage(b []byte) (Message, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return Message{}, errBadRecord
	}
	return Message{ID: string(b[w : w+int(n)]), Body: append([]byte{}, b[w+int(n):]...)}, nil
}

// messageBytes is what a message counts against the outbox's bound.
func messageBytes(m Message) int64 { return int64(len(m.ID) + len(m.Body)) }

// enqueue adds messages to the outbox, in order.
func (tx *commitTx) enqueue(msgs []Message) error {
	for _, m := range msgs {
		tx.queue.bytes += messageBytes(m)
		if limit := tx.b.w.d.limits.MaxOutboxBytes; tx.queue.bytes > limit {
			return &QuotaError{What: "outbox bytes", Limit: limit}
		}
		tx.set(outboxKey(tx.queue.next), encodeMessage(m))
		tx.queue.next++
	}
	return nil
}

// dequeue takes the messages under keys out of the outbox.
func (tx *commitTx) dequeue(keys [][]byte) error {
	for _, k := range keys {
		v, closer, err := tx.b.w.d.db.Get(k)
		if err != nil {
			continue // gone already
		}
		if m, err := decodeMessage(v); err == nil {
			tx.queue.bytes -= messageBytes(m)
		}
		_ = closer.Close()
		tx.del(k)
	}
	return nil
}

// Queued is a message waiting in the outbox, and its key there.
type Queued struct {
	Key []byte
	Message
}

// Queued returns up to limit messages of the outbox, first in first.
func (d *Disk) Queued(_ context.Context, limit int) ([]Queued, error) {
	var out []Queued
	err := d.read(func(db *pebble.DB) error {
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{tagOutbox}, UpperBound: []byte{tagOutbox + 1}})
		if err != nil {
			return unavailable("reading the outbox", err)
		}
		defer it.Close()
		for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
			m, err := decodeMessage(it.Value())
			if err != nil {
				return unavailable("reading the outbox", fmt.Errorf("message %x: %w", it.Key(), err))
			}
			out = append(out, Queued{Key: append([]byte(nil), it.Key()...), Message: m})
		}
		return it.Error()
	})
	return out, err
}

// Dequeue takes the messages under keys (from Queued) out of the
// outbox, unsynced: a removal lost in a crash sends the message again,
// with its id.
func (d *Disk) Dequeue(ctx context.Context, keys [][]byte) error {
	if len(keys) == 0 {
		return nil
	}
	p := &pending{dequeue: keys, done: make(chan struct{})}
	if err := d.enqueue(ctx, p); err != nil {
		return err
	}
	<-p.done
	return p.err
}

// OutboxReady is signalled when messages join the outbox (one signal may
// stand for several commits).
func (d *Disk) OutboxReady() <-chan struct{} { return d.ready }

// OutboxBytes is what the outbox holds, as last committed.
func (d *Disk) OutboxBytes() int64 { return d.queueBytes.Load() }

func (d *Disk) signalOutbox() {
	select {
	case d.ready <- struct{}{}:
	default:
	}
}

// MessageID is the id of the i-th message the request with correlation
// data corr and response topic topic published: the same at every run of
// the request and every send of the message.
func MessageID(corr, topic string, i int) string {
	h := sha256.New()
	h.Write([]byte(corr))
	h.Write([]byte{0})
	h.Write([]byte(topic))
	h.Write([]byte{0})
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(i)))
	return hex.EncodeToString(h.Sum(nil)[:16])
}
