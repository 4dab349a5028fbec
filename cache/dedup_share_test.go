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

func newShareStore(t testing.TB, max, perInvoker int) (*DedupStore[string], *testkit.Clock) {
	t.Helper()
	c := newClock()
	return NewDedupStore[string](DedupConfig{MaxEntries: max, MaxPerInvoker: perInvoker, Clock: c}), c
}

// invKey is key i of an invoker, on a response topic of its own.
func invKey(invoker string, i int) Key {
	return Key{Correlation: fmt.Sprintf("corr-%d", i), ResponseTopic: "clients/" + invoker + "/resp"}
}

// checkShares verifies that the per-invoker counts add up to the entries
// held and that no empty share is kept.
func checkShares[V any](t testing.TB, s *DedupStore[V]) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	counted := 0
	for name, sh := range s.shares {
		if sh.live <= 0 {
			t.Errorf("invoker %q: a share with %d entries is kept", name, sh.live)
		}
		counted += sh.live
	}
	unshared := 0
	for _, e := range s.entries {
		if e.share == nil {
			unshared++
		}
	}
	if counted+unshared != len(s.entries) {
		t.Errorf("shares count %d entries + %d without an invoker, the store holds %d", counted, unshared, len(s.entries))
	}
}

// One invoker sending 101 % of the store's bound with expiries far away
// fills its share, not the store: other invokers are still admitted, and
// the invoker's own duplicates are still answered.
func TestOneInvokerCannotFillTheStore(t *testing.T) {
	const max, share = 100, 10
	s, c := newShareStore(t, max, share)
	far := c.Now().Add(100 * 365 * 24 * time.Hour)
	var held []*Entry[string]
	refused := 0
	for i := range max + max/100 {
		e, first, err := s.BeginFrom("hostile", invKey("hostile", i), far)
		switch {
		case errors.Is(err, ErrInvokerFull):
			refused++
			if e != nil || first {
				t.Fatalf("key %d: refused with entry %v first %v", i, e, first)
			}
			if !strings.Contains(err.Error(), "10 entries") {
				t.Fatalf("the error %q should name the share's bound", err)
			}
		case err != nil:
			t.Fatalf("key %d: %v, want nil or ErrInvokerFull", i, err)
		default:
			held = append(held, e)
		}
	}
	if len(held) != share || refused != max+max/100-share {
		t.Fatalf("admitted %d, refused %d; want %d and %d", len(held), refused, share, max+max/100-share)
	}
	for i, want := range held {
		if e, first, err := s.BeginFrom("hostile", invKey("hostile", i), far); err != nil || first || e != want {
			t.Fatalf("duplicate %d: e=%v first=%v err=%v, want its entry", i, e == want, first, err)
		}
	}
	for _, other := range []string{"a", "b", "c"} {
		if _, first, err := s.BeginFrom(other, invKey(other, 1), c.Now().Add(10*time.Second)); err != nil || !first {
			t.Fatalf("invoker %s: first=%v err=%v, want admitted", other, first, err)
		}
	}
	if _, first, err := s.Begin(invKey("anonymous", 1), c.Now().Add(10*time.Second)); err != nil || !first {
		t.Fatalf("Begin without an invoker: first=%v err=%v, want admitted", first, err)
	}
	checkShares(t, s)
}

