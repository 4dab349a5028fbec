package cache

import (
	"errors"
	"testing"
	"time"
)

// Terminal entries kept past their request's expiry
// (for late duplicates and cancels) are bounded by TTL and by count, and
// only terminal entries are evicted.
func TestFullEvictsOnlyTerminalEntriesPastTheirExpiry(t *testing.T) {
	const max = 4
	s, c := newStore(t, max)
	start := c.Now()
	// 0, 1: completed, request expiry 1 s and 2 s, kept an hour (terminal).
	// 2: in progress, expiry an hour away.
	// 3: completed, expiry an hour away (protected).
	for i, exp := range []time.Duration{time.Second, 2 * time.Second} {
		e, _ := begin(t, s, key(i), start.Add(exp))
		s.Complete(e, "done", start.Add(time.Hour))
	}
	begin(t, s, key(2), start.Add(time.Hour))
	e3, _ := begin(t, s, key(3), start.Add(time.Hour))
	s.Complete(e3, "done", time.Time{})

	if _, _, err := s.Begin(key(100), start.Add(time.Hour)); !errors.Is(err, ErrFull) {
		t.Fatalf("before any expiry: err = %v, want ErrFull (every entry is protected)", err)
	}
	c.Set(start.Add(1500 * time.Millisecond)) // key 0's request expired; key 1's not yet
	if _, first := begin(t, s, key(100), start.Add(time.Hour)); !first {
		t.Fatal("want key 0 evicted for a new key")
	}
	if _, _, err := s.Begin(key(101), start.Add(time.Hour)); !errors.Is(err, ErrFull) {
		t.Fatalf("key 1 still protected: err = %v, want ErrFull", err)
	}
	if _, _, err := s.Begin(key(0), start.Add(time.Hour)); !errors.Is(err, ErrFull) {
		t.Fatalf("key 0 again: err = %v, want ErrFull (it was evicted, and nothing else may be)", err)
	}
	c.Set(start.Add(2500 * time.Millisecond)) // key 1's request expired too
	if _, first := begin(t, s, key(101), start.Add(time.Hour)); !first {
		t.Fatal("want key 1 evicted for a new key")
	}
	if got := s.Evicted(); got != 2 {
		t.Fatalf("Evicted = %d, want 2", got)
	}
	// Left: 2 (in progress), 3 (protected), 100, 101. None may go.
	c.Set(start.Add(30 * time.Minute))
	if _, _, err := s.Begin(key(102), start.Add(time.Hour)); !errors.Is(err, ErrFull) {
		t.Fatalf("only in-progress and protected entries left: err = %v, want ErrFull", err)
	}
	if e2, first := begin(t, s, key(2), start.Add(time.Hour)); first || e2 == nil {
		t.Fatal("the in-progress entry must still be held")
	}
}
