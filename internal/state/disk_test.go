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

func TestSetGetDelete(t *testing.T) {
	d := open(t, nil, Limits{})
	r1 := commit(t, d, set("a", "k", "v1"))
	r2 := commit(t, d, set("a", "k", "v2"))
	if r1[0].Existed || !r2[0].Existed {
		t.Fatalf("existed: %+v %+v", r1, r2)
	}
	if r2[0].Version <= r1[0].Version {
		t.Fatalf("versions do not grow: %d then %d", r1[0].Version, r2[0].Version)
	}
	it := mustGet(t, d, "a", "k")
	if string(it.Value) != "v2" || it.Version != r2[0].Version {
		t.Fatalf("got %q version %d, want v2 version %d", it.Value, it.Version, r2[0].Version)
	}
	if _, err := d.Get(ctx, "b", []byte("k")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another namespace's key: %v, want ErrNotFound", err)
	}
	res := commit(t, d, Op{Kind: OpDelete, NS: "a", Key: []byte("k")})
	if !res[0].Existed {
		t.Fatal("delete of a key that exists: Existed false")
	}
	if _, err := d.Get(ctx, "a", []byte("k")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if res := commit(t, d, Op{Kind: OpDelete, NS: "a", Key: []byte("k")}); res[0].Existed {
		t.Fatal("delete of a key that does not exist: Existed true")
	}
	if u, _ := d.Usage(ctx, "a"); u != (Usage{}) {
		t.Fatalf("usage of an emptied namespace: %+v", u)
	}
}

func TestVersionsFollowTheClockAndAfter(t *testing.T) {
	clk := testkit.NewClock(time.Unix(1_700_000_000, 0))
	d := open(t, clk, Limits{})
	r := commit(t, d, set("a", "k", "v"))
	if ms, _ := VersionParts(r[0].Version); ms != clk.Now().UnixMilli() {
		t.Fatalf("version's time %d, want the clock's %d", ms, clk.Now().UnixMilli())
	}
	after := VersionOf(clk.Now().Add(time.Second).UnixMilli(), 7)
	res, err := d.Commit(ctx, &Commit{Ops: []Op{set("a", "k", "w")}, After: after})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Version <= after {
		t.Fatalf("version %d not after %d", res[0].Version, after)
	}
}

func TestConditionsAllOrNothing(t *testing.T) {
	d := open(t, nil, Limits{})
	v := commit(t, d, set("a", "k", "v"))[0].Version
	cases := []struct {
		name string
		cond Cond
		ok   bool
	}{
		{"absent on a key that exists", Cond{Absent: true}, false},
		{"version that is the key's", Cond{Version: v}, true},
		{"version that is not the key's", Cond{Version: v + 1}, false},
		{"value it holds", Cond{Value: []byte("v"), HasValue: true}, true},
		{"value it does not hold", Cond{Value: []byte("x"), HasValue: true}, false},
		{"absent or equal, equal", Cond{Absent: true, Value: []byte("v"), HasValue: true}, true},
		{"absent or equal, not equal", Cond{Absent: true, Value: []byte("x"), HasValue: true}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := mustGet(t, d, "a", "k")
			other := set("a", "other-"+c.name, "1")
			op := Op{Kind: OpSet, NS: "a", Key: []byte("k"), Value: []byte("v"), If: c.cond}
			_, err := d.Commit(ctx, &Commit{Ops: []Op{other, op}})
			if c.ok != (err == nil) {
				t.Fatalf("commit: %v, want ok=%v", err, c.ok)
			}
			if c.ok {
				return
			}
			var ce *ConflictError
			if !errors.As(err, &ce) || ce.Op != 1 {
				t.Fatalf("error %v, want a ConflictError on op 1", err)
			}
			if _, err := d.Get(ctx, "a", []byte(other.Key)); !errors.Is(err, ErrNotFound) {
				t.Fatalf("the op before the failed one was applied: %v", err)
			}
			if after := mustGet(t, d, "a", "k"); after.Version != before.Version {
				t.Fatal("the key changed")
			}
		})
	}
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{{Kind: OpSet, NS: "a", Key: []byte("new"), If: Cond{Absent: true}}}}); err != nil {
		t.Fatalf("absent on a new key: %v", err)
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

func TestQuotas(t *testing.T) {
	d := open(t, nil, Limits{Namespace: Quota{MaxKeys: 2, MaxBytes: 50}, MaxTotalBytes: 150})
	commit(t, d, set("a", "k1", "x"), set("a", "k2", "x"))
	_, err := d.Commit(ctx, &Commit{Ops: []Op{set("a", "k3", "x")}})
	var qe *QuotaError
	if !errors.As(err, &qe) || qe.What != "keys" || qe.Namespace != "a" {
		t.Fatalf("a third key: %v, want a keys QuotaError", err)
	}
	commit(t, d, set("a", "k1", "y")) // overwriting adds no key
	big := string(bytes.Repeat([]byte("b"), 49))
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{set("a", "k1", big)}}); !errors.As(err, &qe) || qe.What != "bytes" {
		t.Fatalf("a namespace over its bytes: %v", err)
	}
	quota := Quota{MaxKeys: 10, MaxBytes: 1000}
	op := set("b", "k", string(bytes.Repeat([]byte("c"), 145)))
	op.Quota = quota
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{op}}); !errors.As(err, &qe) || qe.Namespace != "" {
		t.Fatalf("the store over its total: %v, want the store's QuotaError", err)
	}
	op.Value = op.Value[:100]
	commit(t, d, op) // a namespace's own quota over the default
	// Shrinking is always allowed, even over a lowered bound.
	shrink := set("b", "k", "small")
	shrink.Quota = Quota{MaxKeys: 1, MaxBytes: 5}
	commit(t, d, shrink)
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{{Kind: OpSet, NS: "a", Key: make([]byte, DefaultMaxKeyBytes+1)}}}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a key over its bound: %v", err)
	}
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{{Kind: OpSet, NS: "a\x00b", Key: []byte("k")}}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a namespace with a NUL: %v", err)
	}
}

