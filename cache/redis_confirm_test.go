package cache

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// A replica slower than a WAIT (connected, in sync, but stalled 1.5 s, as
// a loaded machine can make it) does not get a claim refused: the claim
// waits for it, through ClaimAll (the executor's path) and Claim, and
// counts once the replica confirms it. A replica stalled longer than
// redisConfirmMax gets it refused, not run, once redisConfirmMax has
// passed; a request expiring sooner is refused at its expiry.
func TestRedisClaimWaitsForASlowReplica(t *testing.T) {
	rs := testkit.StartRedisSentinel(t)
	s := newRedisDedup(t, rs.URL, "slow")
	defer s.Close()
	testkit.WaitFor(t, "the replica online", func() bool { return s.waitingFor() == 1 })

	stall := rs.StallReplica(t, 1.5)
	res := s.ClaimAll([]ClaimRequest{{Invoker: "inv", Key: Key{"batch", "resp"}, Expiry: time.Now().Add(time.Minute)}})[0]
	if res.Err != nil || !res.First {
		t.Fatalf("ClaimAll while the replica stalls 1.5 s: first=%v %v, want the claim", res.First, res.Err)
	}
	s.Complete(res.Entry, "ran batch", time.Time{})
	if err := <-stall; err != nil {
		t.Fatal(err)
	}

	stall = rs.StallReplica(t, 1.5)
	e, first, err := s.Claim("inv", Key{"alone", "resp"}, time.Now().Add(time.Minute), false)
	if err != nil || !first {
		t.Fatalf("Claim while the replica stalls 1.5 s: first=%v %v, want the claim", first, err)
	}
	s.Complete(e, "ran alone", time.Time{})
	if err := <-stall; err != nil {
		t.Fatal(err)
	}

	// Past the bound: refused while the replica still stalls, not
	// before redisConfirmMax.
	stall = rs.StallReplica(t, 8)
	start := time.Now()
	res = s.ClaimAll([]ClaimRequest{{Invoker: "inv", Key: Key{"lagging", "resp"}, Expiry: time.Now().Add(time.Minute)}})[0]
	took := time.Since(start)
	select {
	case <-stall:
		t.Fatalf("the claim came back after the replica's 8 s stall (%v)", took)
	default:
	}
	if !notReplicated(res.Err) || took < redisConfirmMax-10*time.Millisecond {
		t.Fatalf("a claim the replica does not confirm for 8 s: %v after %v; want refused (not replicated) after %v", res.Err, took, redisConfirmMax)
	}
	// A request expiring in 1 s waits no longer than that.
	start = time.Now()
	_, _, err = s.Claim("inv", Key{"expiring", "resp"}, time.Now().Add(time.Second), false)
	if took := time.Since(start); !notReplicated(err) || took >= redisConfirmMax {
		t.Fatalf("a request expiring in 1 s: %v after %v; want refused at its expiry", err, took)
	}
	if err := <-stall; err != nil {
		t.Fatal(err)
	}
	// Refused, its claim is released: sent again, it is claimed.
	testkit.WaitFor(t, "the refused claim released", func() bool {
		res := s.ClaimAll([]ClaimRequest{{Invoker: "inv", Key: Key{"lagging", "resp"}, Expiry: time.Now().Add(time.Minute)}})[0]
		return res.Err == nil && res.First
	})
}

// With Replicas set (strict), a primary whose replica is gone refuses a
// claim at once: no WAIT can succeed, so it does not wait
// redisConfirmMax.
func TestRedisStrictReplicasGoneRefusesAtOnce(t *testing.T) {
	rs := testkit.StartRedisSentinel(t)
	s, err := NewRedisDedup(RedisConfig[string]{URL: rs.URL, Name: "strict", Replicas: 1,
		Encode: func(v string) ([]byte, error) { return []byte(v), nil }, Decode: func(b []byte) (string, error) { return string(b), nil },
		OwnerGone: func(bool) string { return "gone" }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rs.Replica.Kill()
	// The heartbeat counts the replicas every second.
	testkit.WaitFor(t, "the heartbeat to count no replica", func() bool { return s.online.Load() == 0 })
	start := time.Now()
	_, _, err = s.Claim("inv", Key{"no-replica", "resp"}, time.Now().Add(time.Minute), false)
	if took := time.Since(start); !notReplicated(err) || took >= redisConfirmMax {
		t.Fatalf("strict, no replica: %v after %v; want refused without waiting %v", err, took, redisConfirmMax)
	}
}

// notReplicated reports whether err is a claim refused because no
// replica confirmed it.
func notReplicated(err error) bool {
	return errors.Is(err, ErrStoreUnavailable) && strings.Contains(err.Error(), errNotReplicated.Error())
}