// A share holds its invoker's entries to the same strictness as the store:
// a full share frees room only by evicting its own completed entries whose
// request expired, never an entry in progress or one still protected, and
// never another invoker's.
func TestFullShareEvictsOnlyItsOwnExpiredEntries(t *testing.T) {
	const share = 4
	s, c := newShareStore(t, 100, share)
	start := c.Now()
	// a's 0, 1: completed, expiry 1 s and 2 s, kept an hour; 2: in
	// progress, expiry an hour away; 3: completed, expiry an hour away.
	var a []*Entry[string]
	for i, exp := range []time.Duration{time.Second, 2 * time.Second, time.Hour, time.Hour} {
		e, _, err := s.BeginFrom("a", invKey("a", i), start.Add(exp))
		if err != nil {
			t.Fatal(err)
		}
		if i != 2 {
			s.Complete(e, "done", start.Add(time.Hour))
		}
		a = append(a, e)
	}
	// b's entry expired long ago but is kept: not a's to evict.
	eb, _, err := s.BeginFrom("b", invKey("b", 0), start.Add(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	s.Complete(eb, "done", start.Add(time.Hour))

	if _, _, err := s.BeginFrom("a", invKey("a", 100), start.Add(time.Hour)); !errors.Is(err, ErrInvokerFull) {
		t.Fatalf("before any of a's expiries: err = %v, want ErrInvokerFull", err)
	}
	c.Set(start.Add(1500 * time.Millisecond)) // a's key 0 expired
	if _, first, err := s.BeginFrom("a", invKey("a", 100), start.Add(time.Hour)); err != nil || !first {
		t.Fatalf("after key 0's expiry: first=%v err=%v, want key 0 evicted", first, err)
	}
	if _, _, err := s.BeginFrom("a", invKey("a", 101), start.Add(time.Hour)); !errors.Is(err, ErrInvokerFull) {
		t.Fatalf("key 1 still protected: err = %v, want ErrInvokerFull", err)
	}
	if got := s.Evicted(); got != 1 {
		t.Fatalf("Evicted = %d, want 1", got)
	}
	if e, first, _ := s.BeginFrom("b", invKey("b", 0), start.Add(time.Hour)); first || e != eb {
		t.Fatal("b's entry was evicted for a")
	}
	for i := 1; i < share; i++ {
		if e, first, _ := s.BeginFrom("a", invKey("a", i), start.Add(time.Hour)); first || e != a[i] {
			t.Fatalf("a's entry %d went before its expiry", i)
		}
	}
	checkShares(t, s)
}

// Entries leave their share when they leave the store (swept, evicted by a
// full store, or completed after their expiry), so the share admits again
// and no empty share is kept.
func TestShareFollowsTheEntries(t *testing.T) {
	s, c := newShareStore(t, 3, 2)
	start := c.Now()
	e0, _, _ := s.BeginFrom("a", invKey("a", 0), start.Add(time.Second))
	s.BeginFrom("a", invKey("a", 1), start.Add(2*time.Second))
	e2, _, _ := s.BeginFrom("b", invKey("b", 0), start.Add(time.Second))
	s.Complete(e2, "done", start.Add(time.Hour))

	c.Set(start.Add(1500 * time.Millisecond))
	s.Complete(e0, "late", time.Time{}) // after its keep-until: leaves at once
	if _, first, err := s.BeginFrom("a", invKey("a", 2), start.Add(time.Hour)); err != nil || !first {
		t.Fatalf("a after its late Complete: first=%v err=%v", first, err)
	}
	// The store is full (a:1, a:2, b:0); c's new key evicts b's expired,
	// completed entry, which leaves b's share.
	if _, first, err := s.BeginFrom("c", invKey("c", 0), start.Add(time.Hour)); err != nil || !first {
		t.Fatalf("c: first=%v err=%v, want b's entry evicted", first, err)
	}
	checkShares(t, s)
	s.mu.Lock()
	_, bKept := s.shares["b"]
	s.mu.Unlock()
	if bKept {
		t.Fatal("b's share is kept after its last entry went")
	}
	c.Set(start.Add(2 * time.Hour))
	if n := s.Sweep(); n != 3 || s.Len() != 0 {
		t.Fatalf("Sweep = %d, Len = %d; want 3 and 0", n, s.Len())
	}
	checkShares(t, s)
	s.mu.Lock()
	left := len(s.shares)
	s.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d shares left in an empty store", left)
	}
}

// A duplicate counts against the share of the invoker whose first receipt
// made the entry: another invoker re-sending the key takes nothing of its
// own share, and extends the entry's protection as any duplicate does.
func TestDuplicateFromAnotherInvoker(t *testing.T) {
	s, c := newShareStore(t, 100, 1)
	start := c.Now()
	k := invKey("a", 0)
	e, _, _ := s.BeginFrom("a", k, start.Add(time.Second))
	s.Complete(e, "done", time.Time{})
	if d, first, err := s.BeginFrom("b", k, start.Add(time.Minute)); err != nil || first || d != e {
		t.Fatalf("duplicate from b: first=%v err=%v same=%v", first, err, d == e)
	}
	if _, first, err := s.BeginFrom("b", invKey("b", 0), start.Add(time.Minute)); err != nil || !first {
		t.Fatalf("b's own key: first=%v err=%v, want admitted", first, err)
	}
	// a's entry is now protected for a minute: a's share stays full.
	c.Set(start.Add(2 * time.Second))
	if _, _, err := s.BeginFrom("a", invKey("a", 1), start.Add(time.Hour)); !errors.Is(err, ErrInvokerFull) {
		t.Fatalf("a: err = %v, want ErrInvokerFull while its entry is protected", err)
	}
	checkShares(t, s)
}

// TestHammerShares races invokers over small shares of a small store while
// the clock moves (run it with -race): the store and every share keep
// their bounds and their counts add up.
func TestHammerShares(t *testing.T) {
	const (
		goroutines = 16
		invokers   = 5
		max        = 20
		share      = 6
		rounds     = 1000
	)
	s, c := newShareStore(t, max, share)
	var invokerFull, storeFull atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for r := range rounds {
				if r%10 == 0 {
					c.Add(time.Millisecond)
				}
				inv := fmt.Sprintf("inv-%d", (g+r)%invokers)
				k := invKey(inv, (g*11+r*3)%40)
				e, first, err := s.BeginFrom(inv, k, c.Now().Add(5*time.Millisecond))
				switch {
				case errors.Is(err, ErrInvokerFull):
					invokerFull.Add(1)
					continue
				case errors.Is(err, ErrFull):
					storeFull.Add(1)
					continue
				case err != nil:
					errs <- err
					return
				}
				if e.Key() != k {
					errs <- fmt.Errorf("BeginFrom(%v) returned the entry of %v", k, e.Key())
					return
				}
				s.mu.Lock()
				n, sh := len(s.entries), s.shares[inv]
				over := sh != nil && sh.live > share
				s.mu.Unlock()
				if n > max || over {
					errs <- fmt.Errorf("bounds broken: %d entries (max %d), share of %s over %d", n, max, inv, share)
					return
				}
				if first {
					keep := time.Time{}
					if r%3 == 0 {
						keep = e.Expiry().Add(3 * time.Millisecond)
					}
					s.Complete(e, k.Correlation, keep)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkShares(t, s)
	t.Logf("ErrInvokerFull %d, ErrFull %d, Len %d", invokerFull.Load(), storeFull.Load(), s.Len())
}

// A zero MaxPerInvoker is a tenth of the store; NoBound leaves one invoker
// only the store's own bound.
func TestDedupShareDefault(t *testing.T) {
	c := newClock()
	far := c.Now().Add(time.Hour)
	s := NewDedupStore[string](DedupConfig{MaxEntries: 100, Clock: c})
	for i := range 10 {
		if _, _, err := s.BeginFrom("a", invKey("a", i), far); err != nil {
			t.Fatalf("entry %d of a tenth: %v", i, err)
		}
	}
	if _, _, err := s.BeginFrom("a", invKey("a", 10), far); !errors.Is(err, ErrInvokerFull) {
		t.Fatalf("past a tenth: %v, want ErrInvokerFull", err)
	}
	s = NewDedupStore[string](DedupConfig{MaxEntries: 100, MaxPerInvoker: NoBound, Clock: c})
	for i := range 100 {
		if _, _, err := s.BeginFrom("a", invKey("a", i), far); err != nil {
			t.Fatalf("entry %d without a share: %v", i, err)
		}
	}
	if _, _, err := s.BeginFrom("a", invKey("a", 100), far); !errors.Is(err, ErrFull) {
		t.Fatalf("past the store's bound: %v, want ErrFull", err)
	}
}
