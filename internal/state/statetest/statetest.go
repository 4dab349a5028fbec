// Package statetest is the behaviour every state store must have, as a
// table of tests that any state.Backend runs (Run): the embedded store
// (internal/state) and the one in Redis (package cache) run the same
// table, so that a handler sees the same rules on either.
package statetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/state"
)

// Store is a store under test.
type Store struct {
	state.Backend
	// Now is the store's clock (its versions' time).
	Now func() time.Time
	// Advance moves the store's clock on by d (a test clock's, or a
	// sleep).
	Advance func(d time.Duration)
	// Reap has the store give back what keys that expired held (a sweep;
	// on Redis, a list of the namespace).
	Reap func(ns string)
	// ClockSlack is how far a version's time may be from Now (another
	// machine's clock): 0 for the store's own.
	ClockSlack time.Duration
	// Lacks names what the store cannot do, each with why (a store
	// reached through a protocol that has no such thing: package
	// stateaio's); the rows and checks that need it are skipped, saying
	// why.
	Lacks map[Lack]string
}

// Lack is something a store may lack.
type Lack string

// What a store may lack.
const (
	// LacksList: List.
	LacksList Lack = "list"
	// LacksUsage: Usage, and so a namespace's quota.
	LacksUsage Lack = "usage"
	// LacksConditions: a version condition (compare-and-set), or a set
	// conditioned on a value other than the one it sets.
	LacksConditions Lack = "conditions"
	// LacksSetExisted: whether a set found the key (an OpSet's
	// Result.Existed).
	LacksSetExisted Lack = "set existed"
	// LacksItemMeta: a key's expiry and fence read back (Item.Expires,
	// Item.Fence).
	LacksItemMeta Lack = "item meta"
)

// has reports whether the store has l, and logs why a check is skipped
// when it does not.
func (s *Store) has(t *testing.T, l Lack) bool {
	t.Helper()
	if why, ok := s.Lacks[l]; ok {
		t.Logf("a check skipped: the store lacks %s: %s", l, why)
		return false
	}
	return true
}

// needs skips the row when the store lacks l.
func (s *Store) needs(t *testing.T, l Lack) {
	t.Helper()
	if why, ok := s.Lacks[l]; ok {
		t.Skipf("the store lacks %s: %s", l, why)
	}
}

// Open opens an empty store bounded by limits.
type Open func(t *testing.T, limits state.Limits) *Store

// Run runs the table against the stores open makes.
func Run(t *testing.T, open Open) {
	for _, c := range []struct {
		name string
		f    func(*testing.T, Open)
	}{
		{"SetGetDelete", setGetDelete},
		{"VersionsFollowTheClockAndAfter", versions},
		{"ConditionsAllOrNothing", conditions},
		{"NamespaceQuotas", quotas},
		{"Bounds", bounds},
		{"Expiry", expiry},
		{"Fencing", fencing},
		{"Outcomes", outcomes},
		{"ListPages", listPages},
		{"CompareAndSetNoLostUpdate", compareAndSet},
	} {
		t.Run(c.name, func(t *testing.T) { c.f(t, open) })
	}
}

var ctx = context.Background()

// Set is an unconditional set.
func Set(ns, key, value string) state.Op {
	return state.Op{Kind: state.OpSet, NS: ns, Key: []byte(key), Value: []byte(value)}
}

