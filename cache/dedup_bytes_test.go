package cache

import (
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// digestOf is the test stores' ByteBound.Digest: a short mark instead of
// the outcome, the outcome itself when it is no longer than the mark.
func digestOf(v string) string {
	if len(v) <= len("digest") {
		return v
	}
	return "digest"
}

func newBoundedStore(t testing.TB, maxBytes int64) (*DedupStore[string], *testkit.Clock) {
	t.Helper()
	c := newClock()
	s := NewBoundedDedupStore(DedupConfig{MaxEntries: 1000, Clock: c}, ByteBound[string]{
		MaxBytes: maxBytes, Size: func(v string) int64 { return int64(len(v)) }, Digest: digestOf})
	return s, c
}

// An outcome that would take the store over its byte bound is kept as
// its digest: the bytes held stay under the bound (plus the digests), and
// a duplicate of that request gets the digest, as a duplicate and not as
// a first receipt (the request never runs again).
func TestByteBoundKeepsDigestsOfWhatDoesNotFit(t *testing.T) {
	const bound = 1000
	s, c := newBoundedStore(t, bound)
	expiry := c.Now().Add(time.Hour)
	big := strings.Repeat("x", 400)
	for i := range 10 {
		e, _ := begin(t, s, key(i), expiry)
		s.Complete(e, big, time.Time{})
	}
	st := s.Stats()
	if want := int64(2*len(big) + 8*len("digest")); st.Bytes != want || st.Digested != 8 {
		t.Fatalf("Stats = %+v; want %d bytes (2 whole outcomes and 8 digests), 8 digested", st, want)
	}
	for i := range 10 {
		e, first := begin(t, s, key(i), expiry)
		if first {
			t.Fatalf("key %d: a duplicate of a held request is a first receipt: it would run again", i)
		}
		want := big
		if i >= 2 {
			want = "digest"
		}
		if got := e.Value(); got != want {
			t.Fatalf("key %d: duplicate got %.10q…, want %.10q…", i, got, want)
		}
	}
	// Small outcomes, no larger than their digest, are kept whole even
	// over the bound.
	e, _ := begin(t, s, key(100), expiry)
	s.Complete(e, "ok", time.Time{})
	if got := s.Lookup(key(100)).Value(); got != "ok" {
		t.Fatalf("a small outcome over the bound: kept %q, want it whole", got)
	}
	// The bytes come back when the entries go.
	c.Set(expiry.Add(time.Second))
	if n := s.Sweep(); n != 11 {
		t.Fatalf("Sweep removed %d entries, want 11", n)
	}
	if st := s.Stats(); st.Bytes != 0 {
		t.Fatalf("after every entry expired: %d bytes held, want 0", st.Bytes)
	}
	e, _ = begin(t, s, key(200), c.Now().Add(time.Hour))
	s.Complete(e, big, time.Time{})
	if got := s.Lookup(key(200)).Value(); got != big {
		t.Fatal("room again after the sweep: the outcome must be kept whole")
	}
}

// To make room for an outcome, the store evicts completed entries whose
// request expired (kept only for late duplicates), never a protected one.
func TestByteBoundEvictsOnlyEntriesPastTheirExpiry(t *testing.T) {
	s, c := newBoundedStore(t, 1000)
	start := c.Now()
	big := strings.Repeat("x", 600)
	old, _ := begin(t, s, key(0), start.Add(time.Second))
	s.Complete(old, big, start.Add(time.Hour)) // kept an hour, protected a second
	e1, _ := begin(t, s, key(1), start.Add(time.Hour))
	s.Complete(e1, big, time.Time{})
	if got := s.Lookup(key(1)).Value(); got != "digest" {
		t.Fatalf("key 0 still protected: key 1 kept %.10q…, want the digest", got)
	}
	c.Set(start.Add(2 * time.Second)) // key 0's request expired
	e2, _ := begin(t, s, key(2), start.Add(time.Hour))
	s.Complete(e2, big, time.Time{})
	if got := s.Lookup(key(2)).Value(); got != big {
		t.Fatalf("key 0's request expired: key 2 kept %.10q…, want it whole (key 0 evicted)", got)
	}
	if s.Lookup(key(0)) != nil || s.Evicted() != 1 {
		t.Fatalf("key 0 held: %v, evicted %d; want it evicted for the room", s.Lookup(key(0)) != nil, s.Evicted())
	}
}

// A duplicate waiting while its first receipt runs gets the digest when
// the outcome does not fit; the first receipt's caller has the outcome
// itself.
func TestByteBoundWaitersGetTheDigest(t *testing.T) {
	s, c := newBoundedStore(t, 10)
	e, _ := begin(t, s, key(0), c.Now().Add(time.Hour))
	dup, first := begin(t, s, key(0), c.Now().Add(time.Hour))
	if first {
		t.Fatal("the duplicate is a first receipt")
	}
	s.Complete(e, strings.Repeat("x", 11), time.Time{})
	<-dup.Done()
	if got := dup.Value(); got != "digest" {
		t.Fatalf("waiter got %q, want the digest", got)
	}
}

// One invoker's outcomes take at most its share of the bytes (its share of
// the entries): an invoker with large replies gets digests past it, and
// another invoker's replies are still kept whole. Without the share, the
// first took the whole bound and every other invoker's duplicates got
// digests for as long as its requests lasted.
func TestByteBoundSharedByInvokers(t *testing.T) {
	c := newClock()
	// 10 entries, 5 per invoker: each invoker may hold half of the 1000 bytes.
	s := NewBoundedDedupStore(DedupConfig{MaxEntries: 10, MaxPerInvoker: 5, Clock: c}, ByteBound[string]{
		MaxBytes: 1000, Size: func(v string) int64 { return int64(len(v)) }, Digest: digestOf})
	expiry := c.Now().Add(time.Hour)
	big := strings.Repeat("x", 300)
	complete := func(invoker string, i int) string {
		t.Helper()
		e, first, err := s.Claim(invoker, key(i), expiry, false)
		if err != nil || !first {
			t.Fatalf("%s key %d: first %v, %v", invoker, i, first, err)
		}
		s.Complete(e, big, time.Time{})
		return s.Lookup(key(i)).Value()
	}
	if got := complete("flood", 0); got != big {
		t.Fatalf("the flood's first reply: %.10q…, want it whole", got)
	}
	for i := 1; i < 4; i++ {
		if got := complete("flood", i); got != "digest" {
			t.Fatalf("the flood's reply %d past its 500 bytes: %.10q…, want the digest", i, got)
		}
	}
	if got := complete("other", 10); got != big {
		t.Fatalf("another invoker's reply: %.10q…, want it whole (the flood took only its share)", got)
	}
	if st := s.Stats(); st.Bytes != int64(2*len(big)+3*len("digest")) {
		t.Fatalf("Stats %+v", st)
	}
}
