package broker

import (
	"container/heap"
	"sync"
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
// The holds are bounded per user and in all (leftHolds):
//
//   - A user holds at most maxPerUser ids (Config.MaxClients: as many as
//     it can have connected at once, so that all of a user's clients
//     leaving at once keep their ids); beyond, its own oldest hold goes.
//   - At most max holds are kept (4 × Config.MaxClients). When they are,
//     a user who holds other ids gives up its own oldest; one who holds
//     none takes the place of the oldest hold of the user holding the
//     most (of those holding as many, the one whose oldest is oldest),
//     if that user holds more than one: a user's last hold is never
//     taken by another's (the id left is then not held, and that is
//     logged). So a user leaving under a new id at each CONNECT evicts
//     its own holds only, never another user's while it holds any, and
//     cannot free another user's id to take it. Before, the holds were
//     one table that dropped the oldest, whoever's: one user connecting
//     4,062 times under new ids in 29 s flushed it, then took another
//     user's id and received the reply to her running request.
//
// Each hold lasts the same time, so the order holds were made in is the
// order they end, for all of them and for each user's: both orders are
// queues, what ended is taken from their fronts, and a user's oldest is
// the front of its queue, in constant time per disconnect (amortized),
// not by a pass over the holds under the lock. A hold replaced (its id
// left again) stays in the queues, stale (its number is no longer the
// id's), until it reaches a front or the queue is compacted.

// leftIDHold is how long a client id stays the user's who left it.
const leftIDHold = 5 * time.Minute

// leftID is the user who left a client id, and until when it is held;
// seq numbers the hold.
type leftID struct {
	user  string
	until time.Time
	seq   uint64
}

// leftQueued is a hold in a queue: stale once its id is held again
// (another seq: two holds may share an until on a coarse clock) or no
// longer.
type leftQueued struct {
	id    string
	until time.Time
	seq   uint64
}

// leftHolds is the client ids held for the users who left them. Safe for
// concurrent use.
type leftHolds struct {
	max, maxPerUser int

	mu      sync.Mutex
	byID    map[string]leftID
	order   []leftQueued // every hold, in the order made
	users   map[string]*userHolds
	largest userHeap // the users holding ids, the one holding the most first
	seq     uint64   // the last hold's number
}

// userHolds is one user's holds.
type userHolds struct {
	name  string
	order []leftQueued // its holds, in the order made (stale ones among them, never first)
	n     int          // its holds that are live
	index int          // in leftHolds.largest
}

func newLeftHolds(maxClients int) *leftHolds {
	return &leftHolds{max: 4 * maxClients, maxPerUser: maxClients, byID: map[string]leftID{}, users: map[string]*userHolds{}}
}

// OnDisconnect holds the client id a TCP client left for its user.
func (g *guard) OnDisconnect(cl *mqtt.Client, _ error, _ bool) {
	if g.acl == nil || cl.Net.Listener == inProcessListener || cl.IsTakenOver() {
		return
	}
	if !g.left.hold(cl.ID, string(cl.Properties.Username), g.clock.Now()) {
		g.stats.note(g.log, "client id not held: the holds of ids left are full, each user holding one", "client", logText(cl.ID),
			"user", logText(string(cl.Properties.Username)), "max_holds", g.left.max)
	}
}

// leftBy returns the user who left client id within leftIDHold.
func (g *guard) leftBy(id string) (string, bool) { return g.left.heldBy(id, g.clock.Now()) }

// hold holds id, left by user at now. It reports false when the holds
// are full, user holds none of them and no user holds more than one: id
// is not held.
func (h *leftHolds) hold(id, user string, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forgetEnded(now)
	if old, ok := h.byID[id]; ok { // left again: the hold is made anew
		h.drop(id, old)
	}
	// A user in h.users holds ids (one that holds none is not there).
	if u := h.users[user]; u != nil && u.n >= h.maxPerUser {
		h.dropOldest(u)
	}
	if len(h.byID) >= h.max {
		switch u := h.users[user]; {
		case u != nil:
			h.dropOldest(u)
		case h.largest[0].n > 1:
			h.dropOldest(h.largest[0])
		default:
			return false
		}
	}
	u := h.users[user]
	if u == nil {
		u = &userHolds{name: user}
		h.users[user] = u
		heap.Push(&h.largest, u)
	}
	h.seq++
	until := now.Add(leftIDHold)
	h.byID[id] = leftID{user: user, until: until, seq: h.seq}
	q := leftQueued{id, until, h.seq}
	h.order = append(h.order, q)
	u.order = append(u.order, q)
	u.n++
	heap.Fix(&h.largest, u.index)
	h.order = h.compact(h.order, len(h.byID))
	u.order = h.compact(u.order, u.n)
	return true
}

// heldBy returns the user who left id, while its hold lasts.
func (h *leftHolds) heldBy(id string, now time.Time) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	l, ok := h.byID[id]
	if !ok || !now.Before(l.until) {
		return "", false
	}
	return l.user, true
}

