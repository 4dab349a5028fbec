package broker

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

func src(ip string) netip.Prefix { return sourceOf(&net.TCPAddr{IP: net.ParseIP(ip)}) }

// A source is blocked after throttleAfter failures, for throttleFirst,
// doubled at each failure after, throttleMax at most; while blocked, a
// name that failed from it is refused, another may only log in known
// good; other sources are not touched; the record lapses throttleForget
// after the last failure. A user name is never blocked as such.
func TestLoginThrottle(t *testing.T) {
	th := newLoginThrottle()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	guesser, other := src("192.0.2.1"), src("192.0.2.2")
	verdict := func(s netip.Prefix, user string) throttleVerdict {
		v, _, _ := th.check(s, user, now)
		return v
	}
	for i := range throttleAfter - 1 {
		if block, _ := th.failed(guesser, "alice", now); block != 0 {
			t.Fatalf("failure %d blocked the source", i+1)
		}
		if v := verdict(guesser, "alice"); v != throttleNone {
			t.Fatalf("after %d failures: %v, want none", i+1, v)
		}
	}
	if block, failures := th.failed(guesser, "alice", now); block != throttleFirst || failures != throttleAfter {
		t.Fatalf("failure %d: block %v (%d failures), want %v", throttleAfter, block, failures, throttleFirst)
	}
	if v := verdict(guesser, "alice"); v != throttleRefused {
		t.Errorf("the name that failed, from the blocked source: %v, want refused", v)
	}
	if v := verdict(guesser, "bob"); v != throttleKnownOnly {
		t.Errorf("another name from the blocked source: %v, want known-only", v)
	}
	if v := verdict(other, "alice"); v != throttleNone {
		t.Errorf("the same name from another source: %v, want none (a name is never locked)", v)
	}
	// A failure during the block (a known-only miss) names bob, and
	// blocks no longer.
	if block, _ := th.failed(guesser, "bob", now); block != 0 {
		t.Errorf("a failure during the block extended it by %v", block)
	}
	if v := verdict(guesser, "bob"); v != throttleRefused {
		t.Errorf("bob, after failing from the blocked source: %v, want refused", v)
	}
	// Each failure after a block doubles the next, up to throttleMax.
	want := throttleFirst
	for range 10 {
		_, until, _ := th.check(guesser, "alice", now)
		now = until
		if v := verdict(guesser, "alice"); v != throttleNone {
			t.Fatalf("at the block's end: %v, want none", v)
		}
		want = min(2*want, throttleMax)
		if block, _ := th.failed(guesser, "alice", now); block != want {
			t.Fatalf("the next block %v, want %v", block, want)
		}
	}
	// Quiet for throttleForget after the last failure: forgotten.
	now = now.Add(throttleForget)
	if v := verdict(guesser, "alice"); v != throttleNone {
		t.Errorf("after %v without a failure: %v, want none", throttleForget, v)
	}
	if block, failures := th.failed(guesser, "alice", now); block != 0 || failures != 1 {
		t.Errorf("the first failure after the record lapsed: block %v, %d failures; want none, 1", block, failures)
	}
}

// Beyond maxFailedNames names failed from a source, every name is refused
// while it is blocked: a guesser cannot try known-good logins name after
// name.
func TestLoginThrottleManyNames(t *testing.T) {
	th := newLoginThrottle()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	s := src("2001:db8::1")
	for i := range maxFailedNames + 1 {
		th.failed(s, "user-"+itoa(i), now)
	}
	if v, _, _ := th.check(s, "never-tried", now); v != throttleRefused {
		t.Errorf("a name never tried, from a source where %d names failed: %v, want refused", maxFailedNames+1, v)
	}
	if v, _, _ := th.check(src("2001:db8::2"), "never-tried", now); v != throttleRefused {
		t.Errorf("the same /64: %v, want refused", v)
	}
	if v, _, _ := th.check(src("2001:db8:0:1::1"), "never-tried", now); v != throttleNone {
		t.Errorf("another /64: %v, want none", v)
	}
}

// At most maxThrottled sources are remembered: the one whose last failure
// is oldest goes first.
func TestLoginThrottleBounded(t *testing.T) {
	th := newLoginThrottle()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	first := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, 0, 0}), 32)
	for range throttleAfter {
		th.failed(first, "u", now)
	}
	for i := range maxThrottled {
		now = now.Add(time.Microsecond)
		th.failed(netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 32), "u", now)
	}
	if n := len(th.sources); n != maxThrottled || th.order.Len() != maxThrottled {
		t.Errorf("%d sources remembered (%d in order), want %d", n, th.order.Len(), maxThrottled)
	}
	if v, _, _ := th.check(first, "u", now); v != throttleNone {
		t.Errorf("the source failed longest ago: %v, want forgotten", v)
	}
}
