package broker

import (
	"cmp"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/passwd"
	"github.com/cmdhost/cmdhost/internal/ratelog"
)

// ClientIDProperty is the user property the embedded broker stamps on
// every request (a PUBLISH with a response topic) with the client id of
// the connection that sent it: the id the broker authenticated, not one
// the sender chose. The broker removes any such property a client sent,
// from every PUBLISH, so that a host on the embedded broker may key what
// it keeps per invoker (its dedup share) by it (rpc.Config.TrustBrokerClientID).
// Its name starts with __: it never reaches a handler's metadata.
const ClientIDProperty = "__brokerClientId"

// inProcessListener is the id of the listener of the host's own clients
// (DialInProcess); tcpListenerID the one of everyone else.
const (
	inProcessListener = "in-process"
	tcpListenerID     = "tcp"
	tlsListenerID     = "tls"
)

// Stats counts what the embedded broker refused or dropped, for the
// metrics and the tests.
type Stats struct {
	// ClientsRefused counts CONNECTs refused (not authenticated, a client
	// id the host uses, too many clients) and TLS handshakes failed.
	ClientsRefused uint64
	// LoginsThrottled counts password logins refused without a check:
	// their source address failed too many of late (throttle.go).
	LoginsThrottled uint64
	// PendingClosed counts connections closed before their CONNECT was
	// read: to make room for newer ones (the bound on the connections not
	// logged in, pending.go), or for sending none within the connect
	// timeout.
	PendingClosed uint64
	// ClientsDropped counts clients disconnected because they did not read
	// what they were sent (their write queue over its bound, or their
	// socket taking nothing for the write timeout), did not acknowledge it
	// (held.go), or held the most when the broker held too much.
	ClientsDropped uint64
	// MessagesDropped counts messages not delivered to a client (its
	// in-flight window full or its unacknowledged bytes over their bound:
	// a client that does not acknowledge; the broker's queue of packets for
	// it full; its session left too long ago) and messages held for a
	// client that were dropped (held.go).
	MessagesDropped uint64
	// PacketsTooLarge counts connections ended for a packet over the
	// maximum packet size.
	PacketsTooLarge uint64
	// SessionsDropped counts sessions of disconnected clients dropped
	// before they expired, the oldest beyond Config.MaxClients of them.
	SessionsDropped uint64
	// HeldBytes is what the broker holds for its clients over TCP now:
	// messages they have not acknowledged and bytes queued for their
	// sockets (held.go), at most about Config.MaxHeldBytes.
	HeldBytes int64
}

// stats is what Stats reads, and the rate limits of the refusals' log.
type stats struct {
	clientsRefused, clientsDropped, messagesDropped, packetsTooLarge, sessionsDropped atomic.Uint64

	pendingClosed, loginsThrottled atomic.Uint64
	// refusals limits the refusals' lines; pendingLog those of the
	// connections closed before their CONNECT, passwords those of a wrong
	// password, throttled those of the logins refused without a check,
	// each apart: a flood of one kind leaves the others their line. Set
	// by newStats.
	refusals, pendingLog, throttled ratelog.Limiter
	passwords                       ratelog.Bucket
}

func newStats() *stats {
	s := &stats{passwords: ratelog.Bucket{Interval: time.Second, Burst: 5}}
	s.refusals.Interval, s.pendingLog.Interval, s.throttled.Interval = time.Second, time.Second, time.Second
	return s
}

// Stats returns the broker's counters.
func (e *Embedded) Stats() Stats {
	s := e.stats
	return Stats{ClientsRefused: s.clientsRefused.Load(), ClientsDropped: s.clientsDropped.Load(),
		MessagesDropped: s.messagesDropped.Load(), PacketsTooLarge: s.packetsTooLarge.Load(), SessionsDropped: s.sessionsDropped.Load(),
		PendingClosed: s.pendingClosed.Load(), LoginsThrottled: s.loginsThrottled.Load(), HeldBytes: e.held.total.Load()}
}

// note logs a refusal, at most one a second with the number left out
// since the last (a flood of bad clients must not flood the log).
func (s *stats) note(log *slog.Logger, msg string, args ...any) {
	noteLimited(&s.refusals, log, msg, args...)
}

