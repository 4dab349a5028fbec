package session

import (
	"math"
	"net/url"
	"sync/atomic"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/internal/redact"
)

// A connection of the session: what its CONNECT announces, the session
// the broker kept or lost, and a session taken over by another client.

// reasonSessionTakenOver is the reason code of the DISCONNECT a broker
// sends a client when another one connects with its client id (MQTT v5
// §3.14.2.1).
const reasonSessionTakenOver = 0x8E

// connectionUp is autopaho's OnConnectionUp.
func (s *Session) connectionUp(cm *autopaho.ConnectionManager, ca *paho.Connack) {
	s.packetLimit.set(ca)
	s.cm.Store(cm)
	s.refusals.Store(0)
	s.round.reset()
	if len(s.cfg.Failover) > 0 {
		s.log.Info("connected", "broker", redact.URL(s.attempted()))
	}
	switch {
	case ca.SessionPresent:
		s.log.Debug("connected: the broker kept the session; subscribing again all the same", "broker", redact.URL(s.attempted()))
	case s.hadSession.Load():
		s.sessionLost()
	default:
		s.log.Debug("connected: no session at the broker; subscribing", "broker", redact.URL(s.attempted()))
	}
	s.hadSession.Store(s.cfg.Expiry > 0)
	if s.h.Up != nil {
		s.h.Up(ca.SessionPresent)
	}
}

// connectionDown is autopaho's OnConnectionDown.
func (s *Session) connectionDown() bool {
	if s.h.Down != nil {
		s.h.Down()
	}
	return true // reconnect
}

// serverDisconnected is paho's OnServerDisconnect. A takeover is reported
// loudly: the session, its subscriptions and the messages queued in it
// went to another client; autopaho connects again at once, which takes
// the session back.
func (s *Session) serverDisconnected(d *paho.Disconnect) {
	var why string
	if d.Properties != nil {
		why = CleanText(d.Properties.ReasonString, 256)
	}
	if d.ReasonCode == reasonSessionTakenOver {
		s.stats.sessionTakeovers.Add(1)
		s.log.Error("session taken over: another client connected to the broker with this host's client id and took its session; "+
			"reconnecting to take it back. If this repeats, two hosts share the client id (give each its own --client-id) "+
			"or a client poses as this host (make the broker authenticate its clients)",
			"client_id", s.cfg.ClientID, "broker", redact.URL(s.attempted()), "reason", why)
		return
	}
	s.log.Warn("broker disconnected us", "reason", d.ReasonCode, "reason_string", why)
}

// sessionLost reports a reconnection that found no session at the broker
// although the last connection had one that should have outlived it
// (Config.Expiry). A broker that says nothing of a takeover (mosquitto
// 2.0.11 just closes the old connection) shows it this way when the other
// client connected with a clean start; a broker restarted without
// persistence, or a session expired, look the same. The messages queued
// in the session are lost; the session's user subscribes again
// (Handlers.Up).
func (s *Session) sessionLost() {
	s.stats.sessionsLost.Add(1)
	s.log.Error("session lost: the broker kept no session for this host across the reconnection. "+
		"Another client may have connected with this host's client id and cleared it (two hosts sharing the id, "+
		"or a client posing as this host), or the broker restarted without persistence; requests queued in it are lost. "+
		"Subscribing again", "client_id", s.cfg.ClientID, "broker", redact.URL(s.attempted()))
}

// connectPacket is the session's CONNECT: the user name and the password
// (read now from its file or variable: a rotated one is used from the
// next connection on), problem information asked for and, with
// Config.MaxPacketSize, a Maximum Packet Size, so that the broker does
// not deliver a larger message at all.
//
// Problem information is asked for explicitly: paho leaves it unset when
// session properties are set, which reads as "no", and a broker may then
// (mochi does) strip user properties from every packet to the client, the
// protocol's __ headers included.
func (s *Session) connectPacket(c *paho.Connect, _ *url.URL) (*paho.Connect, error) {
	if c.Properties == nil {
		c.Properties = &paho.ConnectProperties{}
	}
	c.Properties.RequestProblemInfo = true
	if s.cfg.Auth.Username != "" {
		c.Username, c.UsernameFlag = s.cfg.Auth.Username, true
	}
	pw, err := s.cfg.Auth.password()
	if err != nil {
		return nil, err
	}
	if pw != nil {
		c.Password, c.PasswordFlag = pw, true
	}
	if s.cfg.Auth.TokenFile != "" {
		tok, err := s.cfg.Auth.token()
		if err != nil {
			return nil, err
		}
		c.Properties.AuthMethod, c.Properties.AuthData = SATMethod, tok
		s.sat.sent(tok)
	}
	if s.cfg.MaxPacketSize > 0 {
		n := uint32(min(s.cfg.MaxPacketSize, maxRemainingLength))
		c.Properties.MaximumPacketSize = &n
	}
	if s.cfg.ReceiveMaximum > 0 {
		n := uint16(min(s.cfg.ReceiveMaximum, math.MaxUint16))
		c.Properties.ReceiveMaximum = &n
	}
	return c, nil
}

// Stats are the session's counters of its connection's health.
type Stats struct {
	// RepliesAbandoned counts published messages the broker did not
	// acknowledge in time, whose send slots were released (replywatch.go).
	RepliesAbandoned int64
	// ConnectionsRecycled counts connections dropped because the broker
	// acknowledged nothing for Config.ReplyAckTimeout.
	ConnectionsRecycled int64
	// SessionTakeovers counts the broker's DISCONNECTs "session taken
	// over": another client connected with the session's client id.
	SessionTakeovers int64
	// SessionsLost counts reconnections that found no session at the
	// broker although the last connection had one (sessionLost).
	SessionsLost int64
	// Reauthentications counts new tokens (Auth.TokenFile) the broker
	// accepted on a live connection; ReauthenticationsRefused those it
	// refused (it then disconnected the session).
	Reauthentications, ReauthenticationsRefused int64
	// RepliesWaiting is the number of published messages waiting for
	// their PUBACK now.
	RepliesWaiting int
}

type stats struct {
	repliesAbandoned    atomic.Int64
	connectionsRecycled atomic.Int64
	sessionTakeovers    atomic.Int64
	sessionsLost        atomic.Int64
}

// Stats returns the session's counters.
func (s *Session) Stats() Stats {
	var waiting int
	if s.watch != nil {
		s.watch.mu.Lock()
		waiting = len(s.watch.waiting)
		s.watch.mu.Unlock()
	}
	var reauths, refused int64
	if s.sat != nil {
		reauths, refused = s.sat.reauths.Load(), s.sat.refused.Load()
	}
	return Stats{
		Reauthentications:        reauths,
		ReauthenticationsRefused: refused,
		RepliesAbandoned:         s.stats.repliesAbandoned.Load(),
		ConnectionsRecycled:      s.stats.connectionsRecycled.Load(),
		SessionTakeovers:         s.stats.sessionTakeovers.Load(),
		SessionsLost:             s.stats.sessionsLost.Load(),
		RepliesWaiting:           waiting,
	}
}
