package broker

import (
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/cmdhost/cmdhost/internal/clock"
)

// A password check (bcrypt: ~65 ms of a core at the cost `cmdhost user
// add` hashes at) is the work a client can make the broker do before it
// knows who the client is, and a CONNECT costs its sender nothing.
// Before, half the cores checked at once and a CONNECT beyond them was
// refused busy: eight clients sending wrong passwords kept the one check
// of a 2-core machine busy, and 10 of 10 correct logins got 0x89. A
// password login now (guard.checkPassword):
//
//  1. is refused at once, without a check, if its source failed too
//     often of late (throttle.go), unless it is a login that passed
//     before, under a user name that has not failed from there;
//  2. gets in without a check if its user name and password passed
//     before (verified.go);
//  3. is checked in its turn (loginQueue): at most half the cores check
//     at once, and a login waits for one fairly across sources. At most
//     one login waits per source (another CONNECT from a source that has
//     one waiting is refused busy at once, 0x89), and they are served in
//     the order they came, those from sources that failed no login of
//     late (throttle.go) before the others: a login waits for the checks
//     running, and at most one check of each other source waiting (of
//     each other source that failed none, if its own failed none). At
//     most maxWaitingPerSlot wait per check slot (at 65 ms a check, the
//     queue drains in ~4 s), and one whose turn does not come within
//     loginWait is refused busy.
//
// Why the failed ones wait behind: a guesser's every source has failed
// after its first guess, so a client logging in while guessers keep the
// checks busy waits for the one running, not for one of each guesser
// (eight guessing sources, at 65 ms a check, made it wait 0.6 s, and
// more than a second once their refused CONNECTs took CPU of their own).
//
// Token logins (sat.go) take the same turns; a re-authentication waits
// for its turn without bound (it holds up its own connection only).

const (
	maxWaitingPerSlot = 64              // logins waiting for a check, per check slot
	loginWait         = 5 * time.Second // the longest a login waits for its turn
)

// Why a login was refused busy (CONNACK 0x89).
const (
	whySourceWaiting = "another login from its address waits for a credentials check"
	whyQueueFull     = "too many logins wait for a credentials check"
)

// loginQueue gives the credential checks their turns. Safe for
// concurrent use: each login waits on its own connection's goroutine.
type loginQueue struct {
	clock      clock.Clock
	slots      int           // checks running at once at most
	maxWaiting int           // logins waiting at most
	wait       time.Duration // loginWait

	mu      sync.Mutex
	running int
	queues  [2]queuedTurns        // waiting, in the order they came: [0] from sources that failed none of late, [1] the others
	waiting map[netip.Prefix]bool // the sources with a CONNECT in queue
	started atomic.Uint64         // checks begun (for the tests)
	// served, if set, is told of each login served after waiting, with
	// the checks begun while it waited, its own included (for the tests:
	// set before any login).
	served func(src netip.Prefix, checks uint64)
}

// queuedTurns is a queue of logins waiting for their turn.
type queuedTurns []*loginTurn

// waitingLen is the number of logins waiting. q.mu is held.
func (q *loginQueue) waitingLen() int { return len(q.queues[0]) + len(q.queues[1]) }

// loginTurn is a login waiting for a check.
type loginTurn struct {
	src     netip.Prefix
	queued  uint64        // loginQueue.started when it came
	connect bool          // a CONNECT's (one per source, bounded wait), not a re-authentication's
	ready   chan struct{} // closed when its turn comes
	served  bool          // its turn came (loginQueue.mu)
}

func newLoginQueue(c clock.Clock) *loginQueue {
	slots := max(1, runtime.GOMAXPROCS(0)/2)
	return &loginQueue{clock: c, slots: slots, maxWaiting: maxWaitingPerSlot * slots, wait: loginWait,
		waiting: map[netip.Prefix]bool{}}
}

