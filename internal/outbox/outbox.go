// Package outbox sends the messages handlers publish (abi.FnPublish).
//
// Why an outbox: a non-idempotent command's messages ("job done", an
// alarm) must go out exactly when its outcome is recorded, once, whatever
// the broker, the invoker or a kill -9 do. So its messages are not sent
// as the call runs: they are staged in the call's state.Txn and join the
// state store's outbox in the commit of the call's outcome and writes. A
// failed call's never do. A sender reads the outbox in order, publishes
// each message on the executor's connection (QoS 1), and takes out what
// the broker acknowledged; after a crash it sends what was left, again
// (at least once), each message with the id it had (the user property
// cmdhost-message-id, and the CloudEvents id), so that a receiver drops
// what it has already.
//
// The outbox is a Store: the embedded state store's (state.Disk), or,
// with serve --store, a Redis Stream per namespace shared by the host's
// replicas (cache.RedisOutbox), whose messages a replica takes over from
// one that died.
//
// An idempotent command's messages go out as the call runs (a run again
// sends them again: the command said running again is harmless), through
// a bounded queue in memory, in order. So do every command's on a host
// without a state store (serve --state-dir off).
package outbox

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/logx"
	"github.com/cmdhost/cmdhost/internal/ratelog"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// Store keeps the outbox of non-idempotent commands: the embedded state
// store (*state.Disk), or the one in Redis (*cache.RedisOutbox).
type Store interface {
	// Queued returns up to limit messages to send, first in first.
	Queued(ctx context.Context, limit int) ([]state.Queued, error)
	// Dequeue takes the messages under keys (from Queued) out, sent.
	Dequeue(ctx context.Context, keys [][]byte) error
	// OutboxReady is signalled when messages join the outbox.
	OutboxReady() <-chan struct{}
	// OutboxBytes is what the outbox holds.
	OutboxBytes() int64
}

// Config configures an Outbox.
type Config struct {
	// Store keeps the outbox of non-idempotent commands; nil: none (every
	// message goes out at once).
	Store Store
	// Send publishes one message and returns once the broker acknowledged
	// it (rpc.Executor.PublishMessage).
	Send func(ctx context.Context, m rpc.Message) error
	// Idempotent reports whether a command is idempotent.
	Idempotent func(command string) bool
	// ExecutorID names the host in the default CloudEvents source.
	ExecutorID string
	// MaxImmediate bounds the messages waiting to go out at once; beyond
	// it a guest's publish gets ResultLimit. Default 4096.
	MaxImmediate int
	// Logger; nil discards.
	Logger *slog.Logger
}

// Outbox is the engine's wasm.Publisher, and its senders.
type Outbox struct {
	cfg  Config
	log  *slog.Logger
	now  chan queued // the messages going out at once, in order
	stop chan struct{}
	wg   sync.WaitGroup

	sent, dropped, retries atomic.Uint64
	// readFails bounds the warnings of a store that cannot be read (a
	// Redis down for minutes is one line a minute, not one a second).
	readFails ratelog.Limiter
}

// queued is a message on its way: its id and body (encodeBody).
type queued struct {
	id   string
	body []byte
}

// New starts an outbox's senders; Close stops them.
func New(cfg Config) *Outbox {
	if cfg.MaxImmediate <= 0 {
		cfg.MaxImmediate = 4096
	}
	o := &Outbox{cfg: cfg, log: logx.OrDiscard(cfg.Logger), now: make(chan queued, cfg.MaxImmediate), stop: make(chan struct{}),
		readFails: ratelog.Limiter{Interval: time.Minute}}
	o.wg.Add(1)
	go o.sendImmediate()
	if cfg.Store != nil {
		o.wg.Add(1)
		go o.sendStored()
	}
	return o
}

// Close stops the senders; what is still in the store's outbox goes out
// at the next start, what waits in memory is dropped (and counted).
func (o *Outbox) Close() {
	close(o.stop)
	o.wg.Wait()
	o.dropped.Add(uint64(len(o.now)))
}

// Stats are what the outbox sent and dropped.
type Stats struct {
	Sent, Dropped uint64
	// Retries counts the sends that failed and are tried again (the
	// broker did not take the message in time, or is not connected).
	Retries uint64
	// TakenOver counts the messages this host took over from a replica
	// that had read them and not sent them (the outbox in Redis).
	TakenOver uint64
	// Queued is what the store's outbox holds, in bytes.
	Queued int64
}

// Stats returns the counters.
func (o *Outbox) Stats() Stats {
	s := Stats{Sent: o.sent.Load(), Dropped: o.dropped.Load(), Retries: o.retries.Load()}
	if o.cfg.Store != nil {
		s.Queued = o.cfg.Store.OutboxBytes()
		if t, ok := o.cfg.Store.(interface{ TakenOver() uint64 }); ok {
			s.TakenOver = t.TakenOver()
		}
	}
	return s
}

var _ wasm.Publisher = (*Outbox)(nil)

// Publish takes a message a guest published: staged in the call's Txn for
// a non-idempotent command on a host with a store, queued to go out at
// once otherwise.
func (o *Outbox) Publish(ctx context.Context, caller wasm.Caller, m *abi.Message) abi.Result {
	body := encodeBody(caller.Plugin, time.Now(), m)
	tx := state.TxnFrom(ctx)
	if tx != nil && o.cfg.Store != nil && !o.cfg.Idempotent(caller.Request.Command) {
		switch err := tx.Publish(state.PluginNamespace(caller.Plugin), body); {
		case err == nil:
			return abi.ResultOK
		case errors.Is(err, state.ErrQuota):
			return abi.ResultLimit
		case errors.Is(err, state.ErrTooLarge):
			return abi.ResultTooLarge
		default:
			return abi.ResultUnavailable
		}
	}
	select {
	case o.now <- queued{id: newID(), body: body}:
		return abi.ResultOK
	default:
		return abi.ResultLimit
	}
}

