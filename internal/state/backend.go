package state

import (
	"context"
	"fmt"
	"time"
)

// Backend is a state store: Disk (the embedded default), or another that
// keeps the same rules (every commit atomic and durable before it
// returns; reads see only committed writes).
type Backend interface {
	// Get returns the item under key in namespace ns: ErrNotFound when
	// there is none or it expired.
	Get(ctx context.Context, ns string, key []byte) (Item, error)
	// List returns, in byte order, up to limit keys of ns that start with
	// prefix and sort after after ("" from the first), and whether more
	// follow.
	List(ctx context.Context, ns string, prefix, after []byte, limit int) (keys [][]byte, more bool, err error)
	// Commit applies c's ops and records its outcome, all or nothing,
	// and returns once that is durable: a result per op, or an error
	// wrapping ErrConflict (a condition failed, *ConflictError), ErrQuota,
	// ErrFenced, ErrTooLarge, ErrInvalid or ErrUnavailable, with nothing
	// applied; or, from a store on another machine that stopped
	// answering, ErrUnknown (it may have applied).
	Commit(ctx context.Context, c *Commit) ([]Result, error)
	// Outcome returns the outcome recorded under id, while it is kept.
	Outcome(ctx context.Context, id OutcomeID) ([]byte, bool, error)
	// Usage returns what namespace ns holds.
	Usage(ctx context.Context, ns string) (Usage, error)
	// Close closes the store; later calls return ErrUnavailable.
	Close() error
}

// Item is a key's value and what the store knows of it.
type Item struct {
	Key   []byte
	Value []byte
	// Version is the key's version: a number the store gives each write,
	// greater than any it gave before. 0 for a key this call staged and
	// has not committed (Txn).
	Version uint64
	// Expires is when the key goes; zero: never.
	Expires time.Time
	// Fence is the fencing token the key was last written with (the
	// Azure IoT Operations state store's __ft, an HLC); "" for none.
	Fence string
}

// OpKind is what an op does.
type OpKind uint8

// The ops.
const (
	OpSet OpKind = iota + 1
	OpDelete
)

// Op is one write of a commit.
type Op struct {
	Kind  OpKind
	NS    string
	Key   []byte
	Value []byte        // OpSet
	TTL   time.Duration // OpSet: the key expires this long after the commit; 0: never
	// If is the condition the key must meet at the commit.
	If Cond
	// Fence, when not "", is a fencing token (an HLC, hlc.Parse): the
	// key's must not be newer, and a set keeps the newer of the two. A
	// key written with one refuses writes without one (ErrFenced) until
	// it is deleted or expires.
	Fence string
	// Quota bounds ns; zero fields take the store's defaults.
	Quota Quota
}

// Cond is what a key must be for an op to apply. The zero Cond always
// holds.
type Cond struct {
	// Absent: the key must not exist.
	Absent bool
	// Version, when not 0, is the version the key must have.
	Version uint64
	// Value, when HasValue, is the value the key must hold (with Absent:
	// absent or holding it).
	Value    []byte
	HasValue bool
}

// IsZero reports whether c always holds (no condition).
func (c Cond) IsZero() bool { return !c.Absent && c.Version == 0 && !c.HasValue }

// OpChecker is a Backend that cannot commit every op the interface
// allows: a store reached through a protocol without compare-and-set or
// transactions (package stateaio, the Azure IoT Operations state store).
// A Txn asks it of each write it stages, so that the handler learns at
// once (its Commit refuses the same ops again).
type OpChecker interface {
	// CheckOp refuses op with an error wrapping ErrInvalid that names
	// the limit; conditional is how many of the writes the call (and
	// its callers) staged before it carry a condition.
	CheckOp(op Op, conditional int) error
}

