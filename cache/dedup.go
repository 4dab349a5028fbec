package cache

import (
	"container/heap"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/setting"
)

// DefaultMaxEntries is the hard bound of a DedupStore whose DedupConfig leaves
// MaxEntries at zero.
const DefaultMaxEntries = 100_000

// ErrFull is returned by DedupStore.Begin for a new key when the store holds
// MaxEntries live entries. The host answers such a request with 503: refusing
// a new request is recoverable (the invoker may retry), whereas forgetting an
// old one early could execute a non-idempotent command twice.
var ErrFull = errors.New("cache: dedup store is full: new requests get 503 until entries expire")

// How a full store makes room: entries have two deadlines. protectUntil is
// the latest expiry of the request's receipts: before it, a duplicate may
// still arrive while the invoker waits, so the entry is never removed (a
// non-idempotent command must not run twice). keepUntil (>= protectUntil)
// extends that for late duplicates and cancels (the executor keeps a
// terminal state one request window longer, so a cancel or duplicate that
// arrives just after the expiry still finds it). Between the two the entry
// is a terminal entry of bounded memory: when the store is full, the
// completed entry whose protectUntil passed first is evicted to admit a new
// key.
// Entries in progress, and entries still protected, are never evicted.

// Key identifies a request for deduplication: its correlation data and
// response topic. PROTOCOL.md: the same correlation data with another
// response topic is a different request (the broker can authorize topics, so
// one invoker cannot collide with another's requests by reusing correlation
// data).
type Key struct{ Correlation, ResponseTopic string }

// DedupConfig configures a DedupStore. NewDedupStore copies it, so changing a
// config after the call has no effect on the store.
type DedupConfig struct {
	// MaxEntries is the hard bound on the entries held; zero or less means
	// DefaultMaxEntries. When the store is full (after sweeping entries whose
	// keep-until has passed), Begin returns ErrFull for a new key: the host
	// answers 503 rather than forget anything early.
	MaxEntries int
	// MaxPerInvoker bounds the live entries of one invoker (as named to
	// BeginFrom), so that one client cannot fill the store for everyone;
	// 0: a tenth of MaxEntries (at least 1), NoBound: no bound but
	// MaxEntries. Over it, BeginFrom refuses the invoker's new keys with
	// ErrInvokerFull (see dedup_share.go).
	MaxPerInvoker int
	// Clock is the clock; nil means the system clock. Tests inject a
	// fake one (testkit.Clock).
	Clock clock.Clock
}

// NoBound, in a field that bounds something, turns the bound off
// (package setting's Off).
const NoBound = setting.Off

// defaultInvokerShare is the part of the store an invoker may hold when
// DedupConfig.MaxPerInvoker is not set: ten invokers at their bound fill it.
const defaultInvokerShare = 10

// withDefaults resolves the zero fields (package setting's rule).
func (c DedupConfig) withDefaults() DedupConfig {
	if c.MaxEntries <= 0 {
		c.MaxEntries = DefaultMaxEntries
	}
	c.MaxPerInvoker = setting.Or(c.MaxPerInvoker, max(1, c.MaxEntries/defaultInvokerShare))
	c.Clock = clock.OrSystem(c.Clock)
	return c
}

// Entry is the record of one request in a DedupStore: a placeholder while the
// first receipt executes, then the stored outcome.
//
// Done, Value, Expiry and Key are safe to call from any goroutine.
type Entry[V any] struct {
	key    Key
	expiry time.Time     // the first receipt's request expiry; immutable
	done   chan struct{} // closed by the first Complete
	value  V             // written once under owner.mu before done is closed

	// The fields below are guarded by owner.mu.
	owner     *DedupStore[V]
	keepUntil time.Time // >= protectUntil
	// protectUntil is the latest request expiry recorded for this key;
	// the entry is never removed before it.
	protectUntil time.Time
	index        int // position in owner.heap; -1 once removed from the store
	// pos is the entry's position in the store's terminal heap
	// (pos[inStore]) and in its share's (pos[inShare]); -1 when not in it.
	pos       [2]int
	completed bool
	// size is what the stored outcome counts against ByteBound.MaxBytes, 0
	// until it is stored.
	size int64
	// share counts the entry against its first receipt's invoker; nil when
	// none was named or there is no per-invoker bound.
	share *invokerShare[V]
}

// Done returns a channel that is closed when the first receipt of the request
// has been completed. A waiter should also select on its own request's
// deadline: if the executor lost track of the request, Done is never closed
// (see DedupStore.Begin).
func (e *Entry[V]) Done() <-chan struct{} { return e.done }

// Value returns the stored outcome. It is valid once Done is closed; before
// that it returns the zero V.
func (e *Entry[V]) Value() V {
	select {
	case <-e.done:
		return e.value // written before close(done): the close orders the read
	default:
		var zero V
		return zero
	}
}

