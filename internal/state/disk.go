package state

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/logx"
)

// DiskConfig configures a Disk store.
type DiskConfig struct {
	// Dir is the store's folder, made if missing. One process at a time
	// may open it.
	Dir string
	// Limits bound the store; zero fields take the defaults.
	Limits Limits
	// Clock is what expiry and versions are read from; nil: the system's.
	Clock clock.Clock
	// Logger gets the store's own notes (a sweep that failed); nil
	// discards them.
	Logger *slog.Logger
	// SweepEvery is how often expired keys and outcomes are removed;
	// default 1 s.
	SweepEvery time.Duration
}

// Disk is the embedded state store: a Pebble database in a folder.
// Reads go to Pebble at once; commits go through one writer goroutine
// (commit.go), which checks their conditions in order against what is
// committed and what its batch has applied so far, and syncs each batch
// once.
type Disk struct {
	db     *pebble.DB
	limits Limits
	clock  clock.Clock
	log    *slog.Logger
	dir    string

	queue chan *pending // the writer's
	w     *writer

	// mu guards closed against the reads: Close waits for the reads
	// under way (Pebble must not be read once closed).
	mu      sync.RWMutex
	closed  bool
	stopped chan struct{} // closed when the writer has returned

	observers observers
	stats     diskStats
	prior     priorOutcomes // the outcomes kept before Open (prior.go); read only

	// The outbox (outbox.go): ready is signalled when messages join it;
	// queueBytes is what it holds, as last committed.
	ready      chan struct{}
	queueBytes atomic.Int64

	// beforeBatch, when set (by tests), runs on the writer before each
	// batch; afterSweep after each sweep written, told whether the sweep
	// left the writer behind.
	beforeBatch func()
	afterSweep  func(behind bool)
}

var _ Backend = (*Disk)(nil)

// InUseError is OpenDisk's error when another process holds the folder.
type InUseError struct{ Dir string }

func (e *InUseError) Error() string {
	return fmt.Sprintf("state folder %s is in use by another process (another cmdhost serving it?): give each host its own --state-dir", e.Dir)
}

// OpenDisk opens (or makes) the store in cfg.Dir.
func OpenDisk(cfg DiskConfig) (*Disk, error) {
	if cfg.Dir == "" {
		return nil, errors.New("state: no folder given")
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("state folder: %w", err)
	}
	log := logx.OrDiscard(cfg.Logger)
	opts := &pebble.Options{
		Logger:       pebbleLogger{log},
		Cache:        nil, // Pebble's default: 8 MiB of block cache
		MemTableSize: 4 << 20,
	}
	// Bloom filters on every level: most lookups are of keys that are not
	// there (each new request's outcome, on the receiving path), which
	// without them read and decompress a data block of every table.
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	db, err := pebble.Open(cfg.Dir, opts)
	if err != nil {
		if isLockHeld(err) {
			return nil, &InUseError{Dir: cfg.Dir}
		}
		return nil, fmt.Errorf("state folder %s: %w", cfg.Dir, err)
	}
	d := &Disk{db: db, limits: cfg.Limits.WithDefaults(), clock: clock.OrSystem(cfg.Clock), log: log, dir: cfg.Dir,
		queue: make(chan *pending, queueLen), stopped: make(chan struct{}), ready: make(chan struct{}, 1)}
	if d.prior, err = notePriorOutcomes(db); err != nil {
		_ = db.Close()
		return nil, err
	}
	every := cfg.SweepEvery
	if every <= 0 {
		every = time.Second
	}
	if d.w, err = newWriter(d, every); err != nil {
		_ = db.Close()
		return nil, err
	}
	go d.w.run()
	return d, nil
}

// isLockHeld reports whether Pebble refused a folder another process
// holds: it says so in its error ("lock held by current process", or
// the flock's "resource temporarily unavailable").
func isLockHeld(err error) bool {
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) || strings.Contains(err.Error(), "lock held")
}

// Dir is the store's folder.
func (d *Disk) Dir() string { return d.dir }

// Limits are the store's bounds, defaults resolved.
func (d *Disk) Limits() Limits { return d.limits }

// read runs f on the database unless the store is closed.
func (d *Disk) read(f func(db *pebble.DB) error) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return fmt.Errorf("%w: the store is closed", ErrUnavailable)
	}
	return f(d.db)
}

// Get returns the item under key in ns.
func (d *Disk) Get(_ context.Context, ns string, key []byte) (Item, error) {
	if err := CheckNamespace(ns); err != nil {
		return Item{}, err
	}
	if err := d.limits.CheckKey(key); err != nil {
		return Item{}, err
	}
	var it Item
	err := d.read(func(db *pebble.DB) error {
		v, closer, err := db.Get(itemKey(ns, key))
		if errors.Is(err, pebble.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return unavailable("reading a key", err)
		}
		defer closer.Close()
		got, err := decodeItem(key, v)
		if err != nil {
			return unavailable("reading a key", err)
		}
		it = copyItem(got)
		return nil
	})
	if err != nil {
		return Item{}, err
	}
	if expired(&it, d.clock.Now()) {
		return Item{}, ErrNotFound
	}
	return it, nil
}

