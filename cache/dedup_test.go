package cache

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// newClock returns a clock the test moves by hand.
func newClock() *testkit.Clock { return testkit.NewClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) }

func newStore(t testing.TB, max int) (*DedupStore[string], *testkit.Clock) {
	t.Helper()
	c := newClock()
	return NewDedupStore[string](DedupConfig{MaxEntries: max, Clock: c}), c
}

func key(i int) Key {
	return Key{Correlation: fmt.Sprintf("corr-%d", i), ResponseTopic: "clients/a/resp"}
}

// begin calls Begin and fails the test on an error.
func begin(t *testing.T, s *DedupStore[string], k Key, expiry time.Time) (*Entry[string], bool) {
	t.Helper()
	e, first, err := s.Begin(k, expiry)
	if err != nil {
		t.Fatalf("Begin(%v): %v", k, err)
	}
	if e == nil {
		t.Fatalf("Begin(%v): nil entry", k)
	}
	return e, first
}

func isDone[V any](e *Entry[V]) bool {
	select {
	case <-e.Done():
		return true
	default:
		return false
	}
}

func TestBeginFirstReceipt(t *testing.T) {
	s, c := newStore(t, 0)
	k := key(1)
	expiry := c.Now().Add(5 * time.Second)
	e, first := begin(t, s, k, expiry)
	if !first {
		t.Fatal("first receipt: first = false")
	}
	if isDone(e) {
		t.Fatal("a placeholder must not be done")
	}
	if got := e.Value(); got != "" {
		t.Fatalf("Value before Done = %q, want zero", got)
	}
	if !e.Expiry().Equal(expiry) {
		t.Fatalf("Expiry = %v, want %v", e.Expiry(), expiry)
	}
	if e.Key() != k {
		t.Fatalf("Key = %v, want %v", e.Key(), k)
	}
	if s.Len() != 1 {
		t.Fatalf("Len = %d, want 1", s.Len())
	}
}

func TestDuplicateWhileInProgress(t *testing.T) {
	s, c := newStore(t, 0)
	k := key(1)
	expiry := c.Now().Add(5 * time.Second)
	e, _ := begin(t, s, k, expiry)

	const waiters = 3
	got := make(chan string, waiters)
	for range waiters {
		d, first := begin(t, s, k, expiry)
		if first {
			t.Fatal("duplicate while in progress: first = true")
		}
		if d != e {
			t.Fatal("duplicate got another entry than the original")
		}
		go func() {
			<-d.Done()
			got <- d.Value()
		}()
	}
	select {
	case v := <-got:
		t.Fatalf("waiter released before Complete with %q", v)
	default:
	}

	s.Complete(e, "Hello!:1", time.Time{})
	for range waiters {
		if v := <-got; v != "Hello!:1" {
			t.Fatalf("waiter got %q, want Hello!:1", v)
		}
	}
}

func TestDuplicateAfterCompletion(t *testing.T) {
	const timeout = 5 * time.Second
	tests := []struct {
		name      string
		after     time.Duration // since the first receipt
		wantFirst bool
	}{
		{"at once", 0, false},
		{"half way", timeout / 2, false},
		{"just before expiry", timeout - time.Nanosecond, false},
		{"at expiry", timeout, false}, // never early: the expiry instant is still kept
		{"just after expiry", timeout + time.Nanosecond, true},
		{"long after expiry", time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newStore(t, 0)
			k := key(1)
			start := c.Now()
			e, _ := begin(t, s, k, start.Add(timeout))
			s.Complete(e, "Hello!:1", time.Time{})

			c.Set(start.Add(tt.after))
			d, first := begin(t, s, k, start.Add(timeout))
			if first != tt.wantFirst {
				t.Fatalf("first = %v, want %v", first, tt.wantFirst)
			}
			if first {
				if d == e || isDone(d) {
					t.Fatal("a new first receipt must get a fresh placeholder")
				}
				return
			}
			if d != e || !isDone(d) || d.Value() != "Hello!:1" {
				t.Fatalf("duplicate got entry %p done=%v value=%q, want %p done with Hello!:1", d, isDone(d), d.Value(), e)
			}
		})
	}
}