// turn waits for a CONNECT's turn to check the credentials it sent from
// src (failed: src failed a login of late). It returns release, to call
// once the check is done, or why the login is refused busy.
func (q *loginQueue) turn(src netip.Prefix, failed bool) (release func(), why string) {
	q.mu.Lock()
	if q.running < q.slots && q.waitingLen() == 0 {
		q.begin()
		q.mu.Unlock()
		return q.release, ""
	}
	switch {
	case q.waiting[src]:
		q.mu.Unlock()
		return nil, whySourceWaiting
	case q.waitingLen() >= q.maxWaiting:
		q.mu.Unlock()
		return nil, whyQueueFull
	}
	t := &loginTurn{src: src, queued: q.started.Load(), connect: true, ready: make(chan struct{})}
	line := &q.queues[0]
	if failed {
		line = &q.queues[1]
	}
	*line = append(*line, t)
	q.waiting[src] = true
	q.mu.Unlock()

	timer := clock.NewTimer(q.clock, q.wait)
	defer timer.Stop()
	select {
	case <-t.ready:
		return q.release, ""
	case <-timer.C:
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if t.served { // its turn came as the timer fired
		return q.release, ""
	}
	for i := range q.queues {
		q.queues[i] = slices.DeleteFunc(q.queues[i], func(w *loginTurn) bool { return w == t })
	}
	delete(q.waiting, src)
	return nil, fmt.Sprintf("waited %v for a credentials check", q.wait)
}

// turnWait waits for a re-authentication's turn, without bound, and
// returns release.
func (q *loginQueue) turnWait(src netip.Prefix) (release func()) {
	q.mu.Lock()
	if q.running < q.slots && q.waitingLen() == 0 {
		q.begin()
		q.mu.Unlock()
		return q.release
	}
	t := &loginTurn{src: src, ready: make(chan struct{})}
	q.queues[0] = append(q.queues[0], t)
	q.mu.Unlock()
	<-t.ready
	return q.release
}

// release ends a check and gives the next login its turn.
func (q *loginQueue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running--
	for q.running < q.slots && q.waitingLen() > 0 {
		line := &q.queues[0]
		if len(*line) == 0 {
			line = &q.queues[1]
		}
		t := (*line)[0]
		(*line)[0] = nil
		*line = (*line)[1:]
		if t.connect {
			delete(q.waiting, t.src)
		}
		t.served = true
		q.begin()
		if q.served != nil {
			q.served(t.src, q.started.Load()-t.queued)
		}
		close(t.ready)
	}
}

// begin counts a check begun. q.mu is held.
func (q *loginQueue) begin() {
	q.running++
	q.started.Add(1)
}

// whyThrottled is why a password login from a blocked source is refused.
func whyThrottled(until time.Time, now time.Time) string {
	return fmt.Sprintf("its address failed %d or more logins of late: its password logins are refused without a check for %v more",
		throttleAfter, until.Sub(now).Round(time.Millisecond))
}

// checkPassword admits or refuses a password login (the steps at the top
// of this file): ok, or the CONNACK code and why.
func (g *guard) checkPassword(cl *mqtt.Client, user, password string) (code packets.Code, why string, ok bool) {
	src := sourceOf(cl.Net.Conn.RemoteAddr())
	now := g.clock.Now()
	verdict, until, failures := g.throttle.check(src, user, now)
	if verdict == throttleRefused {
		g.stats.loginsThrottled.Add(1)
		return packets.ErrConnectionRateExceeded, whyThrottled(until, now), false
	}
	version, _ := g.users.Version() // an error is Check's, logged there
	if g.verified.has(user, password, version, now) {
		return packets.CodeSuccess, "", true
	}
	if verdict == throttleKnownOnly {
		g.throttle.failed(src, user, now) // the name is refused from here until the block ends
		g.stats.loginsThrottled.Add(1)
		return packets.ErrConnectionRateExceeded, whyThrottled(until, now), false
	}
	release, busy := g.checks.turn(src, failures > 0)
	if release == nil {
		return packets.ErrServerBusy, busy, false
	}
	match, err := g.users.Check(user, password)
	release()
	if err != nil {
		g.stats.note(g.log, "users file not re-read: checking against the users last read", "err", err)
	}
	if !match {
		if block, failures := g.throttle.failed(src, user, g.clock.Now()); block > 0 {
			g.stats.noteThrottled(g.log, "logins throttled: an address failed too many; its password logins are refused without a check for a while",
				"source", src.String(), "failures", failures, "blocked_for", block, "remote", cl.Net.Remote)
		}
		return packets.ErrBadUsernameOrPassword, whyWrongPassword, false
	}
	g.verified.add(user, password, version, now)
	return packets.CodeSuccess, "", true
}