// notePending logs a connection closed before its CONNECT, as note does,
// at most one a second of its own.
func (s *stats) notePending(log *slog.Logger, msg string, args ...any) {
	noteLimited(&s.pendingLog, log, msg, args...)
}

// notePassword logs a wrong password: five at once, then one a second.
func (s *stats) notePassword(log *slog.Logger, msg string, args ...any) {
	noteLimited(&s.passwords, log, msg, args...)
}

// noteThrottled logs a login refused without a check, as note does, at
// most one a second of its own.
func (s *stats) noteThrottled(log *slog.Logger, msg string, args ...any) {
	noteLimited(&s.throttled, log, msg, args...)
}

// noteLimited logs a warning if l lets it through, with the number of
// lines l left out since the last.
func noteLimited(l interface {
	Allow(time.Time) (bool, int)
}, log *slog.Logger, msg string, args ...any) {
	ok, leftOut := l.Allow(time.Now())
	if !ok {
		return
	}
	log.Warn("embedded broker: "+msg, withLeftOut(leftOut, "refusals_not_logged", args...)...)
}

// guard is the hook through which the broker admits clients and what
// they send (it replaces mochi's allow-all auth hook):
//
//   - A client over the network is authenticated first (auth.go): with a
//     users file or a client CA, one that is not who it says is refused
//     (CONNACK 0x87 or 0x86).
//   - The client ids of the host's own clients are reserved (Reserve, and
//     every id that connected in process): a client over TCP connecting
//     with one is refused with CONNACK 0x85 (client identifier not valid)
//     instead of taking over the host's session and its subscriptions.
//   - Beyond Config.MaxClients TCP clients logged in, a CONNECT is refused
//     with CONNACK 0x89 (server busy); the connections yet to log in are
//     bounded apart (pending.go). The host's own clients always get in.
//     Beyond Config.MaxClients sessions of disconnected TCP clients, the
//     oldest are dropped (boundSessions).
//   - A TCP client with Config.MaxInflight QoS 1/2 messages unacknowledged
//     gets no more until it acknowledges (each one not delivered is counted
//     in MessagesDropped): mochi otherwise keeps up to 65,535 copies per
//     client, connected or not, for as long as its session lasts. What
//     they hold in bytes and for how long is bounded too (held.go).
//   - Every PUBLISH loses any ClientIDProperty or UserProperty its sender
//     set; a request gets the sender's client id and verified user name
//     in them (identity.go). A will message loses them too, and its
//     topic must pass the ACL at CONNECT (checkWill).
//   - CONNACKs to TCP clients announce the Maximum Packet Size, and to
//     everyone that retained messages are not available (mochi's CONNACK
//     says neither).
type guard struct {
	mqtt.HookBase
	srv   *mqtt.Server
	cfg   *Config
	stats *stats
	log   *slog.Logger
	conns *netConns    // the connections over the network (pending.go)
	users *passwd.File // nil: no users file
	acl   *ACL         // nil: no ACL file, everything allowed
	sat   *satCheck    // nil: no K8S-SAT logins (sat.go)
	held  *holdings    // what the broker holds for each TCP client (held.go)
	// checks gives the password and token checks their turns, throttle
	// refuses the sources that failed too often, verified remembers the
	// logins that passed (logins.go).
	checks   *loginQueue
	throttle *loginThrottle
	verified *verifiedLogins

	mu       sync.Mutex
	reserved map[string]bool
	// left holds, with an ACL, the user of each client id a TCP client
	// left within leftIDHold (leftid.go).
	left  *leftHolds
	clock clock.Clock
	// told are the client ids told who sent each message (StampFor,
	// identity.go); nil: none, and messages that are not requests are
	// not stamped.
	told atomic.Pointer[map[string]bool]
}

func (g *guard) ID() string { return "cmdhost-guard" }