// holds checks c against the key's current item (nil: absent) and says
// why not.
func (c Cond) holds(cur *Item) (bool, string) {
	switch {
	case c.Absent && c.HasValue:
		if cur != nil && string(cur.Value) != string(c.Value) {
			return false, "the key holds another value"
		}
	case c.Absent:
		if cur != nil {
			return false, "the key exists"
		}
	case c.HasValue:
		if cur == nil {
			return false, "the key does not exist"
		}
		if string(cur.Value) != string(c.Value) {
			return false, "the key holds another value"
		}
	}
	if c.Version != 0 {
		if cur == nil {
			return false, fmt.Sprintf("the key does not exist (expected version %d)", c.Version)
		}
		if cur.Version != c.Version {
			return false, fmt.Sprintf("the version is %d, not %d", cur.Version, c.Version)
		}
	}
	return true, ""
}

// Commit is what one call (or one protocol request) writes, applied all
// or nothing.
type Commit struct {
	Ops []Op
	// Outcome, when set, is recorded with the ops (a non-idempotent
	// request's reply, found again by Backend.Outcome).
	Outcome *Outcome
	// After, when not 0, is a version the commit's versions must follow
	// (the Azure IoT Operations protocol's rule: a write's version is
	// later than its request's timestamp).
	After uint64
	// Messages, when set, join the outbox with the ops (outbox.go): the
	// messages a non-idempotent call published, sent once it committed.
	Messages []Message
}

// Message is a message in the outbox: its id (the same at every send)
// and its body, which the store keeps as it is.
type Message struct {
	ID   string
	Body []byte
	// NS is the namespace of the plugin that published it: the Redis
	// outbox keeps a commit's messages in the slot of its namespace
	// (cache.RedisOutbox); the embedded store's outbox is one.
	NS string
}

// Result is what one op did.
type Result struct {
	// Existed: the key existed before the op (a delete removed it).
	Existed bool
	// Version is the key's version after a set.
	Version uint64
}

// OutcomeID identifies a request's outcome: its correlation data and
// response topic (the dedup key).
type OutcomeID struct{ Correlation, ResponseTopic string }

// Outcome is a request's outcome as a commit records it.
type Outcome struct {
	ID    OutcomeID
	Value []byte
	// KeepUntil is when it may go.
	KeepUntil time.Time
}

// Usage is what a namespace holds.
type Usage struct {
	Keys  int64
	Bytes int64 // keys plus values
}

// Quota bounds a namespace; a zero field takes the store's default.
type Quota struct {
	MaxKeys  int64
	MaxBytes int64
}

// Or returns q with its zero fields from d.
func (q Quota) Or(d Quota) Quota {
	if q.MaxKeys <= 0 {
		q.MaxKeys = d.MaxKeys
	}
	if q.MaxBytes <= 0 {
		q.MaxBytes = d.MaxBytes
	}
	return q
}

// Limits bound a store.
type Limits struct {
	MaxKeyBytes   int   // a key; default DefaultMaxKeyBytes
	MaxValueBytes int   // a value; default DefaultMaxValueBytes
	MaxTotalBytes int64 // every namespace's keys and values; default DefaultMaxTotalBytes
	// Namespace is a namespace's default quota (DefaultNamespaceKeys,
	// DefaultNamespaceBytes).
	Namespace Quota
	// MaxCommitOps and MaxCommitBytes bound one commit (a call's writes
	// and messages): DefaultMaxCommitOps, DefaultMaxCommitBytes.
	MaxCommitOps   int
	MaxCommitBytes int
	// MaxOutboxBytes bounds the messages waiting in the outbox;
	// DefaultMaxOutboxBytes.
	MaxOutboxBytes int64
}

// The default bounds.
const (
	DefaultMaxKeyBytes    = 1 << 10
	DefaultMaxValueBytes  = 1 << 20
	DefaultMaxTotalBytes  = 1 << 30
	DefaultNamespaceKeys  = 100_000
	DefaultNamespaceBytes = 64 << 20
	DefaultMaxCommitOps   = 1000
	DefaultMaxCommitBytes = 8 << 20
	DefaultMaxOutboxBytes = 64 << 20
	// MaxNamespaceBytes bounds a namespace's name.
	MaxNamespaceBytes = 255
)

