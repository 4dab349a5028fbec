package rpc

import (
	"context"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
)

// The executor's connection to the broker: which connection its
// subscriptions were made on, the session taken over by another client,
// the connection dropped when the broker stops acknowledging
// (replywatch.go), and what its CONNECT announces.

// reasonSessionTakenOver is the reason code of the DISCONNECT a broker
// sends a client when another one connects with its client id (MQTT v5
// §3.14.2.1).
const reasonSessionTakenOver = 0x8E

// maxSubscribeRetryDelay bounds the wait between attempts to subscribe on
// a connection whose subscription failed.
const maxSubscribeRetryDelay = 30 * time.Second

// connGeneration numbers the connections, so that a subscription made on
// one connection never marks a later one subscribed. Each connection
// subscribes from a goroutine of its own (autopaho's OnConnectionUp must
// not block), and the goroutines of two connections may overlap: a
// takeover or a drop ends a connection while its subscription is on its
// way, and the next one's begins. Without the number, the slow goroutine
// of an earlier connection could set up after the later connection's
// subscription failed: connected, unsubscribed and ready.
type connGeneration struct {
	mu sync.Mutex
	n  uint64
}

// next starts a new generation (a connection up or down) and runs f in it.
func (g *connGeneration) next(f func()) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	f()
	return g.n
}

// ifCurrent runs f, and reports true, only while n is the generation.
func (g *connGeneration) ifCurrent(n uint64, f func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n != n {
		return false
	}
	f()
	return true
}

// connectionUp is autopaho's OnConnectionUp: a new connection subscribes.
func (e *Executor) connectionUp(cm *autopaho.ConnectionManager, ca *paho.Connack) {
	e.packetLimit.set(ca)
	e.cm.Store(cm)
	gen := e.link.next(func() { e.up.Store(false) })
	switch {
	case ca.SessionPresent:
		e.log.Debug("connected: the broker kept the session; subscribing again all the same", "broker", e.cfg.Broker)
	case e.hadSession.Load():
		e.sessionLost()
	default:
		e.log.Debug("connected: no session at the broker; subscribing", "broker", e.cfg.Broker)
	}
	e.hadSession.Store(e.cfg.SessionExpiry > 0)
	go e.subscribeAll(cm, gen)
}

// connectionDown is autopaho's OnConnectionDown.
func (e *Executor) connectionDown() bool {
	e.link.next(func() { e.up.Store(false) })
	return true // reconnect
}

// subscribeAll subscribes every route on connection gen, whether or not
// the broker kept the session: a session the broker kept may have lost its
// subscriptions (another client with the host's id took it over and made
// it clean), and subscribing again what is subscribed is harmless. The
// SUBACK's reason codes are checked (subscribe). The executor is ready
// once that succeeded on the current connection. The first outcome is
// reported to Start; once Start succeeded, a failed subscription is tried
// again, every ReconnectDelay doubled up to maxSubscribeRetryDelay, for as
// long as the connection lasts: a connected host that is not subscribed
// serves nobody.
func (e *Executor) subscribeAll(cm *autopaho.ConnectionManager, gen uint64) {
	delay := e.cfg.ReconnectDelay
	for {
		if e.unsubbed.Load() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := e.subscribe(ctx, cm, e.table())
		cancel()
		current := e.link.ifCurrent(gen, func() {
			if err == nil {
				e.up.Store(true)
			}
		})
		if !current {
			return // a later connection subscribes for itself
		}
		select {
		case e.subscribed <- err:
		default:
		}
		if err == nil {
			e.log.Debug("subscribed", "topics", e.Filters()) // the host logs its topics once
			return
		}
		e.log.Error("subscription failed", "err", err)
		if !e.served.Load() {
			return // Start reports it
		}
		select {
		case <-time.After(delay):
		case <-e.stopped:
			return
		}
		delay = min(2*delay, maxSubscribeRetryDelay)
	}
}

// serverDisconnected is paho's OnServerDisconnect. A takeover is reported
// loudly: the host's session, its subscriptions and the requests queued
// in it went to another client; autopaho connects again at once, which
// takes the session back.
func (e *Executor) serverDisconnected(d *paho.Disconnect) {
	var why string
	if d.Properties != nil {
		why = cleanText(d.Properties.ReasonString, 256)
	}
	if d.ReasonCode == reasonSessionTakenOver {
		e.stats.sessionTakeovers.Add(1)
		e.log.Error("session taken over: another client connected to the broker with this host's client id and took its session; "+
			"reconnecting to take it back. If this repeats, two hosts share the client id (give each its own --client-id) "+
			"or a client poses as this host (make the broker authenticate its clients)",
			"client_id", e.cfg.ClientID, "broker", e.cfg.Broker, "reason", why)
		return
	}
	e.log.Warn("broker disconnected us", "reason", d.ReasonCode, "reason_string", why)
}