func TestAfterExpiryNewFirstReceipt(t *testing.T) {
	for _, completed := range []bool{true, false} {
		// completed=false is an executor that lost track of the request: its
		// placeholder is kept until expiry, then the key is free again.
		t.Run(fmt.Sprintf("completed=%v", completed), func(t *testing.T) {
			s, c := newStore(t, 0)
			k := key(1)
			e, _ := begin(t, s, k, c.Now().Add(time.Second))
			if completed {
				s.Complete(e, "old", time.Time{})
			}
			c.Add(time.Second)
			if d, first := begin(t, s, k, e.Expiry()); first || d != e {
				t.Fatal("entry left before its expiry")
			}
			c.Add(time.Nanosecond)
			d, first := begin(t, s, k, c.Now().Add(time.Second))
			if !first || d == e {
				t.Fatal("after expiry the request must be a new first receipt")
			}
			if s.Len() != 1 {
				t.Fatalf("Len = %d, want 1 (the old entry swept, the new one held)", s.Len())
			}
			// A late Complete of the old entry releases its waiters but
			// does not touch the new entry.
			s.Complete(e, "late", time.Time{})
			if !isDone(e) || isDone(d) {
				t.Fatalf("late Complete: old done=%v new done=%v, want true false", isDone(e), isDone(d))
			}
			s.Complete(d, "new", time.Time{})
			if got, _ := begin(t, s, k, c.Now().Add(time.Second)); got != d || got.Value() != "new" {
				t.Fatalf("duplicate of the new request got %q", got.Value())
			}
		})
	}
}

func TestKeyDistinguishesResponseTopic(t *testing.T) {
	s, c := newStore(t, 0)
	expiry := c.Now().Add(time.Minute)
	orig, _ := begin(t, s, Key{"c1", "clients/a/resp"}, expiry)
	tests := []struct {
		name      string
		key       Key
		wantFirst bool
	}{
		{"same correlation and topic", Key{"c1", "clients/a/resp"}, false},
		{"same correlation, other topic", Key{"c1", "clients/b/resp"}, true},
		{"other correlation, same topic", Key{"c2", "clients/a/resp"}, true},
		{"correlation and topic swapped", Key{"clients/a/resp", "c1"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, first := begin(t, s, tt.key, expiry)
			if first != tt.wantFirst {
				t.Fatalf("first = %v, want %v", first, tt.wantFirst)
			}
			if (e == orig) == tt.wantFirst {
				t.Fatalf("entry is the original = %v, want %v", e == orig, !tt.wantFirst)
			}
		})
	}
}

func TestCompleteKeepUntil(t *testing.T) {
	const timeout = 5 * time.Second
	tests := []struct {
		name      string
		keepUntil time.Duration // since the first receipt; <0 means the zero time
		wantKept  time.Duration // the last instant a duplicate is answered
	}{
		{"zero keeps until expiry", -1, timeout},
		{"earlier never shortens", time.Second, timeout},
		{"equal", timeout, timeout},
		{"later extends (reply TTL)", time.Hour, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newStore(t, 0)
			k := key(1)
			start := c.Now()
			e, _ := begin(t, s, k, start.Add(timeout))
			var keep time.Time
			if tt.keepUntil >= 0 {
				keep = start.Add(tt.keepUntil)
			}
			s.Complete(e, "reply", keep)
			if !e.Expiry().Equal(start.Add(timeout)) {
				t.Fatalf("Expiry changed to %v", e.Expiry())
			}

			c.Set(start.Add(tt.wantKept))
			if n := s.Sweep(); n != 0 {
				t.Fatalf("Sweep at keep-until removed %d entries", n)
			}
			if d, first := begin(t, s, k, start.Add(timeout)); first || d.Value() != "reply" {
				t.Fatalf("at keep-until: first=%v value=%q, want the stored reply", first, d.Value())
			}
			c.Set(start.Add(tt.wantKept + time.Nanosecond))
			if _, first := begin(t, s, k, c.Now().Add(timeout)); !first {
				t.Fatal("after keep-until: want a new first receipt")
			}
		})
	}
}