// live reports whether q is the hold its id has now. h.mu is held.
func (h *leftHolds) live(q leftQueued) bool {
	l, ok := h.byID[q.id]
	return ok && l.seq == q.seq
}

// forgetEnded drops the holds that ended, from the front of the order
// they were made in. h.mu is held.
func (h *leftHolds) forgetEnded(now time.Time) {
	for len(h.order) > 0 {
		q := h.order[0]
		if h.live(q) {
			if now.Before(q.until) {
				return
			}
			h.drop(q.id, h.byID[q.id])
		}
		h.order[0] = leftQueued{}
		h.order = h.order[1:]
	}
}

// dropOldest drops u's oldest hold, the first of its queue. h.mu is
// held.
func (h *leftHolds) dropOldest(u *userHolds) {
	q := u.order[0]
	h.drop(q.id, h.byID[q.id])
}

// drop forgets the hold l of id (its queue entries go stale, and those
// first in its user's queue are taken out), and its user once it holds
// none. h.mu is held.
func (h *leftHolds) drop(id string, l leftID) {
	delete(h.byID, id)
	u := h.users[l.user]
	u.n--
	if u.n == 0 {
		heap.Remove(&h.largest, u.index)
		delete(h.users, l.user)
		return
	}
	for !h.live(u.order[0]) {
		u.order[0] = leftQueued{}
		u.order = u.order[1:]
	}
	heap.Fix(&h.largest, u.index)
}

// compact drops the stale holds of a queue once they are as many as the
// live ones (live of them) and a few: an id left again and again does not
// grow it. The first live hold stays first. h.mu is held.
func (h *leftHolds) compact(order []leftQueued, live int) []leftQueued {
	if len(order) <= 2*live+8 {
		return order
	}
	kept := order[:0]
	for _, q := range order {
		if h.live(q) {
			kept = append(kept, q)
		}
	}
	clear(order[len(kept):])
	return kept
}

// counts returns the holds, and those of user (for the tests).
func (h *leftHolds) counts(user string) (all, users, ofUser int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if u := h.users[user]; u != nil {
		ofUser = u.n
	}
	return len(h.byID), len(h.users), ofUser
}

// userHeap orders the users holding ids: the one holding the most first,
// and of those holding as many, the one whose oldest hold is oldest.
type userHeap []*userHolds

func (x userHeap) Len() int { return len(x) }

func (x userHeap) Less(i, j int) bool {
	if x[i].n != x[j].n {
		return x[i].n > x[j].n
	}
	return x[i].order[0].seq < x[j].order[0].seq
}

func (x userHeap) Swap(i, j int) {
	x[i], x[j] = x[j], x[i]
	x[i].index, x[j].index = i, j
}

func (x *userHeap) Push(v any) {
	u := v.(*userHolds)
	u.index = len(*x)
	*x = append(*x, u)
}

func (x *userHeap) Pop() any {
	old := *x
	u := old[len(old)-1]
	old[len(old)-1] = nil
	*x = old[:len(old)-1]
	u.index = -1
	return u
}