func TestExpiryAndSweep(t *testing.T) {
	clk := testkit.NewClock(time.Unix(1_700_000_000, 0))
	d := open(t, clk, Limits{})
	var mu sync.Mutex
	var seen []Change
	defer d.Observe(func(cs []Change) { mu.Lock(); seen = append(seen, cs...); mu.Unlock() })()
	op := set("a", "k", "v")
	op.TTL = time.Second
	commit(t, d, op, set("a", "keep", "v"))
	if it := mustGet(t, d, "a", "k"); !it.Expires.Equal(clk.Now().Add(time.Second)) {
		t.Fatalf("expires %v", it.Expires)
	}
	clk.Add(time.Second)
	if _, err := d.Get(ctx, "a", []byte("k")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an expired key: %v", err)
	}
	if keys, _, _ := d.List(ctx, "a", nil, nil, 10); len(keys) != 1 || string(keys[0]) != "keep" {
		t.Fatalf("list with an expired key: %q", keys)
	}
	// Absent to conditions before the sweep.
	commit(t, d, Op{Kind: OpSet, NS: "a", Key: []byte("k"), Value: []byte("again"), If: Cond{Absent: true}})
	op.TTL = time.Second
	op.Key = []byte("k2")
	commit(t, d, op)
	clk.Add(time.Second)
	if err := d.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if u, _ := d.Usage(ctx, "a"); u.Keys != 2 {
		t.Fatalf("usage after the sweep: %+v, want 2 keys", u)
	}
	mu.Lock()
	defer mu.Unlock()
	last := seen[len(seen)-1]
	if !last.Deleted || !last.Expired || string(last.Key) != "k2" {
		t.Fatalf("the sweep's change: %+v", last)
	}
}

