package broker

import (
	"encoding/hex"
	"errors"
	"strings"
	"sync/atomic"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// What the embedded broker does for the Azure IoT Operations state store
// protocol the host serves on it (package statestore; docs/state.md):
//
//   - Topics. Every client the ACL knows may publish to the state store's
//     request topic (StateStoreTopic): the store answers an op the grants
//     refuse with its own error, `-ERR not authorized`. The Go SDK's
//     client takes its response topic under clients/<HEX>/, HEX the upper
//     case hex of its client id: that exact topic
//     (clients/<HEX>/<StateStoreTopic>/response) is its own, as its
//     clients/<clientId>/ prefix is (ownPrefix), and it is no other
//     client's (a client whose id is another's hex does not get it). The
//     notify topics, under clients/statestore/v1/<id>/<HEX>/, are the
//     client's of that HEX to receive, and nobody's response prefix.
//   - Notifications reach the client that registered for them whatever it
//     subscribed to (SubscribeClient): the Go and .NET SDKs' clients hold
//     no subscription that matches their notify topics (the AIO broker
//     delivers into the session).
//   - Registrations end when their client goes (OnClientGone).
//   - Grants: `state read PREFIX` and `state write PREFIX` lines of the ACL
//     file (parseACL) say which keys a user may read (GET, KEYNOTIFY) and
//     write (SET, DEL, VDEL; writing includes reading); StateAllowed.

// StateStoreTopic is the state store protocol's request topic
// (statestore.Topic; a test of package host checks the two agree).
const StateStoreTopic = "statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/command/invoke"

// stateNotifyRoot starts the state store's notify topics.
const stateNotifyRoot = responsePrefix + "statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/"

// hexUpper is the Go SDK's form of a client id in a topic.
func hexUpper(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) }

// hexResponseTopic is the response topic of the Go SDK's state store
// client clientID.
func hexResponseTopic(clientID string) string {
	return responsePrefix + hexUpper(clientID) + "/" + StateStoreTopic + "/response"
}

// isHexResponseTopic reports whether topic has the form of a Go SDK's
// state store response topic, of whichever client.
func isHexResponseTopic(topic string) bool {
	rest, ok := strings.CutPrefix(topic, responsePrefix)
	if !ok {
		return false
	}
	h, tail, ok := strings.Cut(rest, "/")
	return ok && tail == StateStoreTopic+"/response" && h != "" && isUpperHex(h)
}

func isUpperHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return len(s)%2 == 0
}

// ownNotify reports whether filter is within the client's own state
// store notify topics, which it may subscribe to and receive.
func ownNotify(clientID, filter string) bool {
	return clientID != "" && strings.HasPrefix(filter, stateNotifyRoot+hexUpper(clientID)+"/command/notify/")
}

// stateGrant is a `state` line: a key prefix a user may read or write.
type stateGrant struct {
	prefix string // "" for every key (`*`)
	write  bool
}

// parseStateLine reads a `state read PREFIX` or `state write PREFIX` line
// (fields split), PREFIX `*` for every key.
func parseStateLine(fields []string) (stateGrant, error) {
	if len(fields) != 3 || (fields[1] != "read" && fields[1] != "write") {
		return stateGrant{}, errors.New("`state` takes read or write and a key prefix (* for every key): state write plugin/NAME/")
	}
	g := stateGrant{prefix: fields[2], write: fields[1] == "write"}
	if g.prefix == "*" {
		g.prefix = ""
	}
	return g, nil
}

// allowsState reports whether g's `state` lines let its user read (write
// false) or write key.
func (g *grants) allowsState(key []byte, write bool) bool {
	for _, s := range g.state {
		if (s.write || !write) && strings.HasPrefix(string(key), s.prefix) {
			return true
		}
	}
	return false
}

// StateAllowed reports whether the state store may let user (the user
// the broker verified for a request's sender, identity.go) read (write
// false) or write key: on a broker without an ACL (anonymous, on
// loopback) anyone may; with one, the user's `state` lines say; a user
// the ACL file does not name, a client no one authenticated, and every
// user of the default ACL of a broker that authenticates may not.
func (e *Embedded) StateAllowed(user string, key []byte, write bool) bool {
	acl := e.guard.acl
	if acl == nil {
		return true
	}
	rules := acl.rules.Load()
	g := rules.users[user]
	if g == nil && user != "" {
		g = rules.anyUser
	}
	return g != nil && g.allowsState(key, write)
}

// errNoClient is SubscribeClient's error for a client that is gone.
var errNoClient = errors.New("no such client connected")

// SubscribeClient subscribes the connected client clientID to filter at
// QoS 1, as if it had subscribed itself (a subscription it holds already
// stays as it is): the state store's notifications reach the client that
// registered for them this way. The subscription lasts as the client's
// own would (its session's), and deliveries are checked against the ACL
// as any are.
func (e *Embedded) SubscribeClient(clientID, filter string) error {
	cl, ok := e.srv.Clients.Get(clientID)
	if !ok || cl.Closed() {
		return errNoClient
	}
	if _, ok := cl.State.Subscriptions.Get(filter); ok {
		return nil
	}
	sub := packets.Subscription{Filter: filter, Qos: 1}
	if e.srv.Topics.Subscribe(clientID, sub) {
		atomic.AddInt64(&e.srv.Info.Subscriptions, 1)
	}
	cl.State.Subscriptions.Add(filter, sub)
	return nil
}

// Connected reports whether the client clientID is connected.
func (e *Embedded) Connected(clientID string) bool {
	cl, ok := e.srv.Clients.Get(clientID)
	return ok && !cl.Closed()
}

// OnClientGone calls f with the client id of each client whose
// connection ends, unless a new connection has taken its session over
// already (that one keeps what the client registered since).
func (e *Embedded) OnClientGone(f func(clientID string)) error {
	return e.srv.AddHook(&goneHook{srv: e.srv, f: f}, nil)
}

// goneHook is OnClientGone's.
type goneHook struct {
	mqtt.HookBase
	srv *mqtt.Server
	f   func(string)
}

func (h *goneHook) ID() string { return "cmdhost-client-gone" }

func (h *goneHook) Provides(b byte) bool { return b == mqtt.OnDisconnect }

func (h *goneHook) OnDisconnect(cl *mqtt.Client, _ error, _ bool) {
	if cur, ok := h.srv.Clients.Get(cl.ID); ok && cur != cl && !cur.Closed() {
		return // taken over
	}
	h.f(cl.ID)
}