func (g *guard) Provides(b byte) bool {
	switch b {
	case mqtt.OnConnect, mqtt.OnConnectAuthenticate, mqtt.OnACLCheck, mqtt.OnPublish, mqtt.OnPublishDropped, mqtt.OnPacketEncode,
		mqtt.OnDisconnect:
		return true
	}
	return false
}

// reserve reserves a client id for the host's own clients.
func (g *guard) reserve(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reserved[id] = true
}

func (g *guard) isReserved(id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reserved[id]
}

// OnConnect admits a client (it runs after mochi checked the CONNECT and
// before the session is set up: a refused client takes nothing over).
func (g *guard) OnConnect(cl *mqtt.Client, pk packets.Packet) error {
	if cl.Net.Listener == inProcessListener {
		g.reserve(cl.ID)
		return nil
	}
	bc, _ := cl.Net.Conn.(*boundedConn)
	if bc != nil && !g.conns.loggingIn(bc) { // closed meanwhile
		return g.refuse(cl, packets.ErrServerBusy)
	}
	// The cheap refusals first: a client refused for them costs no
	// password check.
	if g.isReserved(cl.ID) {
		g.stats.clientsRefused.Add(1)
		// Logged each time, not rate-limited: someone is trying to take the
		// host's session, and the operator must see who.
		g.log.Warn("embedded broker: client refused: its client id is one the host uses", "client", logText(cl.ID),
			"remote", cl.Net.Remote)
		return g.refuse(cl, packets.ErrClientIdentifierNotValid)
	}
	if g.conns.full() {
		return g.refuseTooMany(cl)
	}
	if code, why, ok := g.authenticate(cl, pk); !ok {
		g.stats.clientsRefused.Add(1)
		args := []any{"client", logText(cl.ID), "remote", cl.Net.Remote, "user", logText(string(pk.Connect.Username)),
			"reason_code", fmt.Sprintf("0x%02x", code.Code)}
		switch code {
		case packets.ErrBadUsernameOrPassword:
			// Worth reading each (someone mistyped, or guesses) until
			// they come in a flood: a few at once, then one a second.
			g.stats.notePassword(g.log, "client refused: "+why, args...)
		case packets.ErrConnectionRateExceeded:
			g.stats.noteThrottled(g.log, "client refused: "+why, args...)
		default:
			g.stats.note(g.log, "client refused: "+why, args...)
		}
		return g.refuse(cl, code)
	}
	if g.acl != nil {
		// A client id is a session: another user taking it would get its
		// response prefix (acl.go, ownPrefix) and its unacknowledged
		// messages.
		if other, ok := g.srv.Clients.Get(cl.ID); ok && string(other.Properties.Username) != string(cl.Properties.Username) {
			g.stats.clientsRefused.Add(1)
			g.log.Warn("embedded broker: client refused: its client id is another user's", "client", logText(cl.ID),
				"remote", cl.Net.Remote, "user", logText(string(cl.Properties.Username)))
			return g.refuse(cl, packets.ErrClientIdentifierNotValid)
		}
		if user, ok := g.leftBy(cl.ID); ok && user != string(cl.Properties.Username) {
			g.stats.clientsRefused.Add(1)
			g.stats.note(g.log, "client refused: its client id is one another user left a moment ago (replies may still be on their way to it)",
				"client", logText(cl.ID), "remote", cl.Net.Remote, "user", logText(string(cl.Properties.Username)))
			return g.refuse(cl, packets.ErrClientIdentifierNotValid)
		}
	}
	if err := g.checkWill(cl); err != nil {
		return err
	}
	if bc != nil && !g.conns.admit(bc) { // the last places taken while it logged in
		return g.refuseTooMany(cl)
	}
	if _, resumes := g.srv.Clients.Get(cl.ID); !resumes {
		g.boundSessions()
	}
	return nil
}

// refuseTooMany refuses a client beyond Config.MaxClients.
func (g *guard) refuseTooMany(cl *mqtt.Client) error {
	g.stats.clientsRefused.Add(1)
	g.stats.note(g.log, "client refused: too many clients", "client", logText(cl.ID), "remote", cl.Net.Remote,
		"max_clients", g.cfg.MaxClients)
	return g.refuse(cl, packets.ErrServerBusy)
}