// newID is a random message id (a message sent at once).
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// sendImmediate sends the messages that go out at once, in order; a
// message the broker does not take is tried again, a second later, until
// the outbox stops.
func (o *Outbox) sendImmediate() {
	defer o.wg.Done()
	for {
		select {
		case <-o.stop:
			return
		case q := <-o.now:
			for !o.send(q) {
				select {
				case <-o.stop:
					o.dropped.Add(1)
					return
				case <-time.After(time.Second):
				}
			}
		}
	}
}

// sendStored sends the store's outbox, in order, and takes out what went.
func (o *Outbox) sendStored() {
	defer o.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		o.drain()
		select {
		case <-o.stop:
			return
		case <-o.cfg.Store.OutboxReady():
		case <-tick.C:
		}
	}
}

// drain sends what the store's outbox holds until it is empty or a send
// fails (the connection is down: the next tick tries again).
func (o *Outbox) drain() {
	for {
		batch, err := o.cfg.Store.Queued(context.Background(), 256)
		if err != nil {
			if ok, left := o.readFails.Allow(time.Now()); ok {
				o.log.Warn("outbox: reading the messages to send failed; trying again every second", "err", err, "not_logged", left)
			}
			return
		}
		if len(batch) == 0 {
			return
		}
		var done [][]byte
		for _, q := range batch {
			if !o.send(queued{id: q.ID, body: q.Body}) {
				break
			}
			done = append(done, q.Key)
		}
		if err := o.cfg.Store.Dequeue(context.Background(), done); err != nil {
			o.log.Warn("outbox: taking out sent messages failed: they will be sent again, with their ids", "err", err)
			return
		}
		if len(done) < len(batch) {
			return
		}
		select {
		case <-o.stop:
			return
		default:
		}
	}
}

// sendTimeout bounds one send, the broker's acknowledgement included.
const sendTimeout = 10 * time.Second

// send publishes q; false when it should be tried again. A message the
// broker refuses, or that can never be sent, is dropped (logged and
// counted): trying it again would hold every message behind it.
func (o *Outbox) send(q queued) bool {
	m, err := o.message(q)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
		err = o.cfg.Send(ctx, m)
		cancel()
	}
	switch {
	case err == nil:
		o.sent.Add(1)
		return true
	case errors.Is(err, rpc.ErrUndeliverable) || errors.Is(err, errBadBody):
		o.dropped.Add(1)
		o.log.Warn("outbox: a message that cannot be delivered is dropped", "id", q.id, "err", err)
		return true
	}
	o.retries.Add(1)
	return false
}

// message makes the message to send of q.
func (o *Outbox) message(q queued) (rpc.Message, error) {
	plugin, at, m, err := decodeBody(q.body)
	if err != nil {
		return rpc.Message{}, err
	}
	out := rpc.Message{Topic: m.Topic, Payload: m.Payload, ContentType: m.ContentType, UTF8: m.Format == abi.FormatUTF8,
		Expiry: m.Expiry}
	keys := make([]string, 0, len(m.Metadata))
	for k := range m.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.Properties = append(out.Properties, rpc.Property{Key: k, Value: m.Metadata[k]})
	}
	out.Properties = append(out.Properties, rpc.Property{Key: abi.MessageIDProperty, Value: q.id})
	if e := m.Event; e != nil {
		source := e.Source
		if source == "" {
			source = "/cmdhost/" + o.cfg.ExecutorID + "/" + plugin
		}
		out.Properties = append(out.Properties,
			rpc.Property{Key: "specversion", Value: "1.0"},
			rpc.Property{Key: "type", Value: e.Type},
			rpc.Property{Key: "source", Value: source},
			rpc.Property{Key: "id", Value: q.id},
			rpc.Property{Key: "time", Value: at.UTC().Format(time.RFC3339Nano)})
		if e.Subject != "" {
			out.Properties = append(out.Properties, rpc.Property{Key: "subject", Value: e.Subject})
		}
		if e.DataSchema != "" {
			out.Properties = append(out.Properties, rpc.Property{Key: "dataschema", Value: e.DataSchema})
		}
	}
	return out, nil
}

// errBadBody: a body in the outbox that does not decode (it never goes).
var errBadBody = errors.New("outbox: a message that does not decode")

// encodeBody is a message as the outbox keeps it: the plugin that
// published it, when (Unix ns), and the message (abi encoding).
func encodeBody(plugin string, at time.Time, m *abi.Message) []byte {
	b := binary.AppendUvarint(nil, uint64(len(plugin)))
	b = append(b, plugin...)
	b = binary.BigEndian.AppendUint64(b, uint64(at.UnixNano()))
	return abi.AppendMessage(b, m)
}

func decodeBody(b []byte) (plugin string, at time.Time, m *abi.Message, err error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) || len(b)-w-int(n) < 8 {
		return "", time.Time{}, nil, errBadBody
	}
	plugin = string(b[w : w+int(n)])
	rest := b[w+int(n):]
	at = time.Unix(0, int64(binary.BigEndian.Uint64(rest)))
	if m, err = abi.DecodeMessage(rest[8:]); err != nil {
		return "", time.Time{}, nil, fmt.Errorf("%w: %w", errBadBody, err)
	}
	return plugin, at, m, nil
}
