package broker

import (
	"slices"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// UserProperty is the user property the embedded broker stamps on every
// request (a PUBLISH with a response topic) with the user name it
// authenticated for the connection that sent it, beside ClientIDProperty:
// together they are the request's verified caller (abi.Caller). The broker
// removes any such property a client sent, from every PUBLISH, and stamps
// it only when the name was verified (verifiedUser): a client that
// connected without a check gets none, whatever user name its CONNECT
// claimed. Its name starts with __: it never reaches a handler's metadata.
const UserProperty = "__brokerUser"

// verifiedUser returns the user name the broker authenticated for cl, ""
// when it checked none (auth.go says who is checked):
//
//   - on the TLS listener with a client CA, the common name of the
//     certificate the handshake verified (authenticate made it the
//     client's user name);
//   - with a users file or token keys, the user name whose password the
//     broker checked at CONNECT, or the subject of the service account
//     token it verified (sat.go): every client over the network logs in
//     then;
//   - otherwise (an anonymous listener, the host's own clients in
//     process) none: a user name in the CONNECT is a claim.
func (g *guard) verifiedUser(cl *mqtt.Client) string {
	if cl.Net.Listener == inProcessListener {
		return ""
	}
	// A client of the TLS listener with a client CA logged in with its
	// certificate: authenticate made its common name the user name (and
	// refused another), so the name is read from there, not from the
	// connection's state at each request.
	if cl.Net.Listener == tlsListenerID && g.cfg.TLSClientCAFile != "" || g.users != nil || g.sat != nil {
		return string(cl.Properties.Username)
	}
	return ""
}

// isStampProperty reports whether u is one of the properties the broker
// stamps, which no client may send.
func isStampProperty(u packets.UserProperty) bool {
	return u.Key == ClientIDProperty || u.Key == UserProperty
}

// stamp returns a request's user properties with the sender's verified
// caller added; user has no stamp properties (OnPublish removed them).
func (g *guard) stamp(cl *mqtt.Client, user []packets.UserProperty) []packets.UserProperty {
	user = append(slices.Clip(user), packets.UserProperty{Key: ClientIDProperty, Val: cl.ID})
	if name := g.verifiedUser(cl); name != "" {
		user = append(user, packets.UserProperty{Key: UserProperty, Val: name})
	}
	return user
}

// StampFor reserves clientID for one of the host's own clients (Reserve)
// that is told who sent each message it receives (the host's trigger
// session): every message delivered to it carries the sender's client id
// and verified user in ClientIDProperty and UserProperty, as a request
// does. Those of a message that is not a request reach no other client:
// a sender's identity is the host's to know, not every subscriber's.
func (e *Embedded) StampFor(clientID string) {
	e.guard.reserve(clientID)
	e.guard.stampFor(clientID)
}

// stampFor adds clientID to the clients told who sent each message.
func (g *guard) stampFor(clientID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.told.Load()
	next := make(map[string]bool, 1)
	if old != nil {
		for id := range *old {
			next[id] = true
		}
	}
	next[clientID] = true
	g.told.Store(&next)
}

// stampsAll reports whether messages that are not requests are stamped:
// when some client is told who sent them (StampFor).
func (g *guard) stampsAll() bool { return g.told.Load() != nil }

// unstamped returns what cl is sent of pk, a PUBLISH the broker stamped:
// a message that is not a request loses its stamps unless cl is told who
// sent it. pk's slices are shared with the copies of other clients and
// the held message: a new slice, never an edit.
func (g *guard) unstamped(cl *mqtt.Client, pk packets.Packet) packets.Packet {
	if pk.Properties.ResponseTopic != "" || !slices.ContainsFunc(pk.Properties.User, isStampProperty) {
		return pk
	}
	if told := g.told.Load(); told != nil && (*told)[cl.ID] && cl.Net.Listener == inProcessListener {
		return pk
	}
	pk.Properties.User = slices.DeleteFunc(slices.Clone(pk.Properties.User), isStampProperty)
	return pk
}

// GrantsAdmin reports whether the ACL file grants user the admin ops
// (its `admin` line): false without an ACL file (the default ACL grants
// no one the admin ops). The host lets
// such a user, as the verified caller of an admin op, use the ops that
// change state without the admin token.
func (e *Embedded) GrantsAdmin(user string) bool {
	return user != "" && e.guard.acl != nil && e.guard.acl.grantsAdmin(user)
}

// grantsAdmin reports whether user may publish on every admin topic.
func (a *ACL) grantsAdmin(user string) bool {
	g := a.rules.Load().users[user]
	if g == nil {
		return false
	}
	for _, want := range adminWrite {
		if !slices.ContainsFunc(g.write, func(p string) bool { return filterWithin(want, p) }) {
			return false
		}
	}
	return true
}
