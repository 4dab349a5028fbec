package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	"github.com/eclipse/paho.golang/paho/session/state"
	"github.com/eclipse/paho.golang/paho/store/memory"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/ratelog"
)

// Handler runs one command. ctx carries the call's deadline, the earlier of
// the request's remaining expiry and the command's execution timeout. A
// response is published as it is (an application error included); an
// error is a host fault (500) unless it is a *StatusError.
type Handler func(ctx context.Context, req *abi.Request) (*abi.Response, error)

// StatusError lets a handler answer with a protocol status of the host's,
// such as 503 while a plugin is being replaced.
type StatusError struct {
	Status  abi.Status
	Message string
}

func (e *StatusError) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Message) }

// Command is one command the executor serves.
type Command struct {
	Name string
	// Topic is the request topic pattern, e.g. DefaultTopic; required.
	Topic string
	// Idempotent commands with a ResponseTTL reuse replies for equivalent
	// requests (reuse.go); all commands are deduplicated.
	Idempotent bool
	// ResponseTTL is how long a successful reply of an idempotent command
	// may answer equivalent requests; 0: never (see reuse.go).
	ResponseTTL time.Duration
	// Timeout is the execution timeout; 0 leaves only the request's expiry.
	Timeout time.Duration
	// TimeoutRetries is the on_timeout policy: 0 fails a call its
	// execution timeout cut (408, policy fail); n > 0 runs it again, at
	// most n more times, on a fresh instance while the request's expiry
	// leaves time (policy retry). Only idempotent commands may retry.
	TimeoutRetries int
	// Concurrency bounds the command's calls at once; default 8.
	Concurrency int
	Handler     Handler
	// KeepsDeadline says that Handler returns by its context's deadline
	// or cancel on its own, however its command behaves (a WASM handler:
	// wazero closes the guest's module then, and every host function
	// waits on the context). The executor then calls it on the request's
	// goroutine, and answers a cut call once the handler has returned.
	// Otherwise the handler runs in a goroutine of its own, and the
	// executor answers at the cut without waiting for it: one more
	// goroutine and channel per request.
	KeepsDeadline bool
}

// DefaultSessionExpiry is Config.SessionExpiry when it is not set.
const DefaultSessionExpiry = 10 * time.Minute

