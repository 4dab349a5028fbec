package state

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func newTxn(d *Disk) *Txn { return NewTxn(d, d.Limits(), time.Now) }

func TestTxnReadsItsOwnWrites(t *testing.T) {
	d := open(t, nil, Limits{})
	commit(t, d, set("a", "old", "1"), set("a", "gone", "1"))
	sp := Space{NS: "a"}
	tx := newTxn(d)
	if err := tx.Set(ctx, sp, []byte("new"), []byte("2"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if existed, err := tx.Delete(ctx, sp, []byte("gone"), 0); err != nil || !existed {
		t.Fatalf("delete: %v %v", existed, err)
	}
	if it, err := tx.Get(ctx, sp, []byte("new")); err != nil || string(it.Value) != "2" || it.Version != 0 {
		t.Fatalf("the call's own write: %+v %v", it, err)
	}
	if _, err := tx.Get(ctx, sp, []byte("gone")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the call's own delete: %v", err)
	}
	keys, more, err := tx.List(ctx, sp, nil, nil, 10)
	if err != nil || more || fmt.Sprintf("%s", keys) != "[new old]" {
		t.Fatalf("list: %s %v %v", keys, more, err)
	}
	// Nobody else sees them before the commit.
	if _, err := d.Get(ctx, "a", []byte("new")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a staged write is visible: %v", err)
	}
	if _, err := tx.Commit(ctx, nil, 0); err != nil {
		t.Fatal(err)
	}
	if it := mustGet(t, d, "a", "new"); string(it.Value) != "2" {
		t.Fatalf("after the commit: %q", it.Value)
	}
	if _, err := d.Get(ctx, "a", []byte("gone")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the deleted key after the commit: %v", err)
	}
}

func TestTxnConditionsCheckedTwice(t *testing.T) {
	d := open(t, nil, Limits{})
	sp := Space{NS: "a"}
	v := commit(t, d, set("a", "k", "1"))[0].Version
	tx := newTxn(d)
	if err := tx.Set(ctx, sp, []byte("k"), []byte("x"), SetOptions{IfAbsent: true}); !errors.Is(err, ErrConflict) {
		t.Fatalf("if absent on a key that exists, at staging: %v", err)
	}
	if err := tx.Set(ctx, sp, []byte("k"), []byte("x"), SetOptions{IfVersion: v}); err != nil {
		t.Fatal(err)
	}
	commit(t, d, set("a", "k", "2")) // another call wins
	if _, err := tx.Commit(ctx, nil, 0); !errors.Is(err, ErrConflict) {
		t.Fatalf("the commit after another wrote the key: %v", err)
	}
	if it := mustGet(t, d, "a", "k"); string(it.Value) != "2" {
		t.Fatalf("value %q", it.Value)
	}
}

func TestTxnAddNoLostUpdate(t *testing.T) {
	d := open(t, nil, Limits{})
	sp := Space{NS: "a"}
	a, b := newTxn(d), newTxn(d)
	for _, tx := range []*Txn{a, b} {
		if n, err := tx.Add(ctx, sp, []byte("n"), 1); err != nil || n != 1 {
			t.Fatalf("add: %d %v", n, err)
		}
	}
	if n, err := a.Add(ctx, sp, []byte("n"), 5); err != nil || n != 6 {
		t.Fatalf("a second add on the call's own write: %d %v", n, err)
	}
	if _, err := a.Commit(ctx, nil, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Commit(ctx, nil, 0); !errors.Is(err, ErrConflict) {
		t.Fatalf("the second add to commit: %v, want ErrConflict", err)
	}
	commit(t, d, set("a", "s", "text"))
	if _, err := newTxn(d).Add(ctx, sp, []byte("s"), 1); !errors.Is(err, ErrNotInteger) {
		t.Fatalf("add to text: %v", err)
	}
	commit(t, d, set("a", "max", "9223372036854775807"))
	if _, err := newTxn(d).Add(ctx, sp, []byte("max"), 1); !errors.Is(err, ErrNotInteger) {
		t.Fatalf("an overflowing add: %v", err)
	}
}

// TestCompareAndSetCounter: N callers incrementing one key by reading its
// version and setting on it end with exactly the count of their commits
// that succeeded.
func TestCompareAndSetCounter(t *testing.T) {
	d := open(t, nil, Limits{})
	sp := Space{NS: "a"}
	const callers, each = 8, 25
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				tx := newTxn(d)
				_, err := tx.Add(ctx, sp, []byte("n"), 1)
				if err == nil {
					_, err = tx.Commit(ctx, nil, 0)
				}
				switch {
				case err == nil:
					ok.Add(1)
				case !errors.Is(err, ErrConflict):
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	got := string(mustGet(t, d, "a", "n").Value)
	if want := fmt.Sprint(ok.Load()); got != want || ok.Load() == 0 {
		t.Fatalf("counter %s after %s successful increments", got, want)
	}
	t.Logf("%d of %d increments committed, %d conflicts", ok.Load(), callers*each, d.Stats().Conflicts)
}

func TestTxnBounds(t *testing.T) {
	d := open(t, nil, Limits{MaxCommitOps: 2, MaxCommitBytes: 20, Namespace: Quota{MaxKeys: 3, MaxBytes: 1000}})
	sp := Space{NS: "a"}
	tx := newTxn(d)
	for i := range 2 {
		if err := tx.Set(ctx, sp, []byte(fmt.Sprint(i)), []byte("v"), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Set(ctx, sp, []byte("x"), []byte("v"), SetOptions{}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a write over the call's count: %v", err)
	}
	tx.Reset()
	if err := tx.Set(ctx, sp, []byte("k"), make([]byte, 20), SetOptions{}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a write over the call's bytes: %v", err)
	}
	commit(t, d, set("a", "1", "v"), set("a", "2", "v"))
	tx.Reset()
	if err := tx.Set(ctx, sp, []byte("3"), []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Set(ctx, sp, []byte("4"), []byte("v"), SetOptions{}); !errors.Is(err, ErrQuota) {
		t.Fatalf("a key over the namespace's keys, staged: %v", err)
	}
}

// usageCounter counts the Usage reads of a store.
type usageCounter struct {
	Backend
	n atomic.Int64
}

func (u *usageCounter) Usage(ctx context.Context, ns string) (Usage, error) {
	u.n.Add(1)
	return u.Backend.Usage(ctx, ns)
}

// TestTxnReadsUsageOnce: a call reads a namespace's usage once, at its
// first write there, however many it stages (a store on another machine
// is a round trip a read); after a Reset, once again.
func TestTxnReadsUsageOnce(t *testing.T) {
	d := open(t, nil, Limits{})
	u := &usageCounter{Backend: d}
	tx := NewTxn(u, d.Limits(), time.Now)
	for i := range 5 {
		if err := tx.Set(ctx, Space{NS: "a"}, []byte(fmt.Sprint(i)), []byte("v"), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Add(ctx, Space{NS: "b"}, []byte("n"), 1); err != nil {
		t.Fatal(err)
	}
	if got := u.n.Load(); got != 2 {
		t.Fatalf("%d usage reads for writes to two namespaces, want 2", got)
	}
	tx.Reset()
	if err := tx.Set(ctx, Space{NS: "a"}, []byte("k"), []byte("v"), SetOptions{}); err != nil || u.n.Load() != 3 {
		t.Fatalf("after a reset: %v, %d reads", err, u.n.Load())
	}
}

// TestTxnChildren: a nested call's writes see its caller's, join them
// when it succeeds and vanish when it does not; branches of a fan-out
// stage at once.
func TestTxnChildren(t *testing.T) {
	d := open(t, nil, Limits{})
	sp := Space{NS: "a"}
	tx := newTxn(d)
	if err := tx.Set(ctx, sp, []byte("parent"), []byte("p"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	ok, failed := tx.Child(), tx.Child()
	if it, err := ok.Get(ctx, sp, []byte("parent")); err != nil || string(it.Value) != "p" {
		t.Fatalf("a child reads its caller's write: %q %v", it.Value, err)
	}
	if err := ok.Set(ctx, sp, []byte("parent"), []byte("x"), SetOptions{IfVersion: 9}); !errors.Is(err, ErrConflict) {
		t.Fatalf("a version condition on the caller's write: %v", err)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := ok
			if i%2 == 1 {
				c = failed
			}
			if _, err := c.Add(ctx, sp, []byte(fmt.Sprint("n", i%2)), 1); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := ok.Merge(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx, nil, 0); err != nil {
		t.Fatal(err)
	}
	if got := string(mustGet(t, d, "a", "n0").Value); got != "8" {
		t.Fatalf("the merged child's counter: %s", got)
	}
	if _, err := d.Get(ctx, "a", []byte("n1")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the child not merged wrote: %v", err)
	}
	if _, err := ok.Commit(ctx, nil, 0); err == nil {
		t.Fatal("a child committed on its own")
	}
}

// limitedStore is a Disk that refuses what an OpChecker refuses: every
// version condition, and a second conditional write in a call. It
// records the counts it was asked with.
type limitedStore struct {
	*Disk
	asked []int
}

var errNoVersions = fmt.Errorf("%w: no version conditions here", ErrInvalid)

func (l *limitedStore) CheckOp(op Op, conditional int) error {
	l.asked = append(l.asked, conditional)
	switch {
	case op.If.Version != 0:
		return errNoVersions
	case !op.If.IsZero() && conditional > 0:
		return fmt.Errorf("%w: one conditional write a call", ErrInvalid)
	}
	return nil
}

// A store that cannot do some ops (OpChecker) is asked at each write
// staged, before its condition is checked (a write it cannot do is
// refused whether its condition holds or not), as it would commit (the
// call's own write has dropped its condition), with the conditional
// writes staged before it by the call and its callers: the handler
// learns at once, and nothing it refuses is staged.
func TestTxnAsksTheStoreWhatItCannotDo(t *testing.T) {
	d := open(t, nil, Limits{})
	v := commit(t, d, set("a", "k", "1"))[0].Version
	l := &limitedStore{Disk: d}
	sp := Space{NS: "a"}
	tx := NewTxn(l, d.Limits(), time.Now)
	if err := tx.Set(ctx, sp, []byte("k"), []byte("2"), SetOptions{IfVersion: v}); !errors.Is(err, errNoVersions) {
		t.Fatalf("a version condition: %v", err)
	}
	if err := tx.Set(ctx, sp, []byte("k"), []byte("2"), SetOptions{IfVersion: v + 1}); !errors.Is(err, errNoVersions) {
		t.Fatalf("a version condition that does not hold: %v, want the store's refusal, not a conflict", err)
	}
	if _, err := tx.Add(ctx, sp, []byte("k"), 1); !errors.Is(err, errNoVersions) {
		t.Fatalf("an add to a key that exists (a set on the version it read): %v", err)
	}
	if n, err := tx.Add(ctx, sp, []byte("n"), 1); err != nil || n != 1 {
		t.Fatalf("an add to a key that does not exist (only if absent): %d %v", n, err)
	}
	if n, err := tx.Add(ctx, sp, []byte("n"), 1); err != nil || n != 2 {
		t.Fatalf("an add to the call's own write (no condition left): %d %v", n, err)
	}
	child := tx.Child()
	if err := child.Set(ctx, sp, []byte("m"), []byte("x"), SetOptions{IfAbsent: true}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a nested call's second conditional write: %v", err)
	}
	if err := child.Set(ctx, sp, []byte("m"), []byte("x"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(l.asked) != "[0 0 0 0 1 1 1]" {
		t.Fatalf("asked with %v conditional writes staged, want [0 0 0 0 1 1 1]", l.asked)
	}
	if got := len(tx.Staged()); got != 2 {
		t.Fatalf("%d writes staged, want the add's 2", got)
	}
}
