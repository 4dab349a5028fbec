package broker

import (
	"container/list"
	"hash/maphash"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// A source (sourceOf) that keeps sending wrong passwords is guessing:
// after throttleAfter failures, counted while its record lasts (until
// throttleForget after its last failure), its password logins are
// refused at once, without a check (CONNACK 0x9F, connection rate
// exceeded), for a block of throttleFirst, doubled at each failure after
// it, throttleMax at most. A guess then costs it up to a minute, and
// none costs the broker a bcrypt check; the logins of other sources wait
// for none of its checks.
//
//   - Per source, never per user name: a user name locked after failures
//     would let anyone lock its user out.
//   - While a source is blocked, a user name that has not failed from it
//     may still log in with a password that passed before (verified.go),
//     at the cost of an HMAC: a client sharing an address with a guesser
//     (behind one NAT) gets in if it logged in within the hour. A name
//     that failed from the source is refused, and a miss counts a failure
//     of its name: the guesser cannot guess that way but once per name,
//     and beyond maxFailedNames names, every password login of the source
//     is refused until its block ends.
//   - A login that passes does not clear the record: a guesser with an
//     account of its own would log in with it between guesses.
//   - At most maxThrottled sources are remembered; beyond them, the one
//     whose last failure is oldest is forgotten (a guesser with that many
//     addresses gets its records forgotten, and its guesses still wait
//     their turn, one per source, logins.go).

const (
	throttleAfter  = 5                // failures of a source before its first block
	throttleFirst  = time.Second      // its first block
	throttleMax    = time.Minute      // its longest
	throttleForget = 10 * time.Minute // a source's record after its last failure
	maxFailedNames = 8                // user names remembered per source
	maxThrottled   = 10_000           // sources remembered
)

// throttleVerdict is what a source's record says of a password login.
type throttleVerdict uint8

const (
	throttleNone      throttleVerdict = iota // check the password
	throttleKnownOnly                        // blocked: a password that passed before, or refused; no check
	throttleRefused                          // blocked, and the name failed here: refused
)

// loginThrottle is the record of the sources whose logins failed. Safe
// for concurrent use.
type loginThrottle struct {
	seed maphash.Seed // of the user names' hashes

	mu      sync.Mutex
	after   int                            // throttleAfter (the tests raise it)
	sources map[netip.Prefix]*list.Element // of *failingSource
	order   list.List                      // the same, last failure oldest first
}

// failingSource is a source's record.
type failingSource struct {
	prefix       netip.Prefix
	failures     int
	last         time.Time // its last failure
	blockedUntil time.Time
	block        time.Duration // the last block's length
	names        []uint64      // the user names that failed from it (hashed), at most maxFailedNames
	manyNames    bool          // more did
}

func newLoginThrottle() *loginThrottle {
	return &loginThrottle{seed: maphash.MakeSeed(), after: throttleAfter, sources: map[netip.Prefix]*list.Element{}}
}

// check says what src's record makes of a password login as user at
// now, until when src is blocked, and how many logins it failed.
func (t *loginThrottle) check(src netip.Prefix, user string, now time.Time) (_ throttleVerdict, until time.Time, failures int) {
	h := maphash.String(t.seed, user)
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.current(src, now)
	switch {
	case f == nil:
		return throttleNone, time.Time{}, 0
	case !now.Before(f.blockedUntil):
		return throttleNone, time.Time{}, f.failures
	case f.manyNames || slices.Contains(f.names, h):
		return throttleRefused, f.blockedUntil, f.failures
	}
	return throttleKnownOnly, f.blockedUntil, f.failures
}

// failed counts a failed login as user from src at now. When that starts
// a block, it returns its length.
func (t *loginThrottle) failed(src netip.Prefix, user string, now time.Time) (block time.Duration, failures int) {
	h := maphash.String(t.seed, user)
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.current(src, now)
	if f == nil {
		if t.order.Len() >= maxThrottled {
			oldest := t.order.Front()
			delete(t.sources, oldest.Value.(*failingSource).prefix)
			t.order.Remove(oldest)
		}
		f = &failingSource{prefix: src}
		t.sources[src] = t.order.PushBack(f)
	} else {
		t.order.MoveToBack(t.sources[src])
	}
	f.failures++
	f.last = now
	if !f.manyNames && !slices.Contains(f.names, h) {
		if len(f.names) < maxFailedNames {
			f.names = append(f.names, h)
		} else {
			f.manyNames, f.names = true, nil
		}
	}
	if f.failures < t.after || now.Before(f.blockedUntil) {
		return 0, f.failures
	}
	if f.blockedUntil.IsZero() {
		f.block = throttleFirst
	} else {
		f.block = min(2*f.block, throttleMax)
	}
	f.blockedUntil = now.Add(f.block)
	return f.block, f.failures
}

// current returns src's record, nil if none or it lapsed (then it is
// dropped). t.mu is held.
func (t *loginThrottle) current(src netip.Prefix, now time.Time) *failingSource {
	e := t.sources[src]
	if e == nil {
		return nil
	}
	f := e.Value.(*failingSource)
	if now.Before(f.last.Add(throttleForget)) {
		return f
	}
	delete(t.sources, src)
	t.order.Remove(e)
	return nil
}
