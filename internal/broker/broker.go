// Package broker is the MQTT v5 broker that `cmdhost serve` embeds when no
// --broker is given: github.com/mochi-mqtt/server/v2 on one TCP listener
// (and an in-process one for the host's own clients, inprocess.go),
// configured for request/response traffic (see newServer for every choice and
// why), and optionally a TLS listener. No persistence. On loopback it may be
// anonymous (the quickstart); elsewhere its clients log in, with a user of
// the users file, a client certificate or a service account token (auth.go,
// sat.go), unless the operator says otherwise (Config.AllowAnonymous). What
// a client that got in may publish and subscribe to is the ACL's (acl.go):
// the operator's file, or least privilege by default on a broker that
// authenticates; anything on an anonymous one. The ACL file and the TLS
// listener's files are re-read when they change (reload.go).
//
// A client that got in may be anyone, so what one client can take is bounded
// (Config, guard.go, tcpconn.go, held.go): the packet size (announced in
// CONNACK and checked before a packet's body is read), the clients, the
// connections yet to log in (apart from the clients, per source address:
// pending.go), the messages awaiting a client's acknowledgement (their
// number, their bytes, for one client and for all, and for how long), the
// bytes queued for a client (one that does not read is disconnected
// instead of holding up the others), the time to send a CONNECT, the
// password checks (fair across source addresses, an address that keeps
// failing refused without one: logins.go). Its log never holds what a
// client sent (logs.go). Retained messages are off (not kept; CONNACK says
// so). The client ids of the host's own clients are reserved, and every
// request is stamped with the client id of its sender (ClientIDProperty).
package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/logx"
	"github.com/cmdhost/cmdhost/internal/passwd"
)

// Config configures the embedded broker.
type Config struct {
	// Addr is the TCP address to listen on, e.g. "127.0.0.1:1883". Port 0
	// picks a free port (read it back with Addr).
	Addr string
	// Logger receives mochi's logs. Nil discards them.
	Logger *slog.Logger

	// Who may connect over the network (auth.go). None of these set: anyone
	// who reaches Addr, which must then be on loopback (CheckAccess).

	// TLSAddr, if set, is a second listener, TLS (1.2 or later), with the
	// certificate and key in TLSCertFile and TLSKeyFile (PEM). With
	// TLSClientCAFile its clients must show a certificate that CA signed
	// (mTLS), and the certificate's common name is their user name.
	TLSAddr, TLSCertFile, TLSKeyFile, TLSClientCAFile string
	// UsersFile, if set, is the users file (package passwd): a client must
	// log in as one of its users (except one that showed a client
	// certificate on the TLS listener). It is re-read when it changes.
	UsersFile string
	// ACLFile, if set, is the ACL file (acl.go, ReadACL): what each user
	// may publish and subscribe to, re-read when it changes (reload.go).
	// Without it, a broker that authenticates its clients (a users file,
	// a client CA or token keys) applies DefaultACL: least privilege; an
	// anonymous broker (loopback, or AllowAnonymous) lets every client
	// publish and subscribe to every topic.
	ACLFile string
	// SATKeyFile, if set, admits clients that log in with a Kubernetes
	// service account token (sat.go): the public keys of the tokens'
	// issuer, PEM or JWKS, re-read when the file changes. SATAudience is
	// the audience the tokens must be for; "": DefaultSATAudience.
	SATKeyFile, SATAudience string
	// Clock is what token expiry is checked against; nil: the system's.
	Clock clock.Clock
	// AllowAnonymous lets a listener on an address other than loopback
	// admit anyone (CheckAccess refuses it otherwise).
	AllowAnonymous bool

	// The bounds on the clients over TCP (the host's own clients, in
	// process, are not bounded by them). Zero takes the default.

	// MaxPacketBytes is the largest packet a client may send, announced in
	// CONNACK (Maximum Packet Size); a larger one ends its connection
	// before its body is read. Default DefaultMaxPacketBytes.
	MaxPacketBytes int
	// MaxClients bounds the clients logged in at once: beyond it a CONNECT
	// is refused (CONNACK 0x89 server busy). The connections yet to send
	// their CONNECT are bounded apart, to as many, a quarter of them per
	// source address, the longest waiting of the largest source closed to
	// make room (pending.go). Default DefaultMaxClients.
	MaxClients int
	// MaxInflight bounds the QoS 1/2 messages a client has not yet
	// acknowledged: beyond it, messages for it are dropped (counted) until
	// it acknowledges. Default DefaultMaxInflight.
	MaxInflight int
	// MaxInflightBytes bounds the bytes of the messages a client has not
	// yet acknowledged (held.go): once they reach it, messages for it are
	// dropped (counted) until it acknowledges; the message that crosses it
	// is still delivered. Default DefaultMaxInflightBytes.
	MaxInflightBytes int
	// MaxHeldBytes bounds the bytes held for all TCP clients together,
	// unacknowledged or queued for their sockets (held.go): once they
	// reach it, the client holding the most is disconnected and what it
	// holds dropped. Default DefaultMaxHeldBytes.
	MaxHeldBytes int
	// AckTimeout disconnects a client that holds messages sent to it and
	// acknowledges none for so long, and drops them (held.go; a request
	// that has not expired does not count). Default DefaultAckTimeout.
	AckTimeout time.Duration
	// ClientQueueBytes bounds the bytes waiting to be written to one
	// client: a client that falls further behind is disconnected. One
	// packet is always accepted into an empty queue. Default (0)
	// MaxInflightBytes plus MaxPacketBytes: above what a client that reads
	// may be sent at once (its unacknowledged messages, and a packet), so
	// that it is not disconnected for what it was legitimately sent.
	ClientQueueBytes int
	// WriteTimeout disconnects a client whose socket takes nothing for
	// so long: one that does not read. Default DefaultWriteTimeout.
	WriteTimeout time.Duration

	// connectTimeout is the time a connection has to send its CONNECT;
	// zero: the constant connectTimeout (the tests shorten it).
	connectTimeout time.Duration
}