// Config configures an Executor. ExecutorID and Broker are required.
type Config struct {
	// ExecutorID resolves {executorId} in topic patterns; it is also the
	// MQTT client id unless ClientID is set, and the responses' __srcId.
	ExecutorID string
	ClientID   string
	Broker     *url.URL
	// Dial replaces the TCP connection to Broker (tests use a fake broker).
	// The connection must be safe for concurrent writes.
	Dial func(ctx context.Context, cfg autopaho.ClientConfig, u *url.URL) (net.Conn, error)
	// ShareGroup subscribes through $share/<group>/ so replicas split the
	// requests.
	ShareGroup string
	// TopicNamespace is prefixed to every request topic.
	TopicNamespace string
	// TopicTokens replace {token}s in topic patterns ({executorId} and
	// {commandName} are always replaced).
	TopicTokens map[string]string
	// Now is the clock for expiry bookkeeping; default time.Now. Timers
	// (execution timeouts) run on the real clock for durations computed
	// from it.
	Now func() time.Time
	// Logger; nil discards.
	Logger *slog.Logger
	// Store is a Redis, redis://HOST:PORT/DB, that holds the dedup store
	// and the reuse cache's shared tier; "": both in memory (store.go).
	Store string
	// SessionExpiry is how long the broker keeps the MQTT session
	// (subscriptions and unacked requests) after a disconnect, so that
	// they survive reconnects and restarts; 0: DefaultSessionExpiry;
	// negative: none, the session ends with the connection.
	SessionExpiry time.Duration
	// MaxClockDrift bounds how far ahead a request's __ts may be; default 1 min.
	MaxClockDrift time.Duration
	// MaxPending bounds requests queued or running; beyond it: 503.
	// Default 1024.
	MaxPending int
	// MaxDedupEntries bounds the dedup store; beyond it: 503. Default 100,000.
	MaxDedupEntries int
	// MaxDedupPerInvoker bounds the dedup entries of one invoker (its
	// __srcId, else its response topic); beyond it, that invoker's new
	// requests get 503. Default a tenth of MaxDedupEntries; negative: no
	// bound but MaxDedupEntries (admission.go).
	MaxDedupPerInvoker int
	// TrustBrokerClientID keys an invoker's dedup share by the client id
	// the broker stamped on its request (the __brokerClientId user
	// property, which cmdhost's embedded broker sets and no client can
	// forge there), when present. Set it only on the embedded broker:
	// elsewhere any client may send that property.
	TrustBrokerClientID bool
	// MaxDedupBytes bounds the bytes of the replies the dedup store
	// keeps (in memory; not with Store); past it a reply is kept as a
	// digest, and a duplicate of its request gets 500 (dedupbytes.go).
	// Default DefaultMaxDedupBytes; negative: no bound but the entries'.
	MaxDedupBytes int64
	// MaxExpiry is the longest message expiry honoured; a request asking
	// for more gets 400 (Message Expiry), as its dedup entry would be
	// protected that long. Default DefaultMaxExpiry (1 h); at least 1 s.
	MaxExpiry time.Duration
	// ReuseMaxBytes bounds the reuse cache of idempotent replies; 0 is
	// DefaultReuseMaxBytes, negative turns reuse off.
	ReuseMaxBytes int64
	// ReconnectDelay is the wait between connection attempts; default 1 s.
	ReconnectDelay time.Duration
	// Observer is told each request's outcome (metrics, observe.go); nil:
	// none.
	Observer Observer
	// Events receives the timeout events and budget warnings (attempts.go);
	// nil: none (timeouts are still logged).
	Events events.Sink
	// Tracer makes a span of each request run, a child of the trace
	// context it carries (tracing.go); nil: no tracing.
	Tracer trace.Tracer
	// ReplyAckTimeout bounds how long a reply may wait for the broker's
	// PUBACK before its send slot is released, and how long the broker
	// may acknowledge nothing before the connection is dropped and made
	// again (replywatch.go); default DefaultReplyAckTimeout (30 s).
	ReplyAckTimeout time.Duration
	// MaxRequestBytes is the Maximum Packet Size the executor announces in
	// its CONNECT: the broker does not deliver a larger request (MQTT v5
	// §3.1.2.11.4; it drops it for this client), so the host never reads
	// one. Default DefaultMaxRequestBytes (8 MiB); negative: none
	// announced (MQTT's 256 MB).
	MaxRequestBytes int
}

// DefaultMaxRequestBytes is Config.MaxRequestBytes when it is not set.
const DefaultMaxRequestBytes = 8 << 20