// Expiry returns the request expiry given to the Begin that created the
// entry. The store may keep the entry longer (a duplicate with a later expiry,
// or the keepUntil of Complete), never shorter.
func (e *Entry[V]) Expiry() time.Time { return e.expiry }

// Key returns the key of the request.
func (e *Entry[V]) Key() Key { return e.key }

// DedupStore is the strict deduplication store of the executor. It records
// every request from its first receipt, as a placeholder, so that a
// duplicate (same Key) arriving while the request runs or after it
// completed is answered with the same outcome and never executed a second
// time.
//
// Its rule, which non-idempotent commands rely on: an entry is never
// removed before the expiry of its request. So the store never evicts an
// entry in progress or one whose request has not expired: entries leave when
// their keep-until time has passed, a full store evicts only completed
// entries kept past their request's expiry (see protectUntil), and when none
// is left a new key is refused with ErrFull (503). That is
// also why this store is kept apart from the reuse cache, which may drop
// replies at any time.
//
// Expired entries are swept lazily, by Begin (only the ones that are due,
// taken from a min-heap of keep-until times) or by Sweep, so no goroutine or
// timer is needed: Begin and Complete cost O(log n) amortized.
//
// Concurrency: one mutex guards the map and the heap. Every operation under
// it is a map access plus O(log n) heap work, so critical sections are short;
// Begin always writes (it sweeps and inserts), so a RWMutex would gain nothing,
// and sharding would split the hard bound and the heap. The store never calls
// user code under its lock: the clock is read before locking, and callers
// wait for an outcome on the entry's Done channel, outside the lock.
type DedupStore[V any] struct {
	max        int
	perInvoker int
	maxBytes   int64
	size       func(V) int64
	digest     func(V) V
	now        func() time.Time

	mu      sync.Mutex
	entries map[Key]*Entry[V]
	heap    keepHeap[V] // the same entries, ordered by keepUntil
	// terminal holds the completed entries, ordered by protectUntil: the
	// candidates for eviction when the store is full.
	terminal protectHeap[V] // slot inStore
	// shares counts each invoker's entries (dedup_share.go).
	shares  map[string]*invokerShare[V]
	evicted int
	// bytes is the sum of the held entries' sizes; digested counts the
	// outcomes kept as their digest (dedup_bytes.go).
	bytes    int64
	digested int64
	// last is the latest clock reading seen under mu. Readings are taken
	// before locking, so a goroutine may arrive with an older one than a
	// goroutine that already swept; clamping to last keeps the store's time
	// monotonic, so an entry that one caller saw expire is absent for all.
	last time.Time
}

// NewDedupStore returns an empty store configured by cfg, bounded by
// entries only (see NewBoundedDedupStore).
func NewDedupStore[V any](cfg DedupConfig) *DedupStore[V] {
	return NewBoundedDedupStore(cfg, ByteBound[V]{})
}

// NewBoundedDedupStore returns an empty store configured by cfg whose
// outcomes are also bounded in bytes by b (dedup_bytes.go).
func NewBoundedDedupStore[V any](cfg DedupConfig, b ByteBound[V]) *DedupStore[V] {
	cfg = cfg.withDefaults()
	s := &DedupStore[V]{max: cfg.MaxEntries, perInvoker: cfg.MaxPerInvoker, now: cfg.Clock.Now,
		maxBytes: b.MaxBytes, size: b.Size, digest: b.Digest,
		entries: map[Key]*Entry[V]{}, shares: map[string]*invokerShare[V]{}}
	if s.maxBytes > 0 && (s.size == nil || s.digest == nil) {
		panic("cache: ByteBound.MaxBytes needs Size and Digest")
	}
	return s
}

// Begin records the receipt of a request that expires at expiry.
//
// first reports whether this is the first receipt: the caller must then
// execute the request and later call Complete with e. Otherwise e is the
// existing entry of the original request, either in progress (e.Done() not
// yet closed: wait for it, do not execute) or completed (closed; e.Value() is
// the stored outcome, to be sent again).
//
// An entry counts as absent once its keep-until time has passed (the request
// expiry, possibly extended by a duplicate or by Complete): a later request
// with the same key is then a new first receipt. The need for deduplication
// ends when the request times out, since later duplicates are dead on arrival
// at the invoker; tracking a key forever is impossible anyway.
//
// An entry that was never completed is also kept until its keep-until time,
// and then a new receipt is a first receipt again. That is the case where an
// executor lost track of a request (it never called Complete): its waiters
// stay blocked on Done, so they must also watch their own deadline.
//
// A duplicate whose expiry is later than the entry's keep-until extends it:
// a request is tracked until its timeout, and a duplicate
// re-sent with a fresh expiry must not run again once the first copy's
// expiry passes.
//
// If the store holds MaxEntries live entries, a completed entry whose
// request expiry has passed is evicted to make room (the oldest first);
// when there is none, a new key gets ErrFull, while a duplicate of a held
// key is still answered from its entry.
//
// Begin names no invoker: its entries count against MaxEntries only.
func (s *DedupStore[V]) Begin(key Key, expiry time.Time) (e *Entry[V], first bool, err error) {
	return s.BeginFrom("", key, expiry)
}