func TestDuplicateWithLaterExpiryExtends(t *testing.T) {
	s, c := newStore(t, 0)
	k := key(1)
	start := c.Now()
	e, _ := begin(t, s, k, start.Add(time.Second))
	// The invoker re-sent the request with a fresh expiry: it must not run
	// again before that later expiry.
	begin(t, s, k, start.Add(10*time.Second))
	// A duplicate with an earlier expiry does not shorten anything.
	begin(t, s, k, start.Add(2*time.Second))
	s.Complete(e, "once", time.Time{})

	c.Set(start.Add(10 * time.Second))
	if d, first := begin(t, s, k, start.Add(10*time.Second)); first || d != e || d.Value() != "once" {
		t.Fatal("entry left before the latest duplicate's expiry")
	}
	if !e.Expiry().Equal(start.Add(time.Second)) {
		t.Fatalf("Expiry = %v, want the first receipt's", e.Expiry())
	}
	c.Add(time.Nanosecond)
	if _, first := begin(t, s, k, c.Now().Add(time.Second)); !first {
		t.Fatal("after the latest expiry: want a new first receipt")
	}
}

func TestNeverRemovedBeforeExpiryEvenWhenFull(t *testing.T) {
	const max = 50
	s, c := newStore(t, max)
	start := c.Now()
	// Entry i expires at start + (i+1)s; half of them completed.
	entries := make([]*Entry[string], max)
	for i := range max {
		entries[i], _ = begin(t, s, key(i), start.Add(time.Duration(i+1)*time.Second))
		if i%2 == 0 {
			s.Complete(entries[i], fmt.Sprint(i), time.Time{})
		}
	}
	// Walk the clock to each expiry instant while new keys keep pushing.
	for step := range max {
		c.Set(start.Add(time.Duration(step+1) * time.Second))
		for j := range 3 {
			_, _, err := s.Begin(key(1000+step*10+j), c.Now().Add(time.Hour))
			if step == 0 && !errors.Is(err, ErrFull) {
				t.Fatalf("step 0: new key got %v, want ErrFull", err)
			}
			if err == nil {
				break // an entry expired and made room; stop pushing
			}
		}
		for i := step; i < max; i++ { // not yet past their expiry
			if d, first := begin(t, s, key(i), start.Add(time.Second)); first || d != entries[i] {
				t.Fatalf("step %d: entry %d (expiry %ds) was removed early", step, i, i+1)
			}
		}
	}
}

func TestFullRefusesNewKeysButAnswersDuplicates(t *testing.T) {
	const max = 3
	s, c := newStore(t, max)
	expiry := c.Now().Add(time.Minute)
	var held []*Entry[string]
	for i := range max {
		e, _ := begin(t, s, key(i), expiry)
		held = append(held, e)
	}
	s.Complete(held[0], "done", time.Time{})

	e, first, err := s.Begin(key(99), expiry)
	if !errors.Is(err, ErrFull) || e != nil || first {
		t.Fatalf("new key when full: e=%v first=%v err=%v, want nil false ErrFull", e, first, err)
	}
	if want := "dedup store is full"; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("ErrFull message %q should say %q and 503", err, want)
	}
	tests := []struct {
		name  string
		key   Key
		entry *Entry[string]
		done  bool
	}{
		{"completed duplicate", key(0), held[0], true},
		{"in-progress duplicate", key(1), held[1], false},
		{"other in-progress duplicate", key(2), held[2], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, first := begin(t, s, tt.key, expiry)
			if first || e != tt.entry || isDone(e) != tt.done {
				t.Fatalf("first=%v same=%v done=%v, want false true %v", first, e == tt.entry, isDone(e), tt.done)
			}
		})
	}
	if s.Len() != max {
		t.Fatalf("Len = %d, want %d", s.Len(), max)
	}
}

func TestFullAcceptsAgainAfterExpiry(t *testing.T) {
	const max = 4
	s, c := newStore(t, max)
	start := c.Now()
	for i := range max {
		begin(t, s, key(i), start.Add(time.Duration(i+1)*time.Second))
	}
	if _, _, err := s.Begin(key(100), start.Add(time.Hour)); !errors.Is(err, ErrFull) {
		t.Fatalf("err = %v, want ErrFull", err)
	}

	c.Set(start.Add(2*time.Second + time.Nanosecond)) // keys 0 and 1 are due
	if s.Len() != max {
		t.Fatalf("Len = %d before any call, want %d: sweeping is lazy", s.Len(), max)
	}
	if _, first := begin(t, s, key(100), start.Add(time.Hour)); !first {
		t.Fatal("want a first receipt once entries expired")
	}
	if s.Len() != max-1 { // swept 2 due entries, added 1
		t.Fatalf("Len = %d, want %d", s.Len(), max-1)
	}
	if _, first := begin(t, s, key(101), start.Add(time.Hour)); !first {
		t.Fatal("want a first receipt for the last free slot")
	}
	if _, _, err := s.Begin(key(102), start.Add(time.Hour)); !errors.Is(err, ErrFull) {
		t.Fatalf("err = %v, want ErrFull", err)
	}
}