func (c *Config) defaults() error {
	if c.ExecutorID == "" {
		return errors.New("executor id is required")
	}
	if c.Broker == nil {
		return errors.New("broker URL is required")
	}
	if c.ClientID == "" {
		c.ClientID = c.ExecutorID
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	switch {
	case c.SessionExpiry == 0:
		c.SessionExpiry = DefaultSessionExpiry
	case c.SessionExpiry < 0:
		c.SessionExpiry = 0
	}
	if c.MaxPending <= 0 {
		c.MaxPending = 1024
	}
	if c.MaxDedupEntries <= 0 {
		c.MaxDedupEntries = cache.DefaultMaxEntries
	}
	if c.MaxDedupPerInvoker == 0 {
		c.MaxDedupPerInvoker = max(1, c.MaxDedupEntries/defaultDedupShare)
	}
	switch {
	case c.MaxExpiry <= 0:
		c.MaxExpiry = DefaultMaxExpiry
	case c.MaxExpiry < time.Second:
		return fmt.Errorf("max expiry %v is under 1 s, the shortest message expiry: every request would be refused", c.MaxExpiry)
	}
	if c.ReconnectDelay <= 0 {
		c.ReconnectDelay = time.Second
	}
	if c.ReplyAckTimeout <= 0 {
		c.ReplyAckTimeout = DefaultReplyAckTimeout
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	return nil
}

// route is a served command with its parsed topic.
type route struct {
	cmd     Command
	pattern TopicPattern
	filter  string // the subscription, with the share prefix
	slots   *slots // the command's execution slots, granted in receipt order
	// private: requests name this executor (its topic holds {executorId}
	// and no share group makes that a service's name), so reused replies
	// stay with their invoker.
	private bool
}

// Executor serves commands over MQTT v5 (PROTOCOL.md): it subscribes each
// command's topic, checks every request's headers, deduplicates by
// correlation data and response topic, runs the handler under a deadline
// and publishes the response, acking requests in receipt order once their
// response is published or known to be owed none.
//
// Concurrency: paho delivers requests one at a time on one goroutine
// (receive), which never blocks: a first receipt runs on a worker
// (workers.go), and any other request that needs a publish gets a
// goroutine of its own. pending bounds the first receipts in progress.
// The dedup store and the HLC have their own locks.
type Executor struct {
	cfg Config
	log *slog.Logger
	// routes is the table of served commands, replaced whole by
	// SetCommands; readers load it once per use.
	routes atomic.Pointer[[]*route]
	hlc    *hlc.Clock
	dedup  cache.Dedup[*reply]
	claims *claimQueue         // the shared store's claims, off the receive goroutine; nil in memory
	reuse  cache.Reuse[*reply] // nil when reuse is off
	calls  runningSet          // requests in progress, for cancels (ask.go)

	// cm is set by Start and by OnConnectionUp, before any request of the
	// connection arrives; requests read it from other goroutines.
	cm          atomic.Pointer[autopaho.ConnectionManager]
	packetLimit packetLimit // the broker's Maximum Packet Size (sendable.go)
	subscribed  chan error  // the first subscription's outcome
	pending     atomic.Int64
	inflight    sync.WaitGroup
	// acks counts the acks made and sent, so that Stop can flush them
	// (ackledger.go).
	acks *ackLedger
	// admit guards stopping and closing against inflight.Add and
	// lateDups.Add: once Stop has set stopping, no new request is
	// admitted; once it has set closing, no duplicate either (stop.go).
	admit    sync.Mutex
	stopping bool
	closing  bool
	lateDups sync.WaitGroup // duplicates answered while stopping
	unsubbed atomic.Bool    // set by Unsubscribe: reconnections do not subscribe again
	served   atomic.Bool    // Start succeeded: failed subscriptions are tried again (connection.go)
	up       atomic.Bool    // connected and subscribed (Ready)
	stopped  chan struct{}  // closed by Stop: waiting duplicates give up
	stopOnce sync.Once
	workers  *workers // run first receipts' executions (workers.go)

	// The connection's health (replywatch.go, connection.go).
	state         *state.State               // the client's session: abandons replies
	watch         *replyWatch                // replies waiting for their PUBACK
	conn          atomic.Pointer[brokerConn] // the latest connection, dropped when the broker is silent
	link          connGeneration             // which connection the subscriptions were made on
	hadSession    atomic.Bool                // the last connection had a session that outlives it
	stats         sessionStats               // counters (SessionStats)
	topicRefusals ratelog.Limiter            // refused response topics: a log line a second
}

// NewExecutor checks the commands and returns an executor; Start connects
// it. Any command it cannot serve is an error: a fixed table is the
// caller's to get right. SetCommands, for tables that change while the
// executor runs, serves the rest instead.
func NewExecutor(cfg Config, commands []Command) (*Executor, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	e := &Executor{
		cfg: cfg, log: cfg.Logger,
		hlc:           hlc.New(hlc.Config{NodeID: nodeID(cfg.ClientID), Now: cfg.Now, MaxDrift: cfg.MaxClockDrift}),
		subscribed:    make(chan error, 1),
		stopped:       make(chan struct{}),
		topicRefusals: ratelog.Limiter{Interval: time.Second},
		state:         state.New(newReplyStore(), memory.New()),
		watch:         newReplyWatch(cfg.Now, cfg.ReplyAckTimeout),
	}
	e.acks = newAckLedger(&watchedSession{SessionManager: e.state, w: e.watch})
	dedup, err := newDedup(&cfg)
	if err != nil {
		return nil, err
	}
	e.dedup = dedup
	e.claims = newClaimQueue(e)
	e.workers = newWorkers(maxIdleWorkers)
	if cfg.ReuseMaxBytes >= 0 {
		if e.reuse, err = newReuse(&cfg); err != nil {
			dedup.Close()
			return nil, err
		}
	}
	routes, err := e.buildRoutes(commands, nil)
	if err != nil {
		return nil, err
	}
	e.routes.Store(&routes)
	return e, nil
}

func (e *Executor) newRoute(c Command) (*route, error) {
	if err := abi.ValidateCommandName(c.Name); err != nil {
		// "command name" names the offending setting (conformance case
		// NullName_ThrowsException checks for it).
		return nil, fmt.Errorf("command name %q: %w", c.Name, err)
	}
	if c.Handler == nil {
		return nil, fmt.Errorf("command %s: no handler", c.Name)
	}
	if c.Timeout < 0 {
		return nil, fmt.Errorf("command %s: negative execution timeout %v", c.Name, c.Timeout)
	}
	if c.TimeoutRetries < 0 {
		return nil, fmt.Errorf("command %s: negative timeout retries %d", c.Name, c.TimeoutRetries)
	}
	if c.TimeoutRetries > 0 && !c.Idempotent {
		return nil, fmt.Errorf("command %s: on_timeout retry needs an idempotent command (a retry would run its effects twice); use fail", c.Name)
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 8
	}
	if c.Topic == "" {
		return nil, fmt.Errorf("command %s: the request topic pattern is empty (the host's default is %s)", c.Name, DefaultTopic)
	}
	topic := c.Topic
	tokens := map[string]string{"executorId": e.cfg.ExecutorID, "commandName": c.Name}
	for k, v := range e.cfg.TopicTokens {
		tokens[k] = v
	}
	pattern, err := ParseTopic(e.cfg.TopicNamespace, topic, tokens)
	if err != nil {
		return nil, fmt.Errorf("command %s: %w", c.Name, err)
	}
	r := &route{cmd: c, pattern: pattern, filter: pattern.Filter(), slots: newSlots(c.Concurrency),
		private: strings.Contains(topic, "{executorId}") && e.cfg.ShareGroup == ""}
	if e.cfg.ShareGroup != "" {
		r.filter = "$share/" + e.cfg.ShareGroup + "/" + r.filter
	}
	return r, nil
}

// Filters returns the subscriptions the executor makes.
func (e *Executor) Filters() []string {
	routes := e.table()
	out := make([]string, len(routes))
	for i, r := range routes {
		out[i] = r.filter
	}
	return out
}

// Ready says whether the executor serves requests: nil once it is
// connected to the broker and subscribed on that connection, and while
// the broker acknowledges its replies (replywatch.go); an error naming
// what is missing before, while it reconnects, while the broker has
// acknowledged none of its waiting replies for a third of
// Config.ReplyAckTimeout, and once Stop began.
func (e *Executor) Ready() error {
	e.admit.Lock()
	stopping := e.stopping
	e.admit.Unlock()
	switch {
	case stopping:
		return errors.New("the executor is stopping")
	case !e.up.Load():
		return fmt.Errorf("not connected and subscribed to the broker %s", e.cfg.Broker)
	}
	return e.watch.ready(e.cfg.Now())
}

// SessionExpiry is the session expiry the executor asks the broker for
// (Config.SessionExpiry, resolved).
func (e *Executor) SessionExpiry() time.Duration { return e.cfg.SessionExpiry }

// Start connects to the broker and subscribes every command's topic; it
// returns once subscribed, or with the error that prevented it.
func (e *Executor) Start(ctx context.Context) error {
	acfg := autopaho.ClientConfig{
		ServerUrls:                    []*url.URL{e.cfg.Broker},
		KeepAlive:                     30,
		CleanStartOnInitialConnection: false,
		SessionExpiryInterval:         uint32(e.cfg.SessionExpiry.Seconds()),
		ReconnectBackoff:              autopaho.NewConstantBackoff(e.cfg.ReconnectDelay),
		ConnectTimeout:                10 * time.Second,
		AttemptConnection:             e.dial(),
		ConnectPacketBuilder:          e.connectPacket,
		OnConnectionUp:                e.connectionUp,
		OnConnectionDown:              e.connectionDown,
		OnConnectError:                func(err error) { e.log.Warn("connecting to the broker", "broker", e.cfg.Broker, "err", err) },
		ClientConfig: paho.ClientConfig{
			ClientID:                   e.cfg.ClientID,
			Session:                    e.acks,
			EnableManualAcknowledgment: true,
			SendAcksInterval:           5 * time.Millisecond,
			OnPublishReceived:          []func(paho.PublishReceived) (bool, error){e.receive},
			OnClientError:              func(err error) { e.log.Warn("mqtt client error", "err", err) },
			OnServerDisconnect:         e.serverDisconnected,
		},
	}
	cm, err := autopaho.NewConnection(context.Background(), acfg)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", e.cfg.Broker, err)
	}
	e.cm.Store(cm)
	select {
	case err := <-e.subscribed:
		if err == nil {
			e.served.Store(true) // from now on a failed subscription is tried again
			go e.watchReplies()
		}
		return err
	case <-ctx.Done():
		_ = cm.Disconnect(context.Background())
		return fmt.Errorf("connecting to %s: %w (is a broker running there? see --broker)", e.cfg.Broker, ctx.Err())
	}
}

// refused returns an error naming each command whose filter the broker
// refused in a SUBACK or UNSUBACK (reasons in the order of routes), or nil.
func refused(doing string, routes []*route, reasons []byte) error {
	var errs []error
	for i, code := range reasons {
		if code >= 0x80 && i < len(routes) {
			r := routes[i]
			errs = append(errs, fmt.Errorf("command %s: %s %s: the broker refused with reason code 0x%02x", r.cmd.Name, doing, r.filter, code))
		}
	}
	return errors.Join(errs...)
}

// Unsubscribe withdraws every command's subscription, so that the broker
// stops routing requests to this executor's session; requests already
// delivered are still answered and acked, and later reconnections do not
// subscribe again. Stop alone keeps the subscriptions in the persistent
// session (Config.SessionExpiry), so that a restarted host gets the
// requests sent while it was down; a host leaving for good (a replica
// retired from its share group) unsubscribes before stopping, or its share
// of the requests waits in its session until that expires. It is the SDK
// executor's finalization (conformance case UnsubAckFailure): a refused
// UNSUBSCRIBE is an error naming the command.
func (e *Executor) Unsubscribe(ctx context.Context) error {
	e.unsubbed.Store(true)
	cm := e.cm.Load()
	if cm == nil {
		return nil
	}
	return e.unsubscribe(ctx, cm, e.table())
}

// match returns the route of a request topic, or nil.
func (e *Executor) match(topic string) *route {
	for _, r := range e.table() {
		if _, ok := r.pattern.Match(topic); ok {
			return r
		}
	}
	return nil
}

// receive takes one request from paho. It must not block: paho calls it
// for every PUBLISH in turn on one goroutine.
func (e *Executor) receive(pr paho.PublishReceived) (bool, error) {
	in := &incoming{pub: pr.Packet, client: pr.Client, received: e.cfg.Now()}
	if in.route = e.match(in.pub.Topic); in.route == nil {
		e.log.Debug("request on a topic no command serves", "topic", in.pub.Topic)
		e.ack(in)
		return true, nil
	}
	if !e.enter(&e.stopping, &e.inflight) {
		e.receiveWhileStopping(in)
		return true, nil
	}
	if e.log.Enabled(context.Background(), slog.LevelDebug) {
		e.log.Debug("request received", "command", in.route.cmd.Name, "topic", in.pub.Topic, "dup", in.pub.Duplicate())
	}
	if r := in.read(e.cfg.ExecutorID); r != nil {
		if in.topicProblem != "" {
			e.refuseResponseTopic(in, in.topicProblem)
		}
		go e.finishFirst(in, r)
		return true, nil
	}
	if in.cancel {
		if e.claims != nil {
			e.claims.add(in, cache.Key{}) // after the requests queued before it
		} else {
			e.cancel(in)
		}
		return true, nil
	}
	if r := e.overMaxExpiry(in); r != nil {
		go e.finishFirst(in, r) // before the dedup store: it takes no entry
		return true, nil
	}
	key := cache.Key{Correlation: string(in.correlation), ResponseTopic: in.responseTopic}
	if e.claims != nil {
		e.claims.add(in, key)
		return true, nil
	}
	entry, first, err := e.dedup.Claim(e.invokerOf(in), key, in.expiry, in.route.cmd.Idempotent)
	e.admitClaimed(in, key, entry, first, err)
	return true, nil
}

// admitClaimed runs, answers or refuses a request given what the dedup store
// said of it, in the order requests arrived.
func (e *Executor) admitClaimed(in *incoming, key cache.Key, entry *cache.Entry[*reply], first bool, err error) {
	switch {
	case errors.Is(err, cache.ErrStoreUnavailable) && in.route.cmd.Idempotent:
		e.log.Warn("the dedup store is unreachable: an idempotent request runs unrecorded", "command", in.route.cmd.Name, "err", err)
		e.storeDown(in)
		e.start(in, key, nil)
	case errors.Is(err, cache.ErrStoreUnavailable):
		e.log.Error("the dedup store is unreachable: a request to a non-idempotent command is not run (503)", "command", in.route.cmd.Name, "err", err)
		e.storeDown(in)
		go e.finishFirst(in, storeDownReply)
	case err != nil:
		go e.finishFirst(in, dedupRefusal(err))
	case !first && !entry.Expiry().After(in.received):
		// A duplicate after the original request's expiry is dead on
		// arrival, even with a fresh expiry of its own: its invoker has
		// stopped waiting, and running it would execute the command
		// twice. Acked, not run, not answered.
		e.log.Info("duplicate after the original's expiry discarded", "command", in.route.cmd.Name)
		go e.finish(in, noReply)
	case !first:
		go e.answerDuplicate(in, entry)
	default:
		e.start(in, key, entry)
	}
}

// cancel cuts the call a cancel request names (ask.go) and acks it.
func (e *Executor) cancel(in *incoming) {
	e.cancelCall(in)
	e.ack(in)
	e.inflight.Done()
}

// answerDuplicate gives a duplicate the original's reply once it exists.
func (e *Executor) answerDuplicate(in *incoming, entry *cache.Entry[*reply]) {
	if in.askAck {
		select {
		case <-entry.Done():
		default: // still in progress: ack it again (ask.go)
			e.publish(in, acceptedReply)
		}
	}
	select {
	case <-entry.Done():
		e.finish(in, entry.Value())
	case <-e.stopped:
		e.inflight.Done() // not acked: redelivered later
	}
}

// start runs a first receipt: clock merge, queue bound, then execution on
// a worker (workers.go).
func (e *Executor) start(in *incoming, key cache.Key, entry *cache.Entry[*reply]) {
	e.beginTrace(in)
	if in.timestamp != nil {
		if err := e.hlc.Update(*in.timestamp); err != nil {
			r := statusReply(abi.StatusServiceUnavailable, err.Error(), "MaxClockDrift", "")
			if errors.Is(err, hlc.ErrCounterOverflow) {
				r = statusReply(abi.StatusInternalError, err.Error(), "Counter", "")
			}
			e.complete(in, entry, r)
			go e.finishTraced(in, r)
			return
		}
	}
	if e.pending.Add(1) > int64(e.cfg.MaxPending) {
		e.pending.Add(-1)
		r := statusReply(abi.StatusServiceUnavailable, fmt.Sprintf("the host is busy: %d requests pending", e.cfg.MaxPending), "", "")
		e.complete(in, entry, r)
		go e.finishTraced(in, r)
		return
	}
	reuseKey, reusable := e.reuseKey(in)
	if reusable {
		if r, ok := e.reuse.Get(reuseKey); ok {
			e.pending.Add(-1)
			e.complete(in, entry, r)
			go e.finishTraced(in, r)
			return
		}
	}
	c := e.calls.begin(key) // in progress: a cancel can find it from now on
	if in.askAck {
		in.accepted = make(chan struct{})
		go e.sendAccepted(in, in.accepted)
	}
	turn := in.route.slots.enqueue() // here, in receipt order
	e.workers.run(func() {
		defer e.pending.Add(-1)
		r, ok := c.settle(e.execute(in, turn, c))
		if !ok {
			e.logCancelled(in, c)
		}
		e.calls.end(key, c)
		if reusable && ok {
			e.remember(reuseKey, in, r)
		}
		e.complete(in, entry, r)
		e.finishTraced(in, r)
	})
}

// complete stores a first receipt's reply. The entry is kept one request
// window past the expiry, so that a duplicate arriving then is recognised
// as dead on arrival rather than run again.
func (e *Executor) complete(in *incoming, entry *cache.Entry[*reply], r *reply) {
	e.dedup.Complete(entry, r, in.expiry.Add(in.expiry.Sub(in.received)))
}

// finish publishes the reply (when one is owed and time is left) and acks
// the request.
func (e *Executor) finish(in *incoming, r *reply) {
	defer e.inflight.Done()
	e.answer(in, r)
}

// answer publishes the reply (when one is owed and time is left) and acks
// the request.
func (e *Executor) answer(in *incoming, r *reply) {
	if in.accepted != nil {
		<-in.accepted // the 202 goes first
	}
	if !r.none {
		e.publish(in, r)
	}
	e.ack(in)
}

func (e *Executor) publish(in *incoming, r *reply) {
	// Wait for the connection at most until the request expires (a reply
	// to a request without expiry, its 400, gets 10 s).
	wait := 10 * time.Second
	if !in.expiry.IsZero() {
		wait = in.expiry.Sub(e.cfg.Now())
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cm := e.cm.Load()
	if err := cm.AwaitConnection(ctx); err != nil {
		e.log.Warn("no connection to publish the response before its expiry", "topic", in.responseTopic)
		return
	}
	var expiry uint32 // none when the request had none
	if !in.expiry.IsZero() {
		if expiry = expirySeconds(e.cfg.Now(), in.expiry); expiry == 0 {
			e.log.Info("no time left to answer", "topic", in.pub.Topic)
			return
		}
	}
	p := e.wireReply(in, r, expiry)
	if p == nil {
		return
	}
	if _, err := cm.Publish(ctx, p); err != nil {
		e.log.Warn("publishing a response", "topic", in.responseTopic, "err", err)
	}
}

// ack acknowledges the request on the connection that delivered it; paho
// sends acks in receipt order. After that connection dropped, the ack is
// moot: the broker redelivers the request.
func (e *Executor) ack(in *incoming) {
	if in.pub.QoS == 0 {
		return
	}
	if err := e.acks.ack(in.client, in.pub); err != nil {
		e.log.Debug("ack not sent", "topic", in.pub.Topic, "err", err)
	}
}

// nodeID makes an HLC node id of a client id: timestamps separate their
// fields with ':', so a node id cannot hold one.
func nodeID(clientID string) string { return strings.ReplaceAll(clientID, ":", "_") }

// requestProblemInfo asks for problem information explicitly. paho leaves
// it unset when session properties are set, which reads as "no": a broker
// may then (mochi does) strip user properties from every packet to the
// client, the protocol's __ headers included.
func requestProblemInfo(c *paho.Connect, _ *url.URL) (*paho.Connect, error) {
	if c.Properties == nil {
		c.Properties = &paho.ConnectProperties{}
	}
	c.Properties.RequestProblemInfo = true
	return c, nil
}

// stamp is the __ts of a message the executor sends: its HLC, advanced,
// or as it stands when it cannot advance (the physical clock stepped back
// further than the drift limit).
func (e *Executor) stamp() string {
	ts, err := e.hlc.Now()
	if err != nil {
		e.log.Warn("clock", "err", err)
		ts = e.hlc.Current()
	}
	return ts.String()
}