// boundSessions drops the sessions of TCP clients that disconnected
// longest ago, beyond Config.MaxClients of them, before a new session
// is made. A session outlives its connection for the expiry its client
// chose (up to 136 years; forever for a v3 client without clean start),
// holding its subscriptions and up to Config.MaxInflight messages, and
// disconnected sessions count against no other bound: a client could
// otherwise leave one behind at each CONNECT under a new client id until
// the broker's memory ran out. Sessions are scanned only once there are
// MaxClients or more (the in-process ones included).
func (g *guard) boundSessions() {
	if g.srv.Clients.Len() < g.cfg.MaxClients {
		return
	}
	var gone []*mqtt.Client
	for _, c := range g.srv.Clients.GetAll() {
		if c.Net.Listener != inProcessListener && c.Closed() && c.StopTime() > 0 {
			gone = append(gone, c)
		}
	}
	if len(gone) < g.cfg.MaxClients {
		return
	}
	slices.SortFunc(gone, func(a, b *mqtt.Client) int { return cmp.Compare(a.StopTime(), b.StopTime()) })
	for _, c := range gone[:len(gone)-g.cfg.MaxClients+1] {
		c.ClearInflights()
		g.srv.UnsubscribeClient(c)
		g.srv.Clients.Delete(c.ID)
		g.stats.sessionsDropped.Add(1)
		g.stats.note(g.log, "session dropped: more disconnected sessions than --broker-max-clients", "client", logText(c.ID),
			"user", logText(string(c.Properties.Username)), "max_clients", g.cfg.MaxClients)
	}
}

// checkWill admits a client's will message (mochi publishes it for the
// client when it goes, past OnACLCheck and OnPublish): it loses any stamp
// the client forged in it, and a will on a topic the ACL does not let the
// client publish to refuses the CONNECT (0x87), as mosquitto does, rather
// than letting a client that may publish nowhere announce a replica, an
// event or a reply in another's prefix.
func (g *guard) checkWill(cl *mqtt.Client) error {
	w := &cl.Properties.Will
	if w.Flag == 0 {
		return nil
	}
	if slices.ContainsFunc(w.User, isStampProperty) {
		w.User = slices.DeleteFunc(slices.Clone(w.User), isStampProperty)
	}
	if g.acl != nil && !g.acl.allows(cl, string(cl.Properties.Username), w.TopicName, true) {
		g.stats.clientsRefused.Add(1)
		g.stats.note(g.log, "client refused: the ACL grants it no publishing to its will topic", "client", logText(cl.ID),
			"user", logText(string(cl.Properties.Username)), "topic", logText(w.TopicName), "remote", cl.Net.Remote)
		return g.refuse(cl, packets.ErrNotAuthorized)
	}
	return nil
}

// logMax bounds what a client chose (its id, user name, a topic) in a
// log line: each may be 64 KiB.
const logMax = 128