func TestCompleteTwiceKeepsFirst(t *testing.T) {
	s, c := newStore(t, 0)
	k := key(1)
	start := c.Now()
	e, _ := begin(t, s, k, start.Add(time.Second))
	s.Complete(e, "first", time.Time{})
	s.Complete(e, "second", start.Add(time.Hour)) // neither value nor keep-until change
	if e.Value() != "first" {
		t.Fatalf("Value = %q, want first", e.Value())
	}
	c.Set(start.Add(time.Second + time.Nanosecond))
	if _, first := begin(t, s, k, c.Now().Add(time.Second)); !first {
		t.Fatal("the second Complete extended the entry")
	}
}

func TestCompleteAfterExpiry(t *testing.T) {
	s, c := newStore(t, 0)
	k := key(1)
	start := c.Now()
	e, _ := begin(t, s, k, start.Add(time.Second))
	c.Add(2 * time.Second) // due, but not swept yet
	if s.Len() != 1 {
		t.Fatalf("Len = %d, want 1", s.Len())
	}
	// The executor finished late, with a long reply TTL: waiters are
	// released, but an entry that already expired is not revived.
	s.Complete(e, "late", start.Add(time.Hour))
	if !isDone(e) || e.Value() != "late" {
		t.Fatal("waiters not released by a late Complete")
	}
	if s.Len() != 0 {
		t.Fatalf("Len = %d, want 0", s.Len())
	}
	if _, first := begin(t, s, k, c.Now().Add(time.Second)); !first {
		t.Fatal("want a first receipt after expiry")
	}
}

func TestSweep(t *testing.T) {
	s, c := newStore(t, 0)
	start := c.Now()
	for i := range 10 {
		e, _ := begin(t, s, key(i), start.Add(time.Duration(i+1)*time.Second))
		if i%3 == 0 {
			s.Complete(e, "v", time.Time{})
		}
	}
	tests := []struct {
		at        time.Duration
		wantSwept int
		wantLen   int
	}{
		{0, 0, 10},
		{time.Second, 0, 10},
		{3*time.Second + 1, 3, 7},
		{3*time.Second + 1, 0, 7},
		{time.Hour, 7, 0},
	}
	for _, tt := range tests {
		c.Set(start.Add(tt.at))
		if n := s.Sweep(); n != tt.wantSwept {
			t.Fatalf("at %v: Sweep = %d, want %d", tt.at, n, tt.wantSwept)
		}
		if s.Len() != tt.wantLen {
			t.Fatalf("at %v: Len = %d, want %d", tt.at, s.Len(), tt.wantLen)
		}
	}
}

// A clock reading older than one the store already used (readings are taken
// before locking, so callers may arrive out of order) must not revive
// anything: the store's time never goes backwards.
func TestClockNeverGoesBack(t *testing.T) {
	s, c := newStore(t, 0)
	k := key(1)
	start := c.Now()
	e, _ := begin(t, s, k, start.Add(time.Second))
	c.Add(2 * time.Second)
	s.Sweep()
	c.Set(start) // stale reading
	if d, first := begin(t, s, k, start.Add(time.Second)); !first || d == e {
		t.Fatal("a stale clock reading revived an expired key")
	}
}

func TestDefaults(t *testing.T) {
	s := NewDedupStore[int](DedupConfig{})
	if s.max != DefaultMaxEntries {
		t.Fatalf("max = %d, want %d", s.max, DefaultMaxEntries)
	}
	e, first, err := s.Begin(key(1), time.Now().Add(time.Minute))
	if err != nil || !first {
		t.Fatalf("Begin with the real clock: first=%v err=%v", first, err)
	}
	s.Complete(e, 42, time.Time{})
	if e.Value() != 42 {
		t.Fatalf("Value = %d, want 42", e.Value())
	}
	s.Complete(nil, 1, time.Time{})           // no-op
	s.Complete(&Entry[int]{}, 1, time.Time{}) // not from a store: no-op
}