// Commit commits ops and fails the test if it fails.
func Commit(t *testing.T, d state.Backend, ops ...state.Op) []state.Result {
	t.Helper()
	res, err := d.Commit(ctx, &state.Commit{Ops: ops})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// MustGet gets a key and fails the test if it cannot.
func MustGet(t *testing.T, d state.Backend, ns, key string) state.Item {
	t.Helper()
	it, err := d.Get(ctx, ns, []byte(key))
	if err != nil {
		t.Fatalf("get %s/%s: %v", ns, key, err)
	}
	return it
}

func setGetDelete(t *testing.T, open Open) {
	d := open(t, state.Limits{})
	r1 := Commit(t, d, Set("a", "k", "v1"))
	r2 := Commit(t, d, Set("a", "k", "v2"))
	if d.has(t, LacksSetExisted) && (r1[0].Existed || !r2[0].Existed) {
		t.Fatalf("existed: %+v %+v", r1, r2)
	}
	if r2[0].Version <= r1[0].Version {
		t.Fatalf("versions do not grow: %d then %d", r1[0].Version, r2[0].Version)
	}
	it := MustGet(t, d, "a", "k")
	if string(it.Value) != "v2" || it.Version != r2[0].Version {
		t.Fatalf("got %q version %d, want v2 version %d", it.Value, it.Version, r2[0].Version)
	}
	if _, err := d.Get(ctx, "b", []byte("k")); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("another namespace's key: %v, want ErrNotFound", err)
	}
	res := Commit(t, d, state.Op{Kind: state.OpDelete, NS: "a", Key: []byte("k")})
	if !res[0].Existed {
		t.Fatal("delete of a key that exists: Existed false")
	}
	if _, err := d.Get(ctx, "a", []byte("k")); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if res := Commit(t, d, state.Op{Kind: state.OpDelete, NS: "a", Key: []byte("k")}); res[0].Existed {
		t.Fatal("delete of a key that does not exist: Existed true")
	}
	if u, _ := d.Usage(ctx, "a"); d.has(t, LacksUsage) && u != (state.Usage{}) {
		t.Fatalf("usage of an emptied namespace: %+v", u)
	}
	// Binary keys and values, an empty value, one commit writing a key
	// twice: the last write stands.
	bin := string([]byte{0, 1, 0xff, '}', '{'})
	Commit(t, d, Set("a", bin, ""), Set("a", "twice", "1"), Set("a", "twice", "22"))
	if it := MustGet(t, d, "a", bin); len(it.Value) != 0 {
		t.Fatalf("an empty value read back as %q", it.Value)
	}
	if it := MustGet(t, d, "a", "twice"); string(it.Value) != "22" {
		t.Fatalf("a key written twice in one commit: %q", it.Value)
	}
	if u, _ := d.Usage(ctx, "a"); d.has(t, LacksUsage) && (u.Keys != 2 || u.Bytes != int64(len(bin)+len("twice22"))) {
		t.Fatalf("usage %+v, want 2 keys of %d bytes", u, len(bin)+len("twice22"))
	}
}

func versions(t *testing.T, open Open) {
	d := open(t, state.Limits{})
	r := Commit(t, d, Set("a", "k", "v"))
	ms, _ := state.VersionParts(r[0].Version)
	if diff := time.Duration(ms-d.Now().UnixMilli()) * time.Millisecond; diff > d.ClockSlack || diff < -d.ClockSlack {
		t.Fatalf("version's time %d, want the clock's %d (±%v)", ms, d.Now().UnixMilli(), d.ClockSlack)
	}
	// Ahead of the clock, within the minute the Azure IoT Operations
	// protocol lets a request's timestamp be ahead of its store's.
	after := state.VersionOf(d.Now().Add(30*time.Second).UnixMilli(), 7)
	res, err := d.Commit(ctx, &state.Commit{Ops: []state.Op{Set("a", "k", "w"), Set("b", "k", "w")}, After: after})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Version <= after || res[1].Version <= res[0].Version {
		t.Fatalf("versions %d, %d not after %d and growing", res[0].Version, res[1].Version, after)
	}
	// Later commits follow, in either namespace.
	if next := Commit(t, d, Set("a", "k", "x"))[0].Version; next <= res[1].Version {
		t.Fatalf("a version after After's (%d) is %d", res[1].Version, next)
	}
}