// logText is s cut to logMax bytes, on a rune boundary, marked when cut.
func logText(s string) string {
	if len(s) <= logMax {
		return s
	}
	cut := logMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// refuse sends a CONNACK with code and returns the error that makes mochi
// close the connection (errRefused: logged above, so quiet in mochi's log).
// A v3 client, whose CONNACK has no code for busy or too many
// connections, is told the server is unavailable.
func (g *guard) refuse(cl *mqtt.Client, code packets.Code) error {
	sent := code
	if cl.Properties.ProtocolVersion < 5 && (code == packets.ErrServerBusy || code == packets.ErrConnectionRateExceeded) {
		sent = packets.ErrServerUnavailable // mochi sends it as v3's 0x03
	}
	_ = g.srv.SendConnack(cl, sent, false, nil)
	return &refusedError{code}
}

// refusedError is what OnConnect returns for a refused client.
type refusedError struct{ code packets.Code }

func (e *refusedError) Error() string { return "client refused: " + e.code.Reason }

// OnConnectAuthenticate lets everyone in: OnConnect authenticated the
// client already (auth.go), with a CONNACK code of its own choosing.
func (g *guard) OnConnectAuthenticate(*mqtt.Client, packets.Packet) bool { return true }

// OnACLCheck checks a TCP client's publish or subscription against the
// ACL (acl.go), and refuses a delivery while its in-flight window is
// full. mochi asks it before each publish (write true: refused, PUBACK
// 0x87 at QoS 1, dropped at QoS 0), each subscription (write false, with
// the filter: refused, SUBACK 0x87) and each delivery (write false, with
// the topic): a client whose window is full gets its subscriptions
// refused as well until it acknowledges. The host's own clients are
// never checked.
func (g *guard) OnACLCheck(cl *mqtt.Client, topic string, write bool) bool {
	if cl.Net.Listener == inProcessListener {
		return true
	}
	if g.acl != nil && !g.acl.allows(cl, string(cl.Properties.Username), topic, write) {
		what := "subscription or delivery"
		if write {
			what = "publish"
		}
		g.stats.note(g.log, what+" refused: the ACL file grants it no such topic", "client", logText(cl.ID),
			"user", logText(string(cl.Properties.Username)), "topic", logText(topic), "remote", cl.Net.Remote)
		return false
	}
	if write {
		return true
	}
	if cl.State.Inflight.Len() < g.cfg.MaxInflight {
		return g.held.admit(cl)
	}
	g.stats.messagesDropped.Add(1)
	g.stats.note(g.log, "message not delivered: the client's in-flight window is full (it does not acknowledge)",
		"client", logText(cl.ID), "remote", cl.Net.Remote, "max_inflight", g.cfg.MaxInflight)
	return false
}

// OnPublish removes any ClientIDProperty or UserProperty the sender set
// and stamps a request with the sender's client id and verified user;
// every message, when a client is told who sent each (StampFor).
func (g *guard) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if rt := pk.Properties.ResponseTopic; rt != "" && g.acl != nil && cl.Net.Listener != inProcessListener && !ownPrefix(cl.ID, rt) {
		// The host answers on the response topic: one outside the
		// client's own prefix would have the host publish what the client
		// chose where the ACL lets the client publish nothing.
		g.stats.note(g.log, "publish refused: its response topic is not under the client's own prefix", "client", logText(cl.ID),
			"user", logText(string(cl.Properties.Username)), "response_topic", logText(rt), "remote", cl.Net.Remote)
		if cl.Properties.ProtocolVersion == 5 && pk.FixedHeader.Qos > 0 {
			return pk, packets.ErrNotAuthorized // PUBACK 0x87
		}
		return pk, packets.ErrRejectPacket // dropped
	}
	user := pk.Properties.User
	if slices.ContainsFunc(user, isStampProperty) {
		user = slices.DeleteFunc(slices.Clone(user), isStampProperty)
	}
	if pk.Properties.ResponseTopic != "" || g.stampsAll() {
		user = g.stamp(cl, user) // identity.go; a message that is not a request keeps them only for StampFor's clients
	}
	pk.Properties.User = user
	return pk, nil
}

// OnPublishDropped counts a message mochi dropped because its queue of
// packets for the client was full.
func (g *guard) OnPublishDropped(cl *mqtt.Client, _ packets.Packet) {
	g.stats.messagesDropped.Add(1)
	g.stats.note(g.log, "message not delivered: the client's queue is full", "client", logText(cl.ID), "remote", cl.Net.Remote)
}

// OnPacketEncode completes a successful CONNACK, and takes the sender's
// stamps off a message that is not a request unless its receiver is told
// them (identity.go).
func (g *guard) OnPacketEncode(cl *mqtt.Client, pk packets.Packet) packets.Packet {
	if pk.FixedHeader.Type == packets.Publish {
		return g.unstamped(cl, pk)
	}
	if pk.FixedHeader.Type != packets.Connack || pk.ReasonCode >= packets.ErrUnspecifiedError.Code {
		return pk
	}
	pk.Properties.RetainAvailable, pk.Properties.RetainAvailableFlag = 0, true
	if cl.Net.Listener != inProcessListener {
		pk.Properties.MaximumPacketSize = uint32(g.cfg.MaxPacketBytes)
	}
	return pk
}