// The defaults of Config's bounds.
const (
	DefaultMaxPacketBytes = 8 << 20
	DefaultMaxClients     = 1000
	DefaultMaxInflight    = 1024
	// DefaultMaxInflightBytes lets a client have eight of the largest
	// packets a client may send (DefaultMaxPacketBytes) unacknowledged,
	// sixteen replies of the host's largest by default (4 MiB).
	DefaultMaxInflightBytes = 64 << 20
	// DefaultMaxHeldBytes is four clients at DefaultMaxInflightBytes: a
	// quarter of what the systemd unit leaves the host beside its guests
	// (deploy/cmdhost.service, GOMEMLIMIT 768 MiB).
	DefaultMaxHeldBytes = 256 << 20
	// DefaultAckTimeout is far longer than a client that acknowledges on
	// receipt takes, even on a loaded machine, and short against the
	// expiry of cmdhost's requests (an hour at most, --max-expiry).
	DefaultAckTimeout   = time.Minute
	DefaultWriteTimeout = 10 * time.Second
)

// withDefaults returns c with its zero bounds set to the defaults.
func (c Config) withDefaults() Config {
	if c.MaxPacketBytes <= 0 {
		c.MaxPacketBytes = DefaultMaxPacketBytes
	}
	if c.MaxClients <= 0 {
		c.MaxClients = DefaultMaxClients
	}
	if c.MaxInflight <= 0 {
		c.MaxInflight = DefaultMaxInflight
	}
	if c.MaxInflightBytes <= 0 {
		c.MaxInflightBytes = DefaultMaxInflightBytes
	}
	if c.MaxHeldBytes <= 0 {
		c.MaxHeldBytes = DefaultMaxHeldBytes
	}
	if c.AckTimeout <= 0 {
		c.AckTimeout = DefaultAckTimeout
	}
	if c.ClientQueueBytes <= 0 {
		c.ClientQueueBytes = c.MaxInflightBytes + c.MaxPacketBytes
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.connectTimeout <= 0 {
		c.connectTimeout = connectTimeout
	}
	return c
}

// Embedded is a running embedded broker.
type Embedded struct {
	srv       *mqtt.Server
	addr      string
	tlsAddr   string        // "" without a TLS listener
	pipes     *pipeListener // DialInProcess's connections (inprocess.go)
	guard     *guard
	stats     *stats
	watch     *fileWatch  // the files re-read when they change (reload.go)
	gate      *attachGate // the connections handed to mochi and not yet read from (attach.go)
	held      *holdings   // what the broker holds for its TCP clients (held.go)
	closeOnce sync.Once
	closeErr  error
}

// AddrInUseError is returned by Start when the listen address is taken. Its
// message names the way out; it unwraps to the listen error (so
// errors.Is(err, syscall.EADDRINUSE) holds).
type AddrInUseError struct {
	Addr string // the address asked for
	Flag string // the flag that gave it: --listen, --listen-tls
	Err  error  // the error from listen
}

func (e *AddrInUseError) Error() string {
	return fmt.Sprintf("listen %s: address already in use: another broker is running there; connect to it with --broker %s or choose another %s address",
		e.Addr, dialURL(e.Addr), e.Flag)
}

func (e *AddrInUseError) Unwrap() error { return e.Err }

// Start listens on cfg.Addr and serves MQTT until Close.
func Start(cfg Config) (*Embedded, error) {
	if cfg.Addr == "" {
		return nil, errors.New("broker: no listen address")
	}
	cfg = cfg.withDefaults()
	if err := cfg.CheckAccess(); err != nil {
		return nil, err
	}
	// mochi's own default logs every event to stdout: it always gets ours.
	hostLog := logx.OrDiscard(cfg.Logger)
	return start(&cfg, newServer(slog.New(newMochiLog(hostLog.Handler()))), hostLog)
}

// start attaches the listeners and the guard to srv and serves.
func start(cfg *Config, srv *mqtt.Server, log *slog.Logger) (_ *Embedded, err error) {
	var users *passwd.File
	var tlsCfg *tls.Config
	if cfg.UsersFile != "" {
		if users, err = passwd.Open(cfg.UsersFile); err != nil {
			_ = srv.Close()
			return nil, fmt.Errorf("broker: %w", err)
		}
	}
	var acl *ACL
	re := &reloadable{cfg: cfg, log: log}
	if cfg.ACLFile != "" {
		if acl, err = ReadACL(cfg.ACLFile); err != nil {
			_ = srv.Close()
			return nil, fmt.Errorf("broker: %w", err)
		}
		re.acl = acl
	} else if cfg.authenticates() {
		acl = DefaultACL()
	}
	if cfg.TLSAddr != "" {
		if tlsCfg, err = tlsConfig(cfg); err != nil {
			_ = srv.Close()
			return nil, err
		}
		re.tls.Store(tlsCfg)
	}
	watch, err := watchFiles(re.files(), re.changed, log)
	if err != nil {
		_ = srv.Close()
		return nil, err
	}
	ln, err := listen(cfg.Addr, "--listen")
	if err != nil {
		watch.Close()
		_ = srv.Close()
		return nil, err
	}
	var tlsLn net.Listener
	if tlsCfg != nil {
		if tlsLn, err = listen(cfg.TLSAddr, "--listen-tls"); err != nil {
			watch.Close()
			_, _ = ln.Close(), srv.Close()
			return nil, err
		}
	}
	closeAll := func() {
		watch.Close()
		_ = ln.Close()
		if tlsLn != nil {
			_ = tlsLn.Close()
		}
		_ = srv.Close()
	}
	st := newStats()
	conns := newNetConns(cfg, st, log)
	gate := newAttachGate()
	held := newHoldings(srv, cfg, st, log, clock.OrSystem(cfg.Clock))
	tcp := &tcpListener{Listener: ln, cfg: cfg, stats: st, log: log, conns: conns, gate: gate, held: held}
	g := &guard{srv: srv, cfg: cfg, stats: st, log: log, conns: conns, users: users, acl: acl, reserved: map[string]bool{},
		left: newLeftHolds(cfg.MaxClients), clock: clock.OrSystem(cfg.Clock), held: held,
		checks: newLoginQueue(clock.OrSystem(cfg.Clock)), throttle: newLoginThrottle(), verified: newVerifiedLogins(cfg.MaxClients)}
	if err := srv.AddHook(g, nil); err != nil {
		closeAll()
		return nil, fmt.Errorf("broker: %w", err)
	}
	if err := srv.AddHook(held, nil); err != nil {
		closeAll()
		return nil, fmt.Errorf("broker: %w", err)
	}
	if cfg.SATKeyFile != "" {
		if g.sat, err = newSATCheck(cfg, srv, log, g.checks); err != nil {
			closeAll()
			return nil, err
		}
		if err := srv.AddHook(g.sat, nil); err != nil {
			closeAll()
			return nil, fmt.Errorf("broker: %w", err)
		}
	}
	if err := srv.AddListener(listeners.NewNet(tcpListenerID, tcp)); err != nil {
		closeAll()
		return nil, fmt.Errorf("broker: tcp listener: %w", err)
	}
	tlsAddr := ""
	if tlsLn != nil {
		tlsAddr = tlsLn.Addr().String()
		// TLS under the bounds: boundedConn reads and writes MQTT's bytes.
		secure := &tcpListener{Listener: tls.NewListener(tlsLn, re.listenerTLS()), cfg: cfg, stats: st, log: log, conns: conns, gate: gate,
			held: held}
		if err := srv.AddListener(listeners.NewNet(tlsListenerID, secure)); err != nil {
			closeAll()
			return nil, fmt.Errorf("broker: TLS listener: %w", err)
		}
	}
	pipes := newPipeListener(gate)
	if err := srv.AddListener(listeners.NewNet(inProcessListener, pipes)); err != nil {
		watch.Close()
		_ = srv.Close()
		return nil, fmt.Errorf("broker: in-process listener: %w", err)
	}
	if err := srv.Serve(); err != nil { // Serve does not block: it starts the accept loops and returns
		watch.Close()
		_ = srv.Close()
		return nil, fmt.Errorf("broker: %w", err)
	}
	return &Embedded{srv: srv, addr: ln.Addr().String(), tlsAddr: tlsAddr, pipes: pipes, guard: g, stats: st, watch: watch,
		gate: gate, held: held}, nil
}

// listen listens on addr, the value of flag.
func listen(addr, flag string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, &AddrInUseError{Addr: addr, Flag: flag, Err: err}
		}
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	return ln, nil
}

