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
// each CONNECT cannot grow the table.

// leftIDHold is how long a client id stays the user's who left it.
const leftIDHold = 5 * time.Minute

// leftID is the user who left a client id, and until when it is held.
type leftID struct {
	user  string
	until time.Time
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
	if len(g.left) >= g.maxLeftIDs() {
		g.forgetLeft(now)
	}
	g.left[cl.ID] = leftID{user: string(cl.Properties.Username), until: now.Add(leftIDHold)}
}

// forgetLeft drops the holds that ended, and if none did, the one that
// ends first. g.mu is held.
func (g *guard) forgetLeft(now time.Time) {
	first, firstID := time.Time{}, ""
	for id, l := range g.left {
		if !now.Before(l.until) {
			delete(g.left, id)
			continue
		}
		if firstID == "" || l.until.Before(first) {
			first, firstID = l.until, id
		}
	}
	if len(g.left) >= g.maxLeftIDs() {
		delete(g.left, firstID)
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