func conditions(t *testing.T, open Open) {
	d := open(t, state.Limits{})
	d.needs(t, LacksConditions)
	v := Commit(t, d, Set("a", "k", "v"))[0].Version
	cases := []struct {
		name string
		cond state.Cond
		ok   bool
	}{
		{"absent on a key that exists", state.Cond{Absent: true}, false},
		{"version that is the key's", state.Cond{Version: v}, true},
		{"version that is not the key's", state.Cond{Version: v + 1}, false},
		{"value it holds", state.Cond{Value: []byte("v"), HasValue: true}, true},
		{"value it does not hold", state.Cond{Value: []byte("x"), HasValue: true}, false},
		{"absent or equal, equal", state.Cond{Absent: true, Value: []byte("v"), HasValue: true}, true},
		{"absent or equal, not equal", state.Cond{Absent: true, Value: []byte("x"), HasValue: true}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := MustGet(t, d, "a", "k")
			if c.cond.Version != 0 {
				c.cond.Version = before.Version + c.cond.Version - v // relative to the key's version now
			}
			other := Set("a", "other-"+c.name, "1")
			op := state.Op{Kind: state.OpSet, NS: "a", Key: []byte("k"), Value: []byte("v"), If: c.cond}
			_, err := d.Commit(ctx, &state.Commit{Ops: []state.Op{other, op}})
			if c.ok != (err == nil) {
				t.Fatalf("commit: %v, want ok=%v", err, c.ok)
			}
			if c.ok {
				return
			}
			var ce *state.ConflictError
			if !errors.As(err, &ce) || ce.Op != 1 || ce.Namespace != "a" || string(ce.Key) != "k" {
				t.Fatalf("error %v, want a ConflictError on op 1", err)
			}
			if _, err := d.Get(ctx, "a", other.Key); !errors.Is(err, state.ErrNotFound) {
				t.Fatalf("the op before the failed one was applied: %v", err)
			}
			if after := MustGet(t, d, "a", "k"); after.Version != before.Version {
				t.Fatal("the key changed")
			}
		})
	}
	if _, err := d.Commit(ctx, &state.Commit{Ops: []state.Op{{Kind: state.OpSet, NS: "a", Key: []byte("new"), If: state.Cond{Absent: true}}}}); err != nil {
		t.Fatalf("absent on a new key: %v", err)
	}
	// A version named on a key that does not exist; a delete on a version.
	_, err := d.Commit(ctx, &state.Commit{Ops: []state.Op{{Kind: state.OpDelete, NS: "a", Key: []byte("none"), If: state.Cond{Version: v}}}})
	if !errors.Is(err, state.ErrConflict) {
		t.Fatalf("a delete on the version of a key that does not exist: %v", err)
	}
	cur := MustGet(t, d, "a", "k")
	if res := Commit(t, d, state.Op{Kind: state.OpDelete, NS: "a", Key: []byte("k"), If: state.Cond{Version: cur.Version}}); !res[0].Existed {
		t.Fatal("a delete on the key's version: Existed false")
	}
}

func quotas(t *testing.T, open Open) {
	d := open(t, state.Limits{Namespace: state.Quota{MaxKeys: 2, MaxBytes: 50}})
	d.needs(t, LacksUsage)
	Commit(t, d, Set("a", "k1", "x"), Set("a", "k2", "x"))
	_, err := d.Commit(ctx, &state.Commit{Ops: []state.Op{Set("a", "k3", "x")}})
	var qe *state.QuotaError
	if !errors.As(err, &qe) || qe.What != "keys" || qe.Namespace != "a" || qe.Limit != 2 {
		t.Fatalf("a third key: %v, want a keys QuotaError", err)
	}
	Commit(t, d, Set("a", "k1", "y")) // overwriting adds no key
	// A delete and a set in one commit: the set has the deleted key's room.
	Commit(t, d, state.Op{Kind: state.OpDelete, NS: "a", Key: []byte("k2")}, Set("a", "k3", "z"))
	big := string(bytes.Repeat([]byte("b"), 49))
	if _, err := d.Commit(ctx, &state.Commit{Ops: []state.Op{Set("a", "k1", big)}}); !errors.As(err, &qe) || qe.What != "bytes" || qe.Limit != 50 {
		t.Fatalf("a namespace over its bytes: %v", err)
	}
	if u, _ := d.Usage(ctx, "a"); u.Keys != 2 || u.Bytes != 6 {
		t.Fatalf("usage after refusals: %+v, want 2 keys, 6 bytes", u)
	}
	// A namespace's own quota over the default.
	op := Set("b", "k", string(bytes.Repeat([]byte("c"), 100)))
	op.Quota = state.Quota{MaxKeys: 10, MaxBytes: 1000}
	Commit(t, d, op)
	// Shrinking is always allowed, even over a lowered bound.
	shrink := Set("b", "k", "small")
	shrink.Quota = state.Quota{MaxKeys: 1, MaxBytes: 5}
	Commit(t, d, shrink)
}

