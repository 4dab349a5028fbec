package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

var ctx = context.Background()

// open opens a store in a temporary folder with clk (nil: the system's).
func open(t *testing.T, clk *testkit.Clock, limits Limits) *Disk {
	t.Helper()
	cfg := DiskConfig{Dir: t.TempDir(), Limits: limits, SweepEvery: time.Hour}
	if clk != nil {
		cfg.Clock = clk
	}
	d, err := OpenDisk(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func set(ns, key, value string) Op {
	return Op{Kind: OpSet, NS: ns, Key: []byte(key), Value: []byte(value)}
}

func commit(t *testing.T, d Backend, ops ...Op) []Result {
	t.Helper()
	res, err := d.Commit(ctx, &Commit{Ops: ops})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mustGet(t *testing.T, d Backend, ns, key string) Item {
	t.Helper()
	it, err := d.Get(ctx, ns, []byte(key))
	if err != nil {
		t.Fatalf("get %s/%s: %v", ns, key, err)
	}
	return it
}

// The behaviours every store shares are statetest's table
// (conformance_test.go); these are the embedded store's own.

// TestStoreTotal: the store's total bound (Limits.MaxTotalBytes) refuses
// a write that adds past it, whatever its namespace's quota.
func TestStoreTotal(t *testing.T) {
	d := open(t, nil, Limits{MaxTotalBytes: 150})
	commit(t, d, set("a", "k", string(bytes.Repeat([]byte("b"), 100))))
	op := set("b", "k", string(bytes.Repeat([]byte("c"), 50)))
	var qe *QuotaError
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{op}}); !errors.As(err, &qe) || qe.Namespace != "" || qe.Limit != 150 {
		t.Fatalf("the store over its total: %v, want the store's QuotaError", err)
	}
	op.Value = op.Value[:40]
	commit(t, d, op)
}

// TestSweepTellsObservers: the sweep removes expired keys and outcomes,
// gives their bytes back and tells the observers.
func TestSweepTellsObservers(t *testing.T) {
	clk := testkit.NewClock(time.Unix(1_700_000_000, 0))
	d := open(t, clk, Limits{})
	var mu sync.Mutex
	var seen []Change
	defer d.Observe(func(cs []Change) { mu.Lock(); seen = append(seen, cs...); mu.Unlock() })()
	op := set("a", "k2", "v")
	op.TTL = time.Second
	id := OutcomeID{Correlation: "c1", ResponseTopic: "r"}
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{op, set("a", "keep", "v")},
		Outcome: &Outcome{ID: id, Value: []byte("reply"), KeepUntil: clk.Now().Add(time.Second)}}); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Second)
	if err := d.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if u, _ := d.Usage(ctx, "a"); u.Keys != 1 {
		t.Fatalf("usage after the sweep: %+v, want 1 key", u)
	}
	if v, closer, err := d.db.Get(outcomeKey(outcomeHash(id))); err == nil {
		closer.Close()
		t.Fatalf("the sweep left the outcome: %q", v)
	}
	mu.Lock()
	defer mu.Unlock()
	last := seen[len(seen)-1]
	if !last.Deleted || !last.Expired || string(last.Key) != "k2" {
		t.Fatalf("the sweep's change: %+v", last)
	}
}

func TestReopenKeepsWrites(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDisk(DiskConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	v := commit(t, d, set("a", "k", "v"))[0].Version
	if _, err := OpenDisk(DiskConfig{Dir: dir}); !errors.As(err, new(*InUseError)) {
		t.Fatalf("a second open of the folder: %v, want InUseError", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(ctx, "a", []byte("k")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a read after Close: %v, want ErrUnavailable", err)
	}
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{set("a", "k", "v")}}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a commit after Close: %v, want ErrUnavailable", err)
	}
	d, err = OpenDisk(DiskConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if it := mustGet(t, d, "a", "k"); string(it.Value) != "v" || it.Version != v {
		t.Fatalf("after reopening: %q version %d", it.Value, it.Version)
	}
	if next := commit(t, d, set("a", "k", "w"))[0].Version; next <= v {
		t.Fatalf("a version after reopening (%d) is not after the last before (%d)", next, v)
	}
	if u, _ := d.Usage(ctx, "a"); u.Keys != 1 || u.Bytes != 2 {
		t.Fatalf("usage after reopening: %+v", u)
	}
}

// TestGroupCommit: commits queued while a batch is written go in the
// next one, together: one sync for all of them.
func TestGroupCommit(t *testing.T) {
	d := open(t, nil, Limits{})
	hold := make(chan struct{})
	first := true
	held := make(chan struct{})
	d.beforeBatch = func() {
		if first {
			first = false
			close(held)
			<-hold
		}
	}
	const n = 64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); commit(t, d, set("a", "first", "v")) }()
	<-held // the first batch is held: queue the others behind it
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); commit(t, d, set("a", fmt.Sprint(i), "v")) }()
	}
	testkit.WaitFor(t, "the commits queued", func() bool { return len(d.queue) == n })
	close(hold)
	wg.Wait()
	if s := d.Stats(); s.Commits != n+1 || s.Batches != 2 {
		t.Fatalf("stats %+v, want %d commits in 2 batches", s, n+1)
	}
}
