package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	pahosession "github.com/eclipse/paho.golang/paho/session"
	"github.com/eclipse/paho.golang/paho/session/state"
	"github.com/eclipse/paho.golang/paho/store/memory"

	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/logx"
	"github.com/cmdhost/cmdhost/internal/redact"
)

// Defaults of Config.
const (
	// DefaultExpiry is Config.Expiry when it is not set.
	DefaultExpiry = 10 * time.Minute
	// DefaultMaxPacketSize is Config.MaxPacketSize when it is not set.
	DefaultMaxPacketSize = 8 << 20
	// DefaultReconnectDelay and DefaultConnectTimeout are
	// Config.ReconnectDelay and Config.ConnectTimeout when they are not set.
	DefaultReconnectDelay = time.Second
	DefaultConnectTimeout = 10 * time.Second
)

// keepAlive is the keep alive the session asks for, in seconds.
const keepAlive = 30

// Config is how a session connects to its broker. Broker and ClientID are
// required.
type Config struct {
	// Broker is the broker's URL: mqtt or tcp (plain TCP), tls, mqtts or
	// ssl (TLS). It may name the user (mqtt://NAME@host), never a
	// password; Resolve moves the user into Auth.Username.
	Broker *url.URL
	// Failover are more brokers (the same cluster's other nodes) tried
	// in turn after Broker, as autopaho's server list: each round of
	// connection attempts goes through Broker, then these, in order,
	// until one admits the session (failover.go). The same Auth logs in
	// to each.
	Failover []*url.URL
	// Auth is how the session proves who it is to the broker and checks
	// the broker's certificate (auth.go); the zero Auth is anonymous. TLS
	// settings apply to the dial of a tls, mqtts or ssl URL, not to a
	// Dial of the caller's.
	Auth Auth
	// ClientID is the MQTT client id.
	ClientID string
	// Dial replaces the TCP connection to Broker (tests use a fake broker).
	// The connection must be safe for concurrent writes.
	Dial DialFunc
	// CleanStart drops, at the first connection, any session the broker
	// held for ClientID (a client whose session is of no use after a
	// restart: the invoker's).
	CleanStart bool
	// Expiry is how long the broker keeps the session (subscriptions and
	// unacked messages) after a disconnect, so that they survive
	// reconnects and restarts; 0: DefaultExpiry; negative: none, the
	// session ends with the connection.
	Expiry time.Duration
	// ManualAcks: a message received is acknowledged by Ack, PUBACKs
	// going out in receipt order (ackledger.go). Otherwise paho
	// acknowledges each once Handlers.Received returns.
	ManualAcks bool
	// MaxPacketSize is the Maximum Packet Size the session announces in
	// its CONNECT: the broker does not deliver a larger message (MQTT v5
	// §3.1.2.11.4; it drops it for this client), so the session never
	// reads one. 0: DefaultMaxPacketSize (8 MiB); negative: none announced
	// (MQTT's 256 MB).
	MaxPacketSize int
	// ReceiveMaximum is the Receive Maximum the session announces in its
	// CONNECT: the broker sends it at most so many QoS 1 messages it has
	// not acknowledged (MQTT v5 §3.1.2.11.3). 0: none announced (65,535).
	ReceiveMaximum int
	// ReplyAckTimeout bounds how long a published message may wait for
	// the broker's PUBACK before its send slot is released, and how long
	// the broker may acknowledge nothing before the connection is dropped
	// and made again (replywatch.go); 0: DefaultReplyAckTimeout (30 s);
	// negative: not watched.
	ReplyAckTimeout time.Duration
	// ReconnectDelay is the wait between connection attempts; 0:
	// DefaultReconnectDelay.
	ReconnectDelay time.Duration
	// ConnectTimeout bounds one connection attempt; 0:
	// DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Clock is the clock the reply watch reads; nil: the system clock.
	Clock clock.Clock
	// Logger; nil discards.
	Logger *slog.Logger
}