func bounds(t *testing.T, open Open) {
	d := open(t, state.Limits{MaxValueBytes: 100, MaxCommitOps: 3})
	for _, c := range []struct {
		name string
		ops  []state.Op
		want error
	}{
		{"a key over its bound", []state.Op{{Kind: state.OpSet, NS: "a", Key: make([]byte, state.DefaultMaxKeyBytes+1)}}, state.ErrTooLarge},
		{"a value over its bound", []state.Op{Set("a", "k", string(make([]byte, 101)))}, state.ErrTooLarge},
		{"too many writes", []state.Op{Set("a", "1", ""), Set("a", "2", ""), Set("a", "3", ""), Set("a", "4", "")}, state.ErrTooLarge},
		{"an empty key", []state.Op{Set("a", "", "v")}, state.ErrInvalid},
		{"a namespace with a NUL", []state.Op{Set("a\x00b", "k", "v")}, state.ErrInvalid},
		{"an empty namespace", []state.Op{Set("", "k", "v")}, state.ErrInvalid},
		{"a negative TTL", []state.Op{{Kind: state.OpSet, NS: "a", Key: []byte("k"), TTL: -time.Second}}, state.ErrInvalid},
	} {
		if _, err := d.Commit(ctx, &state.Commit{Ops: c.ops}); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := d.Get(ctx, "a", make([]byte, state.DefaultMaxKeyBytes+1)); !errors.Is(err, state.ErrTooLarge) {
		t.Errorf("a get of a key over its bound: %v", err)
	}
	if !d.has(t, LacksList) {
		return
	}
	if keys, _, err := d.List(ctx, "a", nil, nil, 10); err != nil || len(keys) != 0 {
		t.Errorf("after refusals, the namespace holds %q (%v)", keys, err)
	}
}

func expiry(t *testing.T, open Open) {
	d := open(t, state.Limits{})
	const ttl = 300 * time.Millisecond
	op := Set("a", "k", "v")
	op.TTL = ttl
	start := d.Now()
	Commit(t, d, op, Set("a", "keep", "v"))
	if it := MustGet(t, d, "a", "k"); d.has(t, LacksItemMeta) && (it.Expires.Before(start.Add(ttl-d.ClockSlack)) || it.Expires.After(d.Now().Add(ttl+d.ClockSlack))) {
		t.Fatalf("expires %v, want %v after the commit", it.Expires, ttl)
	}
	d.Advance(ttl + 50*time.Millisecond)
	if _, err := d.Get(ctx, "a", []byte("k")); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("an expired key: %v", err)
	}
	if keys, _, _ := d.List(ctx, "a", nil, nil, 10); d.has(t, LacksList) && (len(keys) != 1 || string(keys[0]) != "keep") {
		t.Fatalf("list with an expired key: %q", keys)
	}
	// Absent to conditions; written again, it counts once.
	Commit(t, d, state.Op{Kind: state.OpSet, NS: "a", Key: []byte("k"), Value: []byte("again"), If: state.Cond{Absent: true}})
	if u, _ := d.Usage(ctx, "a"); d.has(t, LacksUsage) && (u.Keys != 2 || u.Bytes != int64(len("kagain")+len("keepv"))) {
		t.Fatalf("usage after a key expired and was written again: %+v", u)
	}
	op.Key = []byte("k2")
	Commit(t, d, op)
	d.Advance(ttl + 50*time.Millisecond)
	d.Reap("a")
	if u, _ := d.Usage(ctx, "a"); d.has(t, LacksUsage) && u.Keys != 2 {
		t.Fatalf("usage after a key expired: %+v, want 2 keys", u)
	}
	// A key set again without a TTL lasts.
	op.Key = []byte("k3")
	Commit(t, d, op)
	Commit(t, d, Set("a", "k3", "lasts"))
	d.Advance(ttl + 50*time.Millisecond)
	if it := MustGet(t, d, "a", "k3"); d.has(t, LacksItemMeta) && !it.Expires.IsZero() {
		t.Fatalf("a key set again without a TTL expires at %v", it.Expires)
	}
}