// Reserve reserves a client id for the host's own clients: a client over
// TCP connecting with it is refused (CONNACK 0x85). Every id that connects
// in process is reserved from its first CONNECT; Reserve closes the window
// before it (the host reserves its executor's id before connecting it).
func (e *Embedded) Reserve(clientID string) { e.guard.reserve(clientID) }

// newServer builds the mochi server. Each setting below is a deliberate
// departure from (or a deliberate keeping of) mochi's defaults.
func newServer(logger *slog.Logger) *mqtt.Server {
	caps := mqtt.NewDefaultServerCapabilities()

	// Retained messages off: a retained PUBLISH is delivered to the
	// current subscribers and not kept (mochi kept each one, any size,
	// until restart). The guard's CONNACK says Retain Available 0.
	caps.RetainAvailable = 0

	// Packet size: mochi's own MaximumPacketSize would bound the host's
	// in-process clients too (their replies may be larger than a request
	// may be); the TCP clients' packets are bounded as they are read
	// (tcpconn.go) and the bound announced by the guard.

	// Message expiry. mochi's default MaximumMessageExpiryInterval (86400)
	// does two things: it stamps a one-day expiry on every message that had
	// none (subscribers then see a Message Expiry Interval the sender never
	// set, and a request without expiry must be told apart from one with it),
	// and it caps longer expiries. mochi computes min(maximum, message's) with
	// 0 meaning "none" on either side, so 0 here means: a message without
	// expiry stays without, and a message with expiry keeps its own (counted
	// down while queued, as the spec asks). Retained and in-flight messages
	// are then no longer force-dropped after a day either. mochi counts expiry
	// in whole seconds: a subscriber may see 9 where the sender set 10.
	caps.MaximumMessageExpiryInterval = 0

	// In flight per client. mochi keeps at most MaximumInflight QoS>0 messages
	// per client and drops the rest (default 8192), and also caps a client's
	// own Receive Maximum at it. Raised to the protocol's limit of 65535
	// packet ids so a burst to the host's executor (in process) is never
	// silently dropped; the guard bounds the TCP clients (Config.MaxInflight).
	caps.MaximumInflight = math.MaxUint16

	// The per-client write queue (MaximumClientWritesPending, default 8192)
	// drops messages when full. It is a buffered channel of pointers made
	// whole at each CONNECT: 65535 reserved ~512 KiB per client, idle or not
	// (1000 idle connections took ~0.5 GiB). It only fills while the
	// client's writer falls behind: a TCP client's writes never wait
	// (tcpconn.go), nor do the in-process pipe's (mempipe.go).
	// Drops are counted (Stats.MessagesDropped).
	caps.MaximumClientWritesPending = clientWritesPending

	// Receive Maximum, the broker's (how many QoS 1/2 PUBLISHes a client may
	// have unacked towards the broker): kept at mochi's default, 1024,
	// advertised in CONNACK and honoured by paho; mochi acks QoS 1 at once,
	// so it never binds. The client's own Receive Maximum stalled mochi once
	// its window filled (mochi forgot a message it sent when quota came
	// back, and with it the quota): the holdings hook gives the quota back
	// (heldhooks.go, OnPacketRead).

	// Shared subscriptions on ($share/group/filter lets several executors
	// split one command's requests). mochi picks a member at random (and
	// skewed, ~70/30 between two); the sharedRoundRobin hook below picks
	// connected members in turn instead.
	caps.SharedSubAvailable = 1

	// mochi copies a PUBLISH's user properties into its PUBACK unless told
	// not to: a request's metadata would travel back in every ack for nothing.
	caps.Compatibilities.NoInheritedPropertiesOnAck = true

	srv := mqtt.New(&mqtt.Options{
		Capabilities: caps,
		Logger:       logger,
		// No InlineClient: its Publish cannot set v5 properties, so cmdhost's
		// components connect as MQTT clients, through DialInProcess.
		InlineClient: false,
	})

	// Anyone may connect, publish and subscribe (the embedded broker is for
	// local use), within the bounds of the guard (added by start: it allows
	// every CONNECT that passes them; without such a hook mochi refuses
	// every CONNECT).
	_ = srv.AddHook(&sharedRoundRobin{clients: srv.Clients, next: map[string]uint64{}}, nil)
	_ = srv.AddHook(new(keepPublishUserProperties), nil)
	// No storage hook: sessions, in-flight and retained messages live in
	// memory only and end with the process (sessions still survive a client's
	// reconnect while the broker runs).
	return srv
}