// Resolve returns c with its defaults filled in, or an error naming what
// is missing. Resolving a resolved Config changes nothing.
func (c Config) Resolve() (Config, error) {
	if c.Broker == nil {
		return c, errors.New("broker URL is required")
	}
	if c.ClientID == "" {
		return c, errors.New("client id is required")
	}
	auth, broker, err := c.Auth.resolve(c.Broker)
	if err != nil {
		return c, err
	}
	c.Auth, c.Broker = auth, broker
	failover := make([]*url.URL, 0, len(c.Failover))
	for _, u := range c.Failover {
		if u == nil {
			return c, errors.New("a failover broker URL is nil")
		}
		if auth, u, err = c.Auth.resolve(u); err != nil {
			return c, err
		}
		if isTLS(u) != isTLS(c.Broker) {
			return c, fmt.Errorf("the brokers %s and %s: one logs in over TLS and the other not: give them the same scheme", redact.URL(c.Broker), redact.URL(u))
		}
		c.Auth = auth
		failover = append(failover, u)
	}
	c.Failover = failover
	if c.Expiry == 0 {
		c.Expiry = DefaultExpiry
	}
	if c.MaxPacketSize == 0 {
		c.MaxPacketSize = DefaultMaxPacketSize
	}
	if c.ReplyAckTimeout == 0 {
		c.ReplyAckTimeout = DefaultReplyAckTimeout
	}
	if c.ReconnectDelay <= 0 {
		c.ReconnectDelay = DefaultReconnectDelay
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	c.Clock = clock.OrSystem(c.Clock)
	c.Logger = logx.OrDiscard(c.Logger)
	return c, nil
}

// ExpiryInterval is the session expiry the session asks the broker for
// (Expiry resolved: 0 when there is none).
func (c Config) ExpiryInterval() time.Duration { return max(c.Expiry, 0) }

// Handlers are what a session's user is told. Each is called on one of
// paho's goroutines and must not block; any may be nil.
type Handlers struct {
	// Received takes each message the broker delivers, one at a time in
	// receipt order.
	Received func(Received)
	// Up is called when a connection is up, once the session has taken
	// it over (sessionPresent: the broker kept the session).
	Up func(sessionPresent bool)
	// Down is called when a connection is lost.
	Down func()
	// ConnectError is called when a connection attempt fails (the
	// session logs it as a warning).
	ConnectError func(error)
}

// Received is a message the broker delivered on one of the session's
// connections.
type Received struct {
	Packet *paho.Publish
	client *paho.Client // the connection that delivered it: its ack goes there
}

// Session is an MQTT v5 client's session with its broker (see the
// package comment). Its methods are safe for concurrent use.
type Session struct {
	cfg Config
	h   Handlers
	log *slog.Logger

	cm          atomic.Pointer[autopaho.ConnectionManager] // set by Connect
	packetLimit packetLimit                                // the broker's Maximum Packet Size (sendable.go)
	acks        *ackLedger                                 // acks made and sent (ackledger.go)

	// The connection's health (replywatch.go).
	state      *state.State               // the client's session: abandons replies
	watch      *replyWatch                // replies waiting for their PUBACK; nil: not watched
	conn       atomic.Pointer[brokerConn] // the latest connection, dropped when the broker is silent
	hadSession atomic.Bool                // the last connection had a session that outlives it
	refusals   atomic.Int32               // rounds of connection attempts refused in a row (backoff)
	broker     atomic.Pointer[url.URL]    // the broker of the latest attempt (failover.go)
	round      failoverRound              // the failures of this round of attempts (failover.go)
	sat        *satAuth                   // K8S-SAT (sat.go); nil without Auth.TokenFile
	stats      stats

	closed    chan struct{} // closed by Disconnect: the watch stops
	closeOnce sync.Once
}

// New returns a session of cfg that tells h; Connect connects it.
func New(cfg Config, h Handlers) (*Session, error) {
	cfg, err := cfg.Resolve()
	if err != nil {
		return nil, err
	}
	if err := cfg.Auth.Check(); err != nil {
		return nil, err
	}
	s := &Session{cfg: cfg, h: h, log: cfg.Logger, closed: make(chan struct{}),
		state: state.New(newReplyStore(), memory.New())}
	var sm pahosession.SessionManager = s.state
	if cfg.ReplyAckTimeout > 0 {
		s.watch = newReplyWatch(cfg.Clock.Now, cfg.ReplyAckTimeout)
		sm = &watchedSession{SessionManager: s.state, w: s.watch}
	}
	s.acks = newAckLedger(sm)
	if cfg.Auth.TokenFile != "" {
		s.sat = new(satAuth)
	}
	return s, nil
}

// Config returns the session's configuration, resolved.
func (s *Session) Config() Config { return s.cfg }

// Connect starts connecting to the broker, and connects again whenever
// the connection is lost, until Disconnect; Handlers.Up tells when a
// connection is up.
func (s *Session) Connect() error {
	acfg := autopaho.ClientConfig{
		ServerUrls:                    s.cfg.Brokers(),
		KeepAlive:                     keepAlive,
		CleanStartOnInitialConnection: s.cfg.CleanStart,
		SessionExpiryInterval:         uint32(s.cfg.ExpiryInterval().Seconds()),
		ReconnectBackoff:              s.backoff,
		ConnectTimeout:                s.cfg.ConnectTimeout,
		AttemptConnection:             s.dial(),
		ConnectPacketBuilder:          s.connectPacket,
		OnConnectionUp:                s.connectionUp,
		OnConnectionDown:              s.connectionDown,
		OnConnectError:                s.connectError,
		ClientConfig: paho.ClientConfig{
			ClientID:                   s.cfg.ClientID,
			Session:                    s.acks,
			EnableManualAcknowledgment: s.cfg.ManualAcks,
			OnPublishReceived:          []func(paho.PublishReceived) (bool, error){s.received},
			OnClientError:              func(err error) { s.log.Warn("mqtt client error", "err", err) },
			OnServerDisconnect:         s.serverDisconnected,
		},
	}
	if s.cfg.ManualAcks {
		acfg.SendAcksInterval = 5 * time.Millisecond
	}
	if s.sat != nil {
		// Also needed at CONNECT: paho calls it when the CONNACK names
		// the authentication method.
		acfg.ClientConfig.AuthHandler = s.sat
	}
	cm, err := autopaho.NewConnection(context.Background(), acfg)
	if err != nil {
		return err
	}
	s.cm.Store(cm)
	if s.watch != nil {
		go s.watchReplies()
	}
	if s.sat != nil {
		s.watchToken()
	}
	return nil
}

// Started reports whether Connect was called.
func (s *Session) Started() bool { return s.cm.Load() != nil }

// errNotStarted is the error of a call that needs a connection before
// Connect.
var errNotStarted = errors.New("the session is not connected: Connect was not called")

// AwaitConnection waits until a connection is up, or ctx ends.
func (s *Session) AwaitConnection(ctx context.Context) error {
	cm := s.cm.Load()
	if cm == nil {
		return errNotStarted
	}
	return cm.AwaitConnection(ctx)
}

// Publish sends p on the current connection and, at QoS 1, waits for
// its PUBACK until ctx ends; a PUBACK that refuses it (its ACL's "not
// authorized") is a *PublishRefusedError. Check it first (Check): a
// message the broker refuses as malformed costs the connection.
func (s *Session) Publish(ctx context.Context, p *paho.Publish) error {
	cm := s.cm.Load()
	if cm == nil {
		return errNotStarted
	}
	resp, err := cm.Publish(ctx, p)
	if err != nil && resp != nil && resp.ReasonCode >= 0x80 {
		return &PublishRefusedError{Topic: p.Topic, Code: resp.ReasonCode}
	}
	return err
}

// Subscribe sends sub on the current connection and returns the broker's
// SUBACK (which paho returns with an error when it refused a filter).
func (s *Session) Subscribe(ctx context.Context, sub *paho.Subscribe) (*paho.Suback, error) {
	cm := s.cm.Load()
	if cm == nil {
		return nil, errNotStarted
	}
	return cm.Subscribe(ctx, sub)
}

// Unsubscribe sends u on the current connection and returns the broker's
// UNSUBACK (as Subscribe).
func (s *Session) Unsubscribe(ctx context.Context, u *paho.Unsubscribe) (*paho.Unsuback, error) {
	cm := s.cm.Load()
	if cm == nil {
		return nil, errNotStarted
	}
	return cm.Unsubscribe(ctx, u)
}

// Ack acknowledges m on the connection that delivered it (Config.ManualAcks);
// paho sends acks in receipt order. After that connection dropped, the
// ack is moot: the broker delivers m again. A message at QoS 0 needs none.
func (s *Session) Ack(m Received) error {
	if m.Packet.QoS == 0 {
		return nil
	}
	return s.acks.ack(m.client, m.Packet)
}

// FlushAcks waits until every ack made has been sent, or ctx ends
// (ackledger.go): a disconnect drops those not sent yet.
func (s *Session) FlushAcks(ctx context.Context) error { return s.acks.flushed(ctx) }

// Disconnect stops the reply watch and disconnects, waiting for that
// until ctx ends; the session does not connect again.
func (s *Session) Disconnect(ctx context.Context) error {
	s.closeOnce.Do(func() { close(s.closed) })
	if cm := s.cm.Load(); cm != nil {
		return cm.Disconnect(ctx)
	}
	return nil
}

// Check returns why the broker would refuse p, or nil (sendable.go): a
// string it refuses, or a packet larger than the current connection's
// Maximum Packet Size (errors.Is ErrTooLarge) or than MQTT can frame.
func (s *Session) Check(p *paho.Publish) error { return sendable(p, s.packetLimit.n.Load()) }

// PacketLimit is the broker's Maximum Packet Size from the CONNACK of the
// current connection, in bytes; 0 when it set none (MQTT's own bound) or
// before the first connection.
func (s *Session) PacketLimit() int { return int(s.packetLimit.n.Load()) }

// Ready returns an error while the broker has acknowledged none of the
// session's waiting messages for a third of Config.ReplyAckTimeout
// (replywatch.go); nil otherwise, and always when they are not watched.
func (s *Session) Ready() error {
	if s.watch == nil {
		return nil
	}
	return s.watch.ready(s.cfg.Clock.Now())
}

func (s *Session) received(pr paho.PublishReceived) (bool, error) {
	if s.h.Received != nil {
		s.h.Received(Received{Packet: pr.Packet, client: pr.Client})
	}
	return true, nil
}

// connectError is autopaho's OnConnectError: a failed attempt, said in
// the session's words (refusal.go). A refusal of who the client is will
// not pass by itself: it is logged as an error, with who was refused
// (never the password), and the attempts that follow space out
// (backoff).
func (s *Session) connectError(err error) {
	err = s.explain(err)
	broker := s.attempted()
	if Refused(err) {
		s.log.Error("the broker connection was refused; trying again", "broker", redact.URL(broker),
			"client_id", s.cfg.ClientID, "username", s.cfg.Auth.Username, "err", err)
	} else {
		s.log.Warn("connecting to the broker", "broker", redact.URL(broker), "err", err)
	}
	err, roundOver := s.round.failed(err, len(s.cfg.Failover)+1)
	if !roundOver {
		return // the next broker of the list is tried at once
	}
	if Refused(err) {
		s.refusals.Add(1)
	}
	if s.h.ConnectError != nil {
		s.h.ConnectError(err)
	}
}

// maxRefusedBackoff bounds the wait between attempts the broker refuses.
const maxRefusedBackoff = 30 * time.Second

// backoff is autopaho's ReconnectBackoff: Config.ReconnectDelay between
// attempts, doubled for each refusal in a row (connectError) up to
// maxRefusedBackoff, so that a host whose credentials the broker refuses
// neither floods the broker nor its own log.
func (s *Session) backoff(attempt int) time.Duration {
	if attempt <= 0 {
		return 0
	}
	d := s.cfg.ReconnectDelay
	for range min(s.refusals.Load()-1, 8) {
		d *= 2
	}
	return min(d, max(maxRefusedBackoff, s.cfg.ReconnectDelay))
}

// dial is the session's AttemptConnection: dialer's, keeping the latest
// connection for dropConnection.
func (s *Session) dial() DialFunc {
	d := dialer(s.cfg.Dial, s.cfg.Auth)
	return func(ctx context.Context, cfg autopaho.ClientConfig, u *url.URL) (net.Conn, error) {
		s.conn.Store(nil) // connectError reads this attempt's connection, or none
		s.broker.Store(u)
		c, err := d(ctx, cfg, u)
		if bc, ok := c.(*brokerConn); ok && err == nil {
			s.conn.Store(bc)
		}
		return c, err
	}
}

// dropConnection closes the current connection at once, as a network
// failure would: paho's reader fails and autopaho connects again.
func (s *Session) dropConnection() {
	if c := s.conn.Load(); c != nil {
		_ = c.Conn.Close()
	}
}
