package broker

import (
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
)

// A client id is a response prefix (clients/<clientId>/, acl.go), and a
// reply outlives the connection of the caller it is for: a request
// expires when its caller says, not when it disconnects. So with an ACL,
// a client id a TCP client left stays its user's for leftIDHold: another
// user connecting with it is refused (CONNACK 0x85), as while the id is
// connected or its session lasts, instead of getting the replies still on
// their way to it. The same user may come back with it at once. Anonymous
// clients (no user) share one name, so the hold does not tell them apart.
//
// At most maxLeftIDs ids are held (4 × Config.MaxClients): past it the one
// left first is forgotten, so that a client leaving under a new id at
// each CONNECT cannot grow the table. The ids wait in the order they were
// left (leftOrder), which is the order their holds end (each is held for
// the same time): what ended and, when full, the first left are taken
// from its front, in constant time per disconnect, not by a pass over
// the table under the guard's lock.

// leftIDHold is how long a client id stays the user's who left it.
const leftIDHold = 5 * time.Minute

// leftID is the user who left a client id, and until when it is held;
// seq numbers the hold (guard.leftSeq).
type leftID struct {
	user  string
	until time.Time
	seq   uint64
}

// leftQueued is a hold in leftOrder: stale once the id is held again
// (another seq: two holds may share an until on a coarse clock) or no
// longer.
type leftQueued struct {
	id    string
	until time.Time
	seq   uint64
}

// maxLeftIDs bounds the ids held.
func (g *guard) maxLeftIDs() int { return 4 * g.cfg.MaxClients }

// OnDisconnect holds the client id a TCP client left for its user.
func (g *guard) OnDisconnect(cl *mqtt.Client, _ error, _ bool) {
	if g.acl == nil || cl.Net.Listener == inProcessListener || cl.IsTakenOver() {
		return
	}
	now := g.clock.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.forgetLeft(now)
	until := now.Add(leftIDHold)
	g.leftSeq++
	g.left[cl.ID] = leftID{user: string(cl.Properties.Username), until: until, seq: g.leftSeq}
	g.leftOrder = append(g.leftOrder, leftQueued{cl.ID, until, g.leftSeq})
	if len(g.leftOrder) > 2*g.maxLeftIDs() { // an id left again and again: drop the stale
		live := g.leftOrder[:0]
		for _, q := range g.leftOrder {
			if l, ok := g.left[q.id]; ok && l.seq == q.seq {
				live = append(live, q)
			}
		}
		clear(g.leftOrder[len(live):])
		g.leftOrder = live
	}
}

// forgetLeft drops, from the front of leftOrder, the holds that ended or
// went stale, and while the table is full the one left first. g.mu is
// held.
func (g *guard) forgetLeft(now time.Time) {
	for len(g.leftOrder) > 0 {
		q := g.leftOrder[0]
		l, held := g.left[q.id]
		switch {
		case !held || l.seq != q.seq: // stale: held again since, or forgotten
		case !now.Before(q.until) || len(g.left) >= g.maxLeftIDs():
			delete(g.left, q.id)
		default:
			return
		}
		g.leftOrder[0] = leftQueued{}
		g.leftOrder = g.leftOrder[1:]
	}
}

// leftBy returns the user who left client id within leftIDHold.
func (g *guard) leftBy(id string) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	l, ok := g.left[id]
	if !ok {
		return "", false
	}
	if !g.clock.Now().Before(l.until) {
		delete(g.left, id)
		return "", false
	}
	return l.user, true
}