func TestCompleteUsesOwningStore(t *testing.T) {
	a, c := newStore(t, 0)
	b, _ := newStore(t, 0)
	e, _ := begin(t, a, key(1), c.Now().Add(time.Second))
	b.Complete(e, "v", c.Now().Add(time.Hour))
	if b.Len() != 0 || a.Len() != 1 || e.Value() != "v" {
		t.Fatalf("a.Len=%d b.Len=%d value=%q", a.Len(), b.Len(), e.Value())
	}
	c.Add(time.Minute)
	if d, first := begin(t, a, key(1), c.Now()); first || d != e {
		t.Fatal("keep-until not applied in the owning store")
	}
}

// TestHammer runs Begin and Complete from many goroutines on overlapping keys
// (run it with -race). Every key stays live, so each must see exactly one
// first receipt, and every duplicate must see the first receipt's value.
func TestHammer(t *testing.T) {
	const (
		goroutines = 32
		keys       = 64
		rounds     = 500
	)
	s, c := newStore(t, 0)
	expiry := c.Now().Add(time.Hour)
	var firsts [keys]atomic.Int32
	var values [keys]atomic.Value // the value the first receipt stored
	var dups atomic.Int64

	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for r := range rounds {
				i := (g*7 + r*13) % keys
				e, first, err := s.Begin(key(i), expiry)
				if err != nil {
					errs <- err
					return
				}
				if first {
					firsts[i].Add(1)
					v := fmt.Sprintf("key %d by goroutine %d round %d", i, g, r)
					values[i].Store(v)
					s.Complete(e, v, time.Time{})
					continue
				}
				dups.Add(1)
				<-e.Done()
				want, _ := values[i].Load().(string)
				if got := e.Value(); got != want {
					errs <- fmt.Errorf("key %d: waiter saw %q, first receipt stored %q", i, got, want)
					return
				}
				if r%5 == 0 { // a late second Complete must change nothing
					s.Complete(e, "overwritten", expiry.Add(time.Hour))
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range keys {
		if n := firsts[i].Load(); n != 1 {
			t.Errorf("key %d: %d first receipts, want 1", i, n)
		}
	}
	if s.Len() != keys {
		t.Errorf("Len = %d, want %d", s.Len(), keys)
	}
	if want := int64(goroutines*rounds - keys); dups.Load() != want {
		t.Errorf("duplicates = %d, want %d", dups.Load(), want)
	}
}

// TestHammerExpiry moves the clock while goroutines fill a small store, so
// that sweeping, ErrFull, late Completes and keep-until extensions race (run
// it with -race). A call must always get an entry of its own key, a completed
// entry always holds the value of its first receipt, and the store never
// holds more than its bound.
func TestHammerExpiry(t *testing.T) {
	const (
		goroutines = 16
		keys       = 40
		max        = 16
		rounds     = 1000
	)
	s, c := newStore(t, max)
	var full, firsts atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for r := range rounds {
				if r%10 == 0 {
					c.Add(time.Millisecond)
				}
				k := key((g*11 + r*3) % keys)
				e, first, err := s.Begin(k, c.Now().Add(5*time.Millisecond))
				if errors.Is(err, ErrFull) {
					full.Add(1)
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				if e.Key() != k {
					errs <- fmt.Errorf("Begin(%v) returned the entry of %v", k, e.Key())
					return
				}
				if n := s.Len(); n > max {
					errs <- fmt.Errorf("Len = %d > max %d", n, max)
					return
				}
				if first {
					firsts.Add(1)
					keep := time.Time{}
					if r%4 == 0 {
						keep = e.Expiry().Add(3 * time.Millisecond)
					}
					s.Complete(e, k.Correlation, keep)
					continue
				}
				if isDone(e) && e.Value() != k.Correlation {
					errs <- fmt.Errorf("%v: value %q", k, e.Value())
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("first receipts %d, ErrFull %d, Len %d", firsts.Load(), full.Load(), s.Len())
}