func fencing(t *testing.T, open Open) {
	d := open(t, state.Limits{})
	fenced := func(token string) state.Op { o := Set("a", "k", "v"); o.Fence = token; return o }
	t1, t2 := "001700000000000:00001:a", "001700000000001:00000:a"
	t2b := "001700000000001:00000:b" // same time, another node: newer
	Commit(t, d, Set("a", "k", "v")) // unfenced: a token fences it
	Commit(t, d, fenced(t2))
	var fe *state.FenceError
	if _, err := d.Commit(ctx, &state.Commit{Ops: []state.Op{Set("a", "k", "v")}}); !errors.As(err, &fe) || !fe.Missing {
		t.Fatalf("a write without a token: %v", err)
	}
	if _, err := d.Commit(ctx, &state.Commit{Ops: []state.Op{fenced(t1)}}); !errors.As(err, &fe) || fe.Missing {
		t.Fatalf("an older token: %v", err)
	}
	if _, err := d.Commit(ctx, &state.Commit{Ops: []state.Op{fenced("not a token")}}); !errors.As(err, &fe) || fe.Missing {
		t.Fatalf("a token that does not parse: %v", err)
	}
	if _, err := d.Commit(ctx, &state.Commit{Ops: []state.Op{{Kind: state.OpDelete, NS: "a", Key: []byte("k")}}}); !errors.As(err, &fe) {
		t.Fatalf("a delete without a token: %v", err)
	}
	Commit(t, d, fenced(t2)) // equal passes
	if it := MustGet(t, d, "a", "k"); d.has(t, LacksItemMeta) && it.Fence != t2 {
		t.Fatalf("fence %q", it.Fence)
	}
	Commit(t, d, fenced(t2b)) // the node breaks the tie
	if _, err := d.Commit(ctx, &state.Commit{Ops: []state.Op{fenced(t2)}}); !errors.As(err, &fe) {
		t.Fatalf("a token older by its node: %v", err)
	}
	del := state.Op{Kind: state.OpDelete, NS: "a", Key: []byte("k"), Fence: t2b}
	Commit(t, d, del)
	Commit(t, d, Set("a", "k", "v")) // the fence went with the key
}