// Addr is the address the broker listens on (with the real port when
// Config.Addr had port 0).
func (e *Embedded) Addr() string { return e.addr }

// TLSAddr is the TLS listener's address (with the real port when
// Config.TLSAddr had port 0); "" without one.
func (e *Embedded) TLSAddr() string { return e.tlsAddr }

// URL is the address to give clients: mqtt://host:port (an unspecified listen
// host such as 0.0.0.0 becomes 127.0.0.1).
func (e *Embedded) URL() *url.URL {
	u, err := url.Parse(dialURL(e.addr))
	if err != nil { // cannot happen for an address net.Listen accepted
		return &url.URL{Scheme: "mqtt", Host: e.addr}
	}
	return u
}

// Close disconnects every client and stops listening. It may be called more
// than once.
func (e *Embedded) Close() error {
	e.closeOnce.Do(func() { // mochi's Close panics if called twice
		e.watch.Close()
		e.held.close()
		e.drain(closeDrain)
		// No connection may reach mochi's attachClient once its Close
		// waits for the clients (attach.go).
		e.gate.shutAndWait()
		// mochi's Server.Close finds each listener's clients with
		// Clients.GetByListener, which takes the clients' read lock twice:
		// a client detaching in between (its Delete waiting for the write
		// lock) deadlocks it, and Close never returns (seen in the tests
		// under load; a host stopping while an invoker disconnects would
		// hang the same way). So the listeners are closed here first, by
		// a CloseFn that reads the clients once; Server.Close then finds
		// them closed and does not look for their clients again.
		e.srv.Listeners.CloseAll(e.disconnectClients)
		e.closeErr = e.srv.Close()
	})
	return e.closeErr
}