// sessionLost reports a reconnection that found no session at the broker
// although the last connection had one that should have outlived it
// (Config.SessionExpiry). A broker that says nothing of a takeover
// (mosquitto 2.0.11 just closes the old connection) shows it this way when
// the other client connected with a clean start; a broker restarted
// without persistence, or a session expired, look the same. The requests
// queued in the session are lost; the executor subscribes again.
func (e *Executor) sessionLost() {
	e.stats.sessionsLost.Add(1)
	e.log.Error("session lost: the broker kept no session for this host across the reconnection. "+
		"Another client may have connected with this host's client id and cleared it (two hosts sharing the id, "+
		"or a client posing as this host), or the broker restarted without persistence; requests queued in it are lost. "+
		"Subscribing again", "client_id", e.cfg.ClientID, "broker", e.cfg.Broker)
}

// dial is the executor's AttemptConnection: dialer's, keeping the latest
// connection for dropConnection.
func (e *Executor) dial() dialFunc {
	d := dialer(e.cfg.Dial)
	return func(ctx context.Context, cfg autopaho.ClientConfig, u *url.URL) (net.Conn, error) {
		c, err := d(ctx, cfg, u)
		if bc, ok := c.(*brokerConn); ok && err == nil {
			e.conn.Store(bc)
		}
		return c, err
	}
}

// dropConnection closes the current connection at once, as a network
// failure would: paho's reader fails and autopaho connects again.
func (e *Executor) dropConnection() {
	if c := e.conn.Load(); c != nil {
		_ = c.Conn.Close()
	}
}

// abandon gives up a reply waiting for its PUBACK (paho's State.Abandon).
func (e *Executor) abandon(packetID uint16) bool { return e.state.Abandon(packetID) }

// connectPacket is the executor's CONNECT: problem information asked for
// (requestProblemInfo) and, with Config.MaxRequestBytes, a Maximum Packet
// Size, so that the broker does not deliver a larger request at all.
func (e *Executor) connectPacket(c *paho.Connect, u *url.URL) (*paho.Connect, error) {
	c, err := requestProblemInfo(c, u)
	if err != nil {
		return nil, err
	}
	if e.cfg.MaxRequestBytes > 0 {
		n := uint32(min(e.cfg.MaxRequestBytes, maxRemainingLength))
		c.Properties.MaximumPacketSize = &n
	}
	return c, nil
}

// SessionStats are the executor's counters of its connection's health
// (metrics read them at scrape time).
type SessionStats struct {
	// ResponseTopicsRefused counts requests refused for their response
	// topic (responsetopic.go): acked, not answered.
	ResponseTopicsRefused int64
	// RepliesAbandoned counts replies the broker did not acknowledge in
	// time, whose send slots were released (replywatch.go).
	RepliesAbandoned int64
	// ConnectionsRecycled counts connections dropped because the broker
	// acknowledged nothing for Config.ReplyAckTimeout.
	ConnectionsRecycled int64
	// SessionTakeovers counts the broker's DISCONNECTs "session taken
	// over": another client connected with the host's client id.
	SessionTakeovers int64
	// SessionsLost counts reconnections that found no session at the
	// broker although the last connection had one (sessionLost).
	SessionsLost int64
	// RepliesWaiting is the number of replies waiting for their PUBACK now.
	RepliesWaiting int
}

type sessionStats struct {
	responseTopicsRefused atomic.Int64
	repliesAbandoned      atomic.Int64
	connectionsRecycled   atomic.Int64
	sessionTakeovers      atomic.Int64
	sessionsLost          atomic.Int64
}

// SessionStats returns the executor's connection counters.
func (e *Executor) SessionStats() SessionStats {
	e.watch.mu.Lock()
	waiting := len(e.watch.waiting)
	e.watch.mu.Unlock()
	return SessionStats{
		ResponseTopicsRefused: e.stats.responseTopicsRefused.Load(),
		RepliesAbandoned:      e.stats.repliesAbandoned.Load(),
		ConnectionsRecycled:   e.stats.connectionsRecycled.Load(),
		SessionTakeovers:      e.stats.sessionTakeovers.Load(),
		SessionsLost:          e.stats.sessionsLost.Load(),
		RepliesWaiting:        waiting,
	}
}