func TestFencing(t *testing.T) {
	d := open(t, nil, Limits{})
	fenced := func(token string) Op { o := set("a", "k", "v"); o.Fence = token; return o }
	t1, t2 := "001700000000000:00001:a", "001700000000001:00000:a"
	commit(t, d, set("a", "k", "v")) // unfenced: a token fences it
	commit(t, d, fenced(t2))
	var fe *FenceError
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{set("a", "k", "v")}}); !errors.As(err, &fe) || !fe.Missing {
		t.Fatalf("a write without a token: %v", err)
	}
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{fenced(t1)}}); !errors.As(err, &fe) || fe.Missing {
		t.Fatalf("an older token: %v", err)
	}
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{{Kind: OpDelete, NS: "a", Key: []byte("k")}}}); !errors.As(err, &fe) {
		t.Fatalf("a delete without a token: %v", err)
	}
	commit(t, d, fenced(t2)) // equal passes
	if it := mustGet(t, d, "a", "k"); it.Fence != t2 {
		t.Fatalf("fence %q", it.Fence)
	}
	del := Op{Kind: OpDelete, NS: "a", Key: []byte("k"), Fence: t2}
	commit(t, d, del)
	commit(t, d, set("a", "k", "v")) // the fence went with the key
}

func TestOutcomes(t *testing.T) {
	clk := testkit.NewClock(time.Unix(1_700_000_000, 0))
	d := open(t, clk, Limits{})
	id := OutcomeID{Correlation: "c1", ResponseTopic: "r"}
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{set("a", "k", "v")},
		Outcome: &Outcome{ID: id, Value: []byte("reply"), KeepUntil: clk.Now().Add(time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := d.Outcome(ctx, id)
	if err != nil || !ok || string(got) != "reply" {
		t.Fatalf("outcome: %q %v %v", got, ok, err)
	}
	if _, ok, _ := d.Outcome(ctx, OutcomeID{Correlation: "c1", ResponseTopic: "other"}); ok {
		t.Fatal("an outcome found under another response topic")
	}
	// A refused commit records no outcome.
	id2 := OutcomeID{Correlation: "c2", ResponseTopic: "r"}
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{{Kind: OpSet, NS: "a", Key: []byte("k"), If: Cond{Absent: true}}},
		Outcome: &Outcome{ID: id2, Value: []byte("x"), KeepUntil: clk.Now().Add(time.Minute)}}); !errors.Is(err, ErrConflict) {
		t.Fatalf("commit: %v", err)
	}
	if _, ok, _ := d.Outcome(ctx, id2); ok {
		t.Fatal("a refused commit's outcome was recorded")
	}
	clk.Add(time.Minute)
	if _, ok, _ := d.Outcome(ctx, id); ok {
		t.Fatal("an outcome found after its keep-until")
	}
	if err := d.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if v, closer, err := d.db.Get(outcomeKey(outcomeHash(id))); err == nil {
		closer.Close()
		t.Fatalf("the sweep left the outcome: %q", v)
	}
}

func TestListPages(t *testing.T) {
	d := open(t, nil, Limits{})
	var ops []Op
	for i := range 25 {
		ops = append(ops, set("a", fmt.Sprintf("dev/%02d", i), "v"))
	}
	ops = append(ops, set("a", "other", "v"), set("a\x01", "dev/x", "v"), set("b", "dev/00", "v"))
	commit(t, d, ops...)
	var all []string
	var after []byte
	for pages := 0; ; pages++ {
		keys, more, err := d.List(ctx, "a", []byte("dev/"), after, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			all = append(all, string(k))
		}
		if !more {
			if pages != 2 {
				t.Fatalf("%d pages, want 3", pages+1)
			}
			break
		}
		after = keys[len(keys)-1]
	}
	if len(all) != 25 || all[0] != "dev/00" || all[24] != "dev/24" {
		t.Fatalf("listed %q", all)
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
