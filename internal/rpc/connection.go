package rpc

import (
	"context"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/internal/session"
)

// The executor over its MQTT session (package session): which connection
// its subscriptions were made on, and the session's counters with the
// executor's own.

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

// connectionUp is the session's Handlers.Up: a new connection
// subscribes.
func (e *Executor) connectionUp(bool) {
	gen := e.link.next(func() { e.up.Store(false) })
	go e.subscribeAll(gen)
}

// connectError is the session's Handlers.ConnectError. Until Start
// succeeded, a connection refused for who the executor is
// (session.Refused: its credentials, a certificate) ends Start: an
// operator starting a host wants to know at once. Once serving, the
// session logs each refusal and keeps trying (the broker's users may be
// fixed while the host waits).
func (e *Executor) connectError(err error) {
	if !e.served.Load() && session.Refused(err) {
		select {
		case e.subscribed <- err:
		default:
		}
	}
}

// connectionDown is the session's Handlers.Down.
func (e *Executor) connectionDown() {
	e.link.next(func() { e.up.Store(false) })
}

// subscribeAll subscribes every route on connection gen, whether or not
// the broker kept the session: a session the broker kept may have lost its
// subscriptions (another client with the host's id took it over and made
// it clean), and subscribing again what is subscribed is harmless. The
// SUBACK's reason codes are checked (subscribe). The executor is ready
// once that succeeded on the current connection. The first outcome is
// reported to Start; once Start succeeded, a failed subscription is tried
// again, every Session.ReconnectDelay doubled up to
// maxSubscribeRetryDelay, for as long as the connection lasts: a
// connected host that is not subscribed serves nobody.
func (e *Executor) subscribeAll(gen uint64) {
	delay := e.cfg.Session.ReconnectDelay
	for {
		if e.unsubbed.Load() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := e.subscribe(ctx, e.table())
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

// SessionStats are the executor's counters of its connection's health
// (metrics read them at scrape time).
type SessionStats struct {
	// ResponseTopicsRefused counts requests refused for their response
	// topic (responsetopic.go): acked, not answered.
	ResponseTopicsRefused int64
	// RepliesAbandoned counts replies the broker did not acknowledge in
	// time, whose send slots were released (session/replywatch.go).
	RepliesAbandoned int64
	// ConnectionsRecycled counts connections dropped because the broker
	// acknowledged nothing for Config.Session.ReplyAckTimeout.
	ConnectionsRecycled int64
	// SessionTakeovers counts the broker's DISCONNECTs "session taken
	// over": another client connected with the host's client id.
	SessionTakeovers int64
	// SessionsLost counts reconnections that found no session at the
	// broker although the last connection had one (session/connection.go).
	SessionsLost int64
	// RepliesWaiting is the number of replies waiting for their PUBACK now.
	RepliesWaiting int
}

// SessionStats returns the executor's connection counters.
func (e *Executor) SessionStats() SessionStats {
	st := e.sess.Stats()
	return SessionStats{
		ResponseTopicsRefused: e.topicsRefused.Load(),
		RepliesAbandoned:      st.RepliesAbandoned,
		ConnectionsRecycled:   st.ConnectionsRecycled,
		SessionTakeovers:      st.SessionTakeovers,
		SessionsLost:          st.SessionsLost,
		RepliesWaiting:        st.RepliesWaiting,
	}
}

// mqttSession is what the executor and the invoker ask of their MQTT
// session (package session, whose Session is the one implementation):
// connect and disconnect, publish and check a message before it goes,
// subscribe and unsubscribe, ack a request in receipt order and flush
// the acks before a disconnect, and the connection's health. The
// session tells of received messages and of connections up and down
// through the session.Handlers it was made with.
type mqttSession interface {
	Connect() error
	Started() bool
	AwaitConnection(ctx context.Context) error
	Check(p *paho.Publish) error
	Publish(ctx context.Context, p *paho.Publish) error
	Subscribe(ctx context.Context, s *paho.Subscribe) (*paho.Suback, error)
	Unsubscribe(ctx context.Context, u *paho.Unsubscribe) (*paho.Unsuback, error)
	Ack(m session.Received) error
	FlushAcks(ctx context.Context) error
	Disconnect(ctx context.Context) error
	Ready() error
	Stats() session.Stats
}

var _ mqttSession = (*session.Session)(nil)