// copyItem copies what an item holds out of Pebble's buffers.
func copyItem(it Item) Item {
	it.Key = append([]byte(nil), it.Key...)
	it.Value = append([]byte{}, it.Value...)
	return it
}

// expired reports whether it has expired at now.
func expired(it *Item, now time.Time) bool { return !it.Expires.IsZero() && !now.Before(it.Expires) }

// List returns up to limit keys of ns that start with prefix and sort
// after after.
func (d *Disk) List(_ context.Context, ns string, prefix, after []byte, limit int) ([][]byte, bool, error) {
	if err := CheckNamespace(ns); err != nil {
		return nil, false, err
	}
	if limit <= 0 {
		return nil, false, fmt.Errorf("%w: a list of %d keys", ErrInvalid, limit)
	}
	base := nsPrefix(ns)
	lower := append(append([]byte(nil), base...), prefix...)
	upper := prefixEnd(lower)
	if len(after) > 0 {
		if from := append(append(append([]byte(nil), base...), after...), 0); string(from) > string(lower) {
			lower = from // the first key after `after`
		}
	}
	now := d.clock.Now()
	var keys [][]byte
	more := false
	err := d.read(func(db *pebble.DB) error {
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			return unavailable("listing keys", err)
		}
		defer it.Close()
		for ok := it.First(); ok; ok = it.Next() {
			v, err := it.ValueAndErr()
			if err != nil {
				return unavailable("listing keys", err)
			}
			item, err := decodeItem(nil, v)
			if err != nil || expired(&item, now) {
				continue
			}
			if len(keys) == limit {
				more = true
				break
			}
			keys = append(keys, append([]byte(nil), it.Key()[len(base):]...))
		}
		if err := it.Error(); err != nil {
			return unavailable("listing keys", err)
		}
		return nil
	})
	return keys, more, err
}

// Outcome returns the outcome recorded under id while it is kept.
func (d *Disk) Outcome(_ context.Context, id OutcomeID) ([]byte, bool, error) {
	h := outcomeHash(id)
	var out []byte
	found := false
	err := d.read(func(db *pebble.DB) error {
		v, closer, err := db.Get(outcomeKey(h))
		if errors.Is(err, pebble.ErrNotFound) {
			return nil
		}
		if err != nil {
			return unavailable("reading an outcome", err)
		}
		defer closer.Close()
		o, err := decodeOutcome(v)
		if err != nil {
			return unavailable("reading an outcome", err)
		}
		if o.ID != id || !d.clock.Now().Before(o.KeepUntil) {
			return nil
		}
		out, found = append([]byte{}, o.Value...), true
		return nil
	})
	return out, found, err
}

// Usage returns what ns holds (expired keys not yet swept included).
func (d *Disk) Usage(_ context.Context, ns string) (Usage, error) {
	if err := CheckNamespace(ns); err != nil {
		return Usage{}, err
	}
	var u Usage
	err := d.read(func(db *pebble.DB) error {
		v, closer, err := db.Get(usageKey(ns))
		if errors.Is(err, pebble.ErrNotFound) {
			return nil
		}
		if err != nil {
			return unavailable("reading a namespace's usage", err)
		}
		defer closer.Close()
		u = decodeUsage(v)
		return nil
	})
	return u, err
}

// Namespaces returns every namespace that holds keys, with its usage.
func (d *Disk) Namespaces(context.Context) (map[string]Usage, error) {
	out := map[string]Usage{}
	err := d.read(func(db *pebble.DB) error {
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{tagUsage}, UpperBound: []byte{tagUsage + 1}})
		if err != nil {
			return unavailable("listing namespaces", err)
		}
		defer it.Close()
		for ok := it.First(); ok; ok = it.Next() {
			if u := decodeUsage(it.Value()); u.Keys > 0 {
				out[string(it.Key()[1:])] = u
			}
		}
		return it.Error()
	})
	return out, err
}

// Close stops the writer (commits queued are refused, the batch under
// way finishes) and closes the database.
func (d *Disk) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	close(d.queue)
	d.mu.Unlock()
	<-d.stopped
	return d.db.Close()
}

// pebbleLogger sends Pebble's notes to the host's log at debug (its info
// lines are its life cycle: WALs found, compactions), errors at error.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...any) {
	l.log.Debug("state store: " + fmt.Sprintf(format, args...))
}

func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.Error("state store: " + fmt.Sprintf(format, args...))
}

func (l pebbleLogger) Fatalf(format string, args ...any) {
	l.log.Error("state store: fatal: " + fmt.Sprintf(format, args...))
	panic(fmt.Sprintf(format, args...)) // Pebble's contract: Fatalf does not return
}