// BeginFrom is Begin for a request from invoker: a first receipt counts
// against the invoker's share of MaxPerInvoker entries until the entry
// leaves the store. When the share is full, the invoker's completed entry
// whose request expiry passed first is evicted to make room; when there is
// none, a new key gets an error wrapping ErrInvokerFull, while duplicates
// (from any invoker) are still answered. A duplicate counts against
// nobody's share: the entry stays with its first receipt's invoker. An
// empty invoker is Begin.
func (s *DedupStore[V]) BeginFrom(invoker string, key Key, expiry time.Time) (e *Entry[V], first bool, err error) {
	now := s.now() // before locking: never call user code under the lock
	s.mu.Lock()
	defer s.mu.Unlock()
	now = s.advance(now)
	s.sweepLocked(now)
	if e := s.entries[key]; e != nil {
		if expiry.After(e.keepUntil) {
			e.keepUntil = expiry
			heap.Fix(&s.heap, e.index)
		}
		if expiry.After(e.protectUntil) {
			e.protectUntil = expiry
			if e.pos[inStore] >= 0 {
				heap.Fix(&s.terminal, e.pos[inStore])
			}
			if e.pos[inShare] >= 0 {
				heap.Fix(&e.share.terminal, e.pos[inShare])
			}
		}
		return e, false, nil
	}
	if sh := s.shareLocked(invoker); sh != nil && sh.live >= s.perInvoker && !s.evictShareLocked(sh, now) {
		return nil, false, fmt.Errorf("%w (%d entries per invoker): its new requests get 503 until its entries expire", ErrInvokerFull, s.perInvoker)
	}
	if len(s.entries) >= s.max && !s.evictLocked(now) {
		return nil, false, ErrFull
	}
	e = &Entry[V]{key: key, expiry: expiry, done: make(chan struct{}), owner: s,
		keepUntil: expiry, protectUntil: expiry, pos: [2]int{-1, -1}}
	s.entries[key] = e
	heap.Push(&s.heap, e)
	s.joinLocked(e, invoker)
	return e, true, nil
}

// Lookup returns the entry of key, nil when the store holds none. It
// changes nothing: a host that is stopping answers a duplicate from it
// without admitting anything new.
func (s *DedupStore[V]) Lookup(key Key) *Entry[V] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entries[key]
}

// Complete stores v as the outcome of the first receipt e and wakes everyone
// waiting on e.Done(). Every outcome is stored, errors included: a duplicate
// must get the same response as the original.
//
// keepUntil may extend how long the entry is kept, never shorten it below the
// request's expiry: an idempotent reply may be deduplicated until the later
// of its request's expiry and its reply's TTL. Pass the zero time to keep
// the entry until its expiry only, as a non-idempotent command must.
//
// Completing twice is a no-op: the first outcome wins, so a late result after
// another outcome was stored cannot change what duplicates see. If the entry
// has already expired (the executor finished after the request's keep-until),
// waiters are still released with v but the entry is not kept any longer. An
// entry created by another store is completed in that store.
//
// With a ByteBound, an outcome that does not fit (after evicting
// completed entries whose request expired, as a full store does) is kept
// as its Digest: every duplicate, those waiting now included, gets the
// digest, never a second run (dedup_bytes.go).
func (s *DedupStore[V]) Complete(e *Entry[V], v V, keepUntil time.Time) {
	if e == nil || e.owner == nil {
		return
	}
	s = e.owner         // the store whose map and heap hold e
	size := s.sizeOf(v) // user code: before locking
	digested := false
	var now time.Time
	for {
		now = s.now()
		s.mu.Lock()
		if e.completed {
			s.mu.Unlock()
			return
		}
		now = s.advance(now)
		if digested || e.index < 0 || now.After(e.keepUntil) || s.roomLocked(e.share, size, now) {
			break // with s.mu held
		}
		// Over MaxBytes: keep the digest instead. Digest is user code, so
		// it runs unlocked; the loop takes the lock again and checks
		// that no other Complete won meanwhile.
		s.mu.Unlock()
		v, digested = s.digest(v), true
		size = s.sizeOf(v)
	}
	defer s.mu.Unlock()
	e.completed = true
	e.value = v
	close(e.done)
	if digested {
		s.digested++
	}
	if e.index < 0 { // already swept: lost track, or expired while running
		return
	}
	if now.After(e.keepUntil) { // due: leave now, as a sweep would
		s.removeLocked(e)
		return
	}
	if keepUntil.After(e.keepUntil) {
		e.keepUntil = keepUntil
		heap.Fix(&s.heap, e.index)
	}
	e.size = size
	s.bytes += size
	heap.Push(&s.terminal, e)
	if e.share != nil {
		e.share.bytes += size
		heap.Push(&e.share.terminal, e)
	}
}