// disconnectClients disconnects the clients of a listener that closes.
func (e *Embedded) disconnectClients(listener string) {
	for _, cl := range e.srv.Clients.GetAll() {
		if cl.Net.Listener == listener && !cl.Closed() {
			_ = e.srv.DisconnectClient(cl, packets.ErrServerShuttingDown)
		}
	}
}

// clientWritesPending is mochi's queue of packets per client (see
// newServer): 16 KiB of pointers per client, made at each CONNECT.
const clientWritesPending = 2048

// closeDrain bounds how long Close waits for deliveries in flight.
const closeDrain = 2 * time.Second

// drain waits, up to limit, until no QoS 1 delivery awaits its PUBACK. A
// host that stops answers its last requests just before: without this the
// broker would drop those replies on their way to the invokers. mochi
// counts a forwarded message in flight before it acknowledges its
// publisher, so a reply the executor has published is counted here.
func (e *Embedded) drain(limit time.Duration) {
	deadline := time.Now().Add(limit)
	for atomic.LoadInt64(&e.srv.Info.Inflight) > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// dialURL turns a listen address into the URL a local client dials.
func dialURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "mqtt://" + addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return (&url.URL{Scheme: "mqtt", Host: net.JoinHostPort(host, port)}).String()
}

// sharedRoundRobin selects the receiver of each shared-subscription group in
// turn (sorted by client id), skipping members whose connection is down while
// any member is up: mochi keeps a disconnected member's session, and would
// otherwise queue every other request for an executor that may not return.
type sharedRoundRobin struct {
	mqtt.HookBase
	clients *mqtt.Clients

	mu   sync.Mutex
	next map[string]uint64 // per shared filter ($share/group/filter)
}