func outcomes(t *testing.T, open Open) {
	d := open(t, state.Limits{})
	id := state.OutcomeID{Correlation: "c1", ResponseTopic: "r"}
	keep := d.Now().Add(500 * time.Millisecond)
	if _, err := d.Commit(ctx, &state.Commit{Ops: []state.Op{Set("a", "k", "v")},
		Outcome: &state.Outcome{ID: id, Value: []byte("reply"), KeepUntil: keep}}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := d.Outcome(ctx, id)
	if err != nil || !ok || string(got) != "reply" {
		t.Fatalf("outcome: %q %v %v", got, ok, err)
	}
	if _, ok, _ := d.Outcome(ctx, state.OutcomeID{Correlation: "c1", ResponseTopic: "other"}); ok {
		t.Fatal("an outcome found under another response topic")
	}
	// An outcome alone.
	alone := state.OutcomeID{Correlation: "c3", ResponseTopic: "r"}
	if _, err := d.Commit(ctx, &state.Commit{Outcome: &state.Outcome{ID: alone, Value: []byte("x"), KeepUntil: keep}}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := d.Outcome(ctx, alone); !ok {
		t.Fatal("an outcome committed alone is not found")
	}
	// A refused commit records no outcome.
	id2 := state.OutcomeID{Correlation: "c2", ResponseTopic: "r"}
	if _, err := d.Commit(ctx, &state.Commit{Ops: []state.Op{{Kind: state.OpSet, NS: "a", Key: []byte("k"), If: state.Cond{Absent: true}}},
		Outcome: &state.Outcome{ID: id2, Value: []byte("x"), KeepUntil: keep}}); !errors.Is(err, state.ErrConflict) {
		t.Fatalf("commit: %v", err)
	}
	if _, ok, _ := d.Outcome(ctx, id2); ok {
		t.Fatal("a refused commit's outcome was recorded")
	}
	d.Advance(keep.Sub(d.Now()) + 50*time.Millisecond)
	if _, ok, _ := d.Outcome(ctx, id); ok {
		t.Fatal("an outcome found after its keep-until")
	}
}

func listPages(t *testing.T, open Open) {
	d := open(t, state.Limits{})
	d.needs(t, LacksList)
	var ops []state.Op
	for i := range 25 {
		ops = append(ops, Set("a", fmt.Sprintf("dev/%02d", i), "v"))
	}
	ops = append(ops, Set("a", "other", "v"), Set("a", "dev", "v"), Set("a\x01", "dev/x", "v"), Set("b", "dev/00", "v"),
		Set("a", "dev\xff", "v"), Set("a", "\xff\xff", "v"))
	Commit(t, d, ops...)
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
	// The whole namespace, in byte order; after a key before the prefix.
	keys, more, err := d.List(ctx, "a", nil, nil, 100)
	if err != nil || more || len(keys) != 29 || string(keys[0]) != "dev" || string(keys[28]) != "\xff\xff" {
		t.Fatalf("the whole namespace: %q more=%v %v", keys, more, err)
	}
	if keys, _, _ := d.List(ctx, "a", []byte("dev/"), []byte("a"), 1); len(keys) != 1 || string(keys[0]) != "dev/00" {
		t.Fatalf("after a key before the prefix: %q", keys)
	}
	if keys, more, _ := d.List(ctx, "a", []byte("\xff"), nil, 5); len(keys) != 1 || more {
		t.Fatalf("a prefix of 0xff: %q", keys)
	}
	if _, _, err := d.List(ctx, "a", nil, nil, 0); !errors.Is(err, state.ErrInvalid) {
		t.Fatalf("a list of 0 keys: %v", err)
	}
}

// compareAndSet: N callers increment one key by compare-and-set (read,
// then set only if the version is still the one read), retrying on
// conflict: the key ends at the count of successes, no update lost.
func compareAndSet(t *testing.T, open Open) {
	d := open(t, state.Limits{})
	d.needs(t, LacksConditions)
	const callers, each = 8, 25
	var wins, conflicts atomic.Int64
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < each; {
				it, err := d.Get(ctx, "a", []byte("n"))
				n := 0
				cond := state.Cond{Absent: true}
				switch {
				case err == nil:
					n, _ = strconv.Atoi(string(it.Value))
					cond = state.Cond{Version: it.Version}
				case !errors.Is(err, state.ErrNotFound):
					t.Error(err)
					return
				}
				_, err = d.Commit(ctx, &state.Commit{Ops: []state.Op{{Kind: state.OpSet, NS: "a", Key: []byte("n"), Value: []byte(strconv.Itoa(n + 1)), If: cond}}})
				switch {
				case err == nil:
					wins.Add(1)
					done++
				case errors.Is(err, state.ErrConflict):
					conflicts.Add(1)
				default:
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := string(MustGet(t, d, "a", "n").Value); got != strconv.Itoa(callers*each) || wins.Load() != callers*each {
		t.Fatalf("the counter is %s after %d successes", got, wins.Load())
	}
	t.Logf("%d successes, %d conflicts", wins.Load(), conflicts.Load())
}