// WithDefaults returns l with its zero fields set to the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxKeyBytes <= 0 {
		l.MaxKeyBytes = DefaultMaxKeyBytes
	}
	if l.MaxValueBytes <= 0 {
		l.MaxValueBytes = DefaultMaxValueBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	l.Namespace = l.Namespace.Or(Quota{MaxKeys: DefaultNamespaceKeys, MaxBytes: DefaultNamespaceBytes})
	if l.MaxCommitOps <= 0 {
		l.MaxCommitOps = DefaultMaxCommitOps
	}
	if l.MaxCommitBytes <= 0 {
		l.MaxCommitBytes = DefaultMaxCommitBytes
	}
	if l.MaxOutboxBytes <= 0 {
		l.MaxOutboxBytes = DefaultMaxOutboxBytes
	}
	return l
}

// CheckNamespace checks a namespace's name: 1 to MaxNamespaceBytes bytes,
// no NUL (the byte that ends it in the store's keys).
func CheckNamespace(ns string) error {
	if ns == "" || len(ns) > MaxNamespaceBytes {
		return fmt.Errorf("%w: a namespace is 1 to %d bytes, not %d", ErrInvalid, MaxNamespaceBytes, len(ns))
	}
	for i := 0; i < len(ns); i++ {
		if ns[i] == 0 {
			return fmt.Errorf("%w: namespace %q holds a NUL byte", ErrInvalid, ns)
		}
	}
	return nil
}

// CheckKey checks a key against l: 1 to MaxKeyBytes bytes.
func (l Limits) CheckKey(key []byte) error {
	if len(key) == 0 {
		return fmt.Errorf("%w: an empty key", ErrInvalid)
	}
	if len(key) > l.MaxKeyBytes {
		return fmt.Errorf("%w: a key of %d bytes is over the bound of %d", ErrTooLarge, len(key), l.MaxKeyBytes)
	}
	return nil
}

// checkValue checks a value against l.
func (l Limits) checkValue(v []byte) error {
	if len(v) > l.MaxValueBytes {
		return fmt.Errorf("%w: a value of %d bytes is over the bound of %d", ErrTooLarge, len(v), l.MaxValueBytes)
	}
	return nil
}

// checkOp checks one op's names and sizes.
func (l Limits) checkOp(op *Op) error {
	if err := CheckNamespace(op.NS); err != nil {
		return err
	}
	if err := l.CheckKey(op.Key); err != nil {
		return err
	}
	switch op.Kind {
	case OpSet:
		if op.TTL < 0 {
			return fmt.Errorf("%w: a negative time to live", ErrInvalid)
		}
		return l.checkValue(op.Value)
	case OpDelete:
		return nil
	}
	return fmt.Errorf("%w: op kind %d", ErrInvalid, op.Kind)
}

// itemBytes is what a key and its value count against the quotas.
func itemBytes(key, value []byte) int64 { return int64(len(key) + len(value)) }

// A version is a hybrid logical clock reading: the milliseconds since the
// Unix epoch in its high 48 bits, a counter in its low 16. The store gives
// each write one later than any it gave before and not earlier than its
// clock, so versions both order writes and say when they were made (the
// Azure IoT Operations state store's versions are such timestamps).
const versionCounterBits = 16

// VersionOf makes a version of a time in milliseconds and a counter.
func VersionOf(ms int64, counter uint16) uint64 {
	return uint64(ms)<<versionCounterBits | uint64(counter)
}

// VersionParts splits a version into its milliseconds and counter.
func VersionParts(v uint64) (ms int64, counter uint16) {
	return int64(v >> versionCounterBits), uint16(v)
}

// nextVersion is the version after last, at now, and after after.
func nextVersion(last uint64, now time.Time, after uint64) uint64 {
	v := max(last, after) + 1
	return max(v, VersionOf(now.UnixMilli(), 0))
}
