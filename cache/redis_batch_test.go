package cache

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// One batch of claims: new keys are first receipts, a key twice in the
// batch is its own duplicate, a key another live process claimed waits,
// a key with an outcome gets it at once; a batch on a Redis that is gone
// records nothing.
func TestRedisDedupClaimAll(t *testing.T) {
	r := testkit.StartRedis(t)
	a, b := newRedisDedup(t, r.URL, "a"), newRedisDedup(t, r.URL, "b")
	defer a.Close()
	defer b.Close()
	expiry := time.Now().Add(time.Minute)
	key := func(n int) Key { return Key{fmt.Sprintf("corr-%d", n), "resp"} }
	if _, ok, err := b.Claim("inv", key(3), expiry, false); !ok || err != nil {
		t.Fatal(ok, err)
	}
	done, ok, err := b.Claim("inv", key(4), expiry, false)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	b.Complete(done, "reply 4", time.Time{})

	res := a.ClaimAll([]ClaimRequest{
		{"inv", key(1), expiry, false, ""}, {"inv", key(2), expiry, false, ""}, {"inv", key(1), expiry, false, ""},
		{"inv", key(3), expiry, false, ""}, {"inv", key(4), expiry, false, ""},
	})
	for i, want := range []bool{true, true, false, false, false} {
		if res[i].Err != nil || res[i].First != want {
			t.Errorf("request %d: first=%v %v, want first=%v", i, res[i].First, res[i].Err, want)
		}
	}
	if res[2].Entry != res[0].Entry {
		t.Error("the duplicate in the batch does not share its original's entry")
	}
	select {
	case <-res[3].Entry.Done():
		t.Error("the duplicate of b's request in progress has an outcome")
	default:
	}
	if got := waitDone(t, res[4].Entry); got != "reply 4" {
		t.Errorf("the duplicate of a completed request: %q", got)
	}
	a.Complete(res[0].Entry, "reply 1", time.Time{})
	if e := b.Lookup(key(1)); e == nil || waitDone(t, e) != "reply 1" {
		t.Error("the outcome of a batch's first receipt is not in Redis")
	}

	r.Kill()
	for i, res := range a.ClaimAll([]ClaimRequest{{"inv", key(5), expiry, false, ""}, {"inv", key(6), expiry, true, ""}}) {
		if !errors.Is(res.Err, ErrStoreUnavailable) {
			t.Errorf("request %d with Redis gone: %v, want ErrStoreUnavailable", i, res.Err)
		}
	}
}

// Outcomes stored at once by many goroutines (group commit) are all
// stored, each under its own key.
func TestRedisDedupConcurrentOutcomes(t *testing.T) {
	url := testkit.StartRedis(t).URL
	a, b := newRedisDedup(t, url, "a"), newRedisDedup(t, url, "b")
	defer a.Close()
	defer b.Close()
	const n = 200
	expiry := time.Now().Add(time.Minute)
	var reqs []ClaimRequest
	for i := range n {
		reqs = append(reqs, ClaimRequest{"inv", Key{fmt.Sprintf("corr-%d", i), "resp"}, expiry, false, ""})
	}
	res := a.ClaimAll(reqs)
	var wg sync.WaitGroup
	for i := range n {
		if !res[i].First {
			t.Fatalf("request %d: %+v", i, res[i])
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.Complete(res[i].Entry, fmt.Sprintf("reply %d", i), time.Time{})
		}()
	}
	wg.Wait()
	for i, r := range b.ClaimAll(reqs) {
		if r.Err != nil || r.First || waitDone(t, r.Entry) != fmt.Sprintf("reply %d", i) {
			t.Errorf("request %d on b: %+v", i, r)
		}
	}
}