// Evicted returns how many terminal entries were evicted to make room.
func (s *DedupStore[V]) Evicted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.evicted
}

// evictLocked removes the completed entry whose request expiry passed
// first, if its expiry is before now, and reports whether it did. Called
// with s.mu held.
func (s *DedupStore[V]) evictLocked(now time.Time) bool {
	if s.terminal.Len() == 0 || !now.After(s.terminal.es[0].protectUntil) {
		return false
	}
	s.removeLocked(s.terminal.es[0])
	s.evicted++
	return true
}

// Len returns the number of entries held, including expired ones not yet
// swept.
func (s *DedupStore[V]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// Sweep removes the entries whose keep-until time has passed and returns how
// many it removed. Begin sweeps by itself; Sweep only returns memory sooner
// when no requests arrive.
func (s *DedupStore[V]) Sweep() int {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sweepLocked(s.advance(now))
}

// advance clamps now to the latest reading seen and records it. Called with
// s.mu held.
func (s *DedupStore[V]) advance(now time.Time) time.Time {
	if now.Before(s.last) {
		return s.last
	}
	s.last = now
	return now
}

// sweepLocked removes the entries due at now: those whose keep-until is
// strictly before now. At the keep-until instant itself the entry is still
// kept: the rule is never early, late is harmless. Each entry is popped once,
// so the cost is O(log n) amortized per entry. Called with s.mu held.
func (s *DedupStore[V]) sweepLocked(now time.Time) int {
	n := 0
	for len(s.heap) > 0 && now.After(s.heap[0].keepUntil) {
		e := heap.Pop(&s.heap).(*Entry[V])
		s.forgetLocked(e)
		n++
	}
	return n
}

// removeLocked removes e from the store. Called with s.mu held.
func (s *DedupStore[V]) removeLocked(e *Entry[V]) {
	heap.Remove(&s.heap, e.index)
	s.forgetLocked(e)
}

// forgetLocked removes e, already out of the keep-until heap, from
// everything else that holds it. Called with s.mu held.
func (s *DedupStore[V]) forgetLocked(e *Entry[V]) {
	if e.pos[inStore] >= 0 {
		heap.Remove(&s.terminal, e.pos[inStore])
	}
	s.leaveLocked(e)
	delete(s.entries, e.key)
	s.bytes -= e.size
	e.size = 0
}

// keepHeap is a container/heap min-heap of entries by keepUntil; each entry
// knows its index so that Complete and Begin can heap.Fix it after extending
// its keep-until time.
type keepHeap[V any] []*Entry[V]

func (h keepHeap[V]) Len() int           { return len(h) }
func (h keepHeap[V]) Less(i, j int) bool { return h[i].keepUntil.Before(h[j].keepUntil) }
func (h keepHeap[V]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *keepHeap[V]) Push(x any) {
	e := x.(*Entry[V])
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *keepHeap[V]) Pop() any {
	old := *h
	n := len(old) - 1
	e := old[n]
	old[n] = nil // let the entry be collected
	e.index = -1
	*h = old[:n]
	return e
}

// The heaps of completed entries an entry can be in: the store's and its
// invoker's share's (Entry.pos).
const (
	inStore = iota
	inShare
)

// protectHeap is a min-heap of completed entries by protectUntil, the
// candidates for eviction; slot says which Entry.pos it keeps up to date.
type protectHeap[V any] struct {
	es   []*Entry[V]
	slot int
}

func (h *protectHeap[V]) Len() int { return len(h.es) }
func (h *protectHeap[V]) Less(i, j int) bool {
	return h.es[i].protectUntil.Before(h.es[j].protectUntil)
}
func (h *protectHeap[V]) Swap(i, j int) {
	h.es[i], h.es[j] = h.es[j], h.es[i]
	h.es[i].pos[h.slot] = i
	h.es[j].pos[h.slot] = j
}

func (h *protectHeap[V]) Push(x any) {
	e := x.(*Entry[V])
	e.pos[h.slot] = len(h.es)
	h.es = append(h.es, e)
}

func (h *protectHeap[V]) Pop() any {
	n := len(h.es) - 1
	e := h.es[n]
	h.es[n] = nil // let the entry be collected
	e.pos[h.slot] = -1
	h.es = h.es[:n]
	return e
}