func (h *sharedRoundRobin) ID() string { return "cmdhost-shared-round-robin" }

func (h *sharedRoundRobin) Provides(b byte) bool { return b == mqtt.OnSelectSubscribers }

func (h *sharedRoundRobin) OnSelectSubscribers(subs *mqtt.Subscribers, _ packets.Packet) *mqtt.Subscribers {
	if len(subs.Shared) == 0 {
		return subs
	}
	if subs.SharedSelected == nil {
		subs.SharedSelected = map[string]packets.Subscription{}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for filter, members := range subs.Shared {
		ids := slices.Sorted(maps.Keys(members))
		if up := slices.DeleteFunc(slices.Clone(ids), func(id string) bool {
			cl, ok := h.clients.Get(id)
			return !ok || cl.Closed()
		}); len(up) > 0 {
			ids = up
		}
		if len(ids) == 0 {
			continue
		}
		n := h.next[filter]
		h.next[filter] = n + 1
		id := ids[n%uint64(len(ids))]
		sub := members[id]
		if prev, ok := subs.SharedSelected[id]; ok { // one client picked by two groups gets one copy
			sub = prev.Merge(sub)
		}
		subs.SharedSelected[id] = sub
	}
	return subs
}

// keepPublishUserProperties undoes mochi's over-strict Request Problem
// Information handling. A client that sends Request Problem Information = 0
// in CONNECT forbids Reason Strings and User Properties on acks and the like,
// but PUBLISH, CONNACK and DISCONNECT are exempt (MQTT 5 §3.1.2.11.7). mochi
// strips them from every packet, PUBLISH included, so such a client gets
// every message without its user properties (cmdhost's protocol metadata).
// paho sends RPI = 0 whenever CONNECT has properties built without
// RequestProblemInfo set, which autopaho does for any SessionExpiryInterval
// > 0: exactly the executors that need their sessions kept.
type keepPublishUserProperties struct{ mqtt.HookBase }

func (h *keepPublishUserProperties) ID() string { return "cmdhost-keep-publish-user-properties" }

func (h *keepPublishUserProperties) Provides(b byte) bool { return b == mqtt.OnPacketEncode }

func (h *keepPublishUserProperties) OnPacketEncode(_ *mqtt.Client, pk packets.Packet) packets.Packet {
	switch pk.FixedHeader.Type {
	case packets.Publish, packets.Connack, packets.Disconnect:
		pk.Mods.DisallowProblemInfo = false
	}
	return pk
}
