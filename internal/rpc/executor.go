package rpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/logx"
	"github.com/cmdhost/cmdhost/internal/ratelog"
	"github.com/cmdhost/cmdhost/internal/redact"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/state"
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
	// PropName and PropValue are the reply's __propName and __propVal,
	// when set.
	PropName, PropValue string
	// RetryAfter, when set, says when the invoker may send again: the
	// reply's __propName is RetryAfterProperty and its __propVal the
	// duration (caller.go).
	RetryAfter time.Duration
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
	// Handler runs the command; Raw instead, for a raw command (one
	// of the two).
	Handler Handler
	// Raw, when set, serves the command raw (raw.go): its handler gets
	// the request's reserved properties (__ts, __ft, ...), judges its
	// __ts itself, and gives its reply's __ts (none when it gives none).
	Raw RawHandler
	// KeepsDeadline says that Handler returns by its context's deadline
	// or cancel on its own, however its command behaves (a WASM handler:
	// wazero closes the guest's module then, and every host function
	// waits on the context). The executor then calls it on the request's
	// goroutine, and answers a cut call once the handler has returned.
	// Otherwise the handler runs in a goroutine of its own, and the
	// executor answers at the cut without waiting for it: one more
	// goroutine and channel per request.
	KeepsDeadline bool
	// CommitErrors commits the state writes of a call whose handler
	// answered an error (a status of 400 or more) too; by default only a
	// success's commit (commit.go).
	CommitErrors bool
	// Admit, when set, decides whether the request's caller may call the
	// command (req.Caller, the verified caller): a *StatusError refuses
	// it, and the refusal is its reply (stored for its duplicates, never
	// reused) before the command runs or a reused reply is sent. It runs
	// on the executor's receiving path: it must not block.
	Admit func(req *abi.Request) *StatusError
}

// Config configures an Executor. ExecutorID and Session.Broker are
// required.
type Config struct {
	// ExecutorID resolves {executorId} in topic patterns; it is also the
	// MQTT client id unless Session.ClientID is set. The client id is the
	// responses' __srcId.
	ExecutorID string
	// Session is how the executor connects to its broker (package
	// session). The executor's session is persistent and acks requests
	// by hand, in receipt order (it sets CleanStart and ManualAcks); its
	// Clock and Logger default to the executor's.
	Session session.Config
	// ShareGroup subscribes through $share/<group>/ so replicas split the
	// requests.
	ShareGroup string
	// TopicNamespace is prefixed to every request topic.
	TopicNamespace string
	// TopicTokens replace {token}s in topic patterns ({executorId} and
	// {commandName} are always replaced).
	TopicTokens map[string]string
	// Clock is the clock for expiry bookkeeping; nil: the system clock.
	// Timers (execution timeouts) run on the real clock for durations
	// computed from it.
	Clock clock.Clock
	// Logger; nil discards.
	Logger *slog.Logger
	// Stores makes the dedup store and the reuse cache (store.go):
	// MemoryStores when nil, or RedisStores, shared by the replicas and
	// restarts that name the same Redis.
	Stores Stores
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
	// CallerTopicToken names a topic token ({caller} in a command's
	// pattern, e.g. rpc/{executorId}/{commandName}/{caller}) whose value
	// in a request's topic is its verified caller's user name: set it
	// only on a broker whose ACL lets each user publish only where that
	// level is its own name (mosquitto: pattern write rpc/ID/+/%u).
	// A command whose pattern has no such token has no verified caller.
	// Unused with TrustBrokerClientID. "": none.
	CallerTopicToken string
	// MaxDedupBytes bounds the bytes of the replies the dedup store
	// keeps (in memory; not with RedisStores); past it a reply is kept as a
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
	// Observer is told each request's outcome (metrics, observe.go); nil:
	// none.
	Observer Observer
	// Events receives the timeout events and budget warnings (attempts.go);
	// nil: none (timeouts are still logged).
	Events events.Sink
	// Tracer makes a span of each request run, a child of the trace
	// context it carries (tracing.go); nil: no tracing.
	Tracer trace.Tracer
	// State is the handlers' state store: each call stages its writes in
	// a state.Txn its handler's context carries, committed when its
	// outcome is recorded (commit.go). nil: none (the handlers' state
	// calls answer unavailable). StateLimits bound a call's writes.
	State       state.Backend
	StateLimits state.Limits
}

func (c *Config) defaults() error {
	if c.ExecutorID == "" {
		return errors.New("executor id is required")
	}
	c.Clock = clock.OrSystem(c.Clock)
	c.Logger = logx.OrDiscard(c.Logger)
	s := &c.Session
	if s.ClientID == "" {
		s.ClientID = c.ExecutorID
	}
	if s.Clock == nil {
		s.Clock = c.Clock
	}
	if s.Logger == nil {
		s.Logger = c.Logger
	}
	s.CleanStart, s.ManualAcks = false, true
	var err error
	if c.Session, err = c.Session.Resolve(); err != nil {
		return err
	}
	if c.Stores == nil {
		c.Stores = MemoryStores()
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
	return nil
}

// clientID is the executor's MQTT client id, its responses' __srcId.
func (c *Config) clientID() string { return c.Session.ClientID }

// route is a served command with its parsed topic.
type route struct {
	cmd     Command
	pattern TopicPattern
	filter  string // the subscription, with the share prefix
	slots   *slots // the command's execution slots, granted in receipt order
	// lane serialises a call whose state commit conflicted against the
	// command's other calls (commit.go).
	lane sync.RWMutex
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
// Concurrency: the session delivers requests one at a time on one
// goroutine (receive), which never blocks: a first receipt runs on a
// worker (session.Workers), and any other request that needs a publish
// gets a goroutine of its own. pending bounds the first receipts in
// progress. The dedup store and the HLC have their own locks.
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
	// keepsOutcomes: the dedup store keeps outcomes in the state store,
	// committed with the writes (StateStores, commit.go).
	keepsOutcomes bool
	// effects is the dedup store when the state store is in its Redis
	// and a call's writes commit in its outcome's script
	// (cache.StateCarrier, commit.go); nil otherwise.
	effects cache.StateCarrier[*reply]
	// carrier is the dedup store when it carries the reuse cache's Redis
	// calls in its round trips (cache.ReuseCarrier; claims.go, reuse.go);
	// nil when it does not.
	carrier cache.ReuseCarrier[*reply]
	// storeFault is the shared dedup store's last refusal of a claim, until
	// a claim succeeds (storefault.go); nil when the last claim succeeded.
	storeFault atomic.Pointer[storeFault]

	// sess is the MQTT session (package session): the connection, its
	// acks and its health.
	sess       mqttSession
	subscribed chan error // the first subscription's outcome
	pending    atomic.Int64
	inflight   sync.WaitGroup
	// admit guards stopping and closing against inflight.Add and
	// lateDups.Add: once Stop has set stopping, no new request is
	// admitted; once it has set closing, no duplicate either (stop.go).
	admit    sync.Mutex
	stopping bool
	closing  bool
	lateDups sync.WaitGroup // duplicates answered while stopping
	// takenWhileStopping counts the requests receiveWhileStopping has
	// dealt with (a duplicate registered in lateDups, the rest left for the
	// restarted host): a test waits on it before it ends the drain.
	takenWhileStopping atomic.Int64
	unsubbed           atomic.Bool   // set by Unsubscribe: reconnections do not subscribe again
	served             atomic.Bool   // Start succeeded: failed subscriptions are tried again (connection.go)
	up                 atomic.Bool   // connected and subscribed (Ready)
	stopped            chan struct{} // closed by Stop: waiting duplicates give up
	stopOnce           sync.Once
	workers            *session.Workers // run first receipts' executions

	link          connGeneration  // which connection the subscriptions were made on (connection.go)
	topicsRefused atomic.Int64    // requests refused for their response topic (SessionStats)
	topicRefusals ratelog.Limiter // refused response topics: a log line a second
}

// maxIdleWorkers is how many workers wait for work at most: more than a
// busy host's requests in flight (each of which holds its worker while
// its reply is published and acked).
const maxIdleWorkers = 256

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
		hlc:           hlc.New(hlc.Config{NodeID: nodeID(cfg.clientID()), Clock: cfg.Clock, MaxDrift: cfg.MaxClockDrift}),
		subscribed:    make(chan error, 1),
		stopped:       make(chan struct{}),
		topicRefusals: ratelog.Limiter{Interval: time.Second},
	}
	sess, err := session.New(cfg.Session, session.Handlers{Received: e.receive, Up: e.connectionUp, Down: e.connectionDown,
		ConnectError: e.connectError})
	if err != nil {
		return nil, err
	}
	e.sess = sess
	dedup, err := cfg.Stores.dedup(&cfg)
	if err != nil {
		return nil, err
	}
	e.dedup = dedup
	if ss, ok := cfg.Stores.(stateStores); ok {
		if cfg.State != nil && cfg.State != ss.b {
			dedup.Close()
			return nil, errors.New("the outcomes and the state writes must be kept in one state store (Config.State and StateStores name two)")
		}
		e.cfg.State, e.keepsOutcomes = ss.b, true
	}
	if rs, ok := cfg.Stores.(redisStores); ok && rs.cfg.State {
		sc, ok := dedup.(cache.StateCarrier[*reply])
		if !ok || cfg.State != nil {
			dedup.Close()
			return nil, errors.New("the state writes must be kept in one state store (Config.State and RedisConfig.State name two)")
		}
		e.cfg.State, e.effects = sc.State(cfg.StateLimits), sc
	}
	e.claims = newClaimQueue(e)
	e.workers = session.NewWorkers(maxIdleWorkers)
	if cfg.ReuseMaxBytes >= 0 {
		if e.reuse, err = cfg.Stores.reuse(&cfg); err != nil {
			dedup.Close()
			return nil, err
		}
		if c, ok := dedup.(cache.ReuseCarrier[*reply]); ok && c.CarryReuse(e.reuse) {
			e.carrier = c
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
	if (c.Handler == nil) == (c.Raw == nil) {
		return nil, fmt.Errorf("command %s: give a handler or a raw handler, one of the two", c.Name)
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
// the broker acknowledges its replies (session.Ready); an error naming
// what is missing before, while it reconnects, while the broker has
// acknowledged none of its waiting replies for a third of
// Config.Session.ReplyAckTimeout, and once Stop began.
func (e *Executor) Ready() error {
	e.admit.Lock()
	stopping := e.stopping
	e.admit.Unlock()
	switch {
	case stopping:
		return errors.New("the executor is stopping")
	case !e.up.Load():
		return fmt.Errorf("not connected and subscribed to the broker %s", redact.URL(e.cfg.Session.Broker))
	}
	if err := e.storeFaultErr(); err != nil {
		return err
	}
	return e.sess.Ready()
}

// SessionExpiry is the session expiry the executor asks the broker for
// (Config.Session.Expiry, resolved).
func (e *Executor) SessionExpiry() time.Duration { return e.cfg.Session.ExpiryInterval() }

// Start connects to the broker and subscribes every command's topic; it
// returns once subscribed, or with the error that prevented it.
func (e *Executor) Start(ctx context.Context) error {
	if err := e.sess.Connect(); err != nil {
		return fmt.Errorf("connecting to %s: %w", redact.URL(e.cfg.Session.Broker), err)
	}
	select {
	case err := <-e.subscribed:
		if session.Refused(err) {
			_ = e.sess.Disconnect(context.Background())
			return fmt.Errorf("connecting to %s: %w", redact.URL(e.cfg.Session.Broker), err)
		}
		if err == nil {
			e.served.Store(true) // from now on a failed subscription is tried again
		}
		return err
	case <-ctx.Done():
		_ = e.sess.Disconnect(context.Background())
		return fmt.Errorf("connecting to %s: %w (is a broker running there? see --broker)", redact.URL(e.cfg.Session.Broker), ctx.Err())
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
// session (Config.Session.Expiry), so that a restarted host gets the
// requests sent while it was down; a host leaving for good (a replica
// retired from its share group) unsubscribes before stopping, or its share
// of the requests waits in its session until that expires. It is the SDK
// executor's finalization (conformance case UnsubAckFailure): a refused
// UNSUBSCRIBE is an error naming the command.
func (e *Executor) Unsubscribe(ctx context.Context) error {
	e.unsubbed.Store(true)
	if !e.sess.Started() {
		return nil
	}
	return e.unsubscribe(ctx, e.table())
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

// receive takes one request from the session. It must not block: the
// session hands it every PUBLISH in turn on one goroutine.
func (e *Executor) receive(m session.Received) {
	in := &incoming{pub: m.Packet, msg: m, received: e.cfg.Clock.Now()}
	if in.route = e.match(in.pub.Topic); in.route == nil {
		e.log.Debug("request on a topic no command serves", "topic", in.pub.Topic)
		e.ack(in)
		return
	}
	if !e.enter(&e.stopping, &e.inflight) {
		e.receiveWhileStopping(in)
		return
	}
	if e.log.Enabled(context.Background(), slog.LevelDebug) {
		e.log.Debug("request received", "command", in.route.cmd.Name, "topic", in.pub.Topic, "dup", in.pub.Duplicate())
	}
	if r := in.read(e.cfg.ExecutorID); r != nil {
		if in.topicProblem != "" {
			e.refuseResponseTopic(in, in.topicProblem)
		}
		go e.finishFirst(in, r)
		return
	}
	if in.req != nil {
		in.req.Caller = e.callerOf(in) // caller.go
	}
	if in.cancel {
		if e.claims != nil {
			e.claims.add(in, cache.Key{}) // after the requests queued before it
		} else {
			e.cancel(in)
		}
		return
	}
	if r := e.overMaxExpiry(in); r != nil {
		go e.finishFirst(in, r) // before the dedup store: it takes no entry
		return
	}
	key := cache.Key{Correlation: string(in.correlation), ResponseTopic: in.responseTopic}
	if e.claims != nil {
		// The claim is a round trip to Redis, and may wait for a slow
		// replica (up to 5 s: cache/redis_confirm.go): the ack goes
		// first, so that an invoker never takes a host that is there for
		// absent. A request the claim then refuses gets its 503 after it.
		e.accept(in)
		e.claims.add(in, key)
		return
	}
	entry, first, err := e.dedup.Claim(e.invokerOf(in), key, in.expiry, in.route.cmd.Idempotent)
	e.admitClaimed(in, key, entry, first, err)
}

// admitClaimed runs, answers or refuses a request given what the dedup store
// said of it, in the order requests arrived.
func (e *Executor) admitClaimed(in *incoming, key cache.Key, entry *cache.Entry[*reply], first bool, err error) {
	e.noteClaim(err)
	switch {
	case errors.Is(err, cache.ErrStoreUnavailable) && in.route.cmd.Idempotent:
		e.log.Warn(storeTrouble(err)+": an idempotent request runs unrecorded", "command", in.route.cmd.Name, "err", err)
		e.storeDown(in, err)
		e.start(in, key, nil)
	case errors.Is(err, cache.ErrStoreUnavailable):
		e.log.Error(storeTrouble(err)+": a request to a non-idempotent command is not run (503)", "command", in.route.cmd.Name, "err", err)
		e.storeDown(in, err)
		go e.finishFirst(in, storeRefusal(err))
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
	if in.askAck && in.accepted == nil {
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
// a worker (session.Workers).
func (e *Executor) start(in *incoming, key cache.Key, entry *cache.Entry[*reply]) {
	e.beginTrace(in)
	if in.timestamp != nil {
		if err := e.hlc.Update(*in.timestamp); err != nil && in.route.cmd.Raw != nil {
			// A raw command's handler judges its __ts (raw.go): the
			// clock only takes one it can.
			e.log.Debug("a raw command's __ts not merged into the clock", "command", in.route.cmd.Name, "err", err)
		} else if err != nil {
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
	if r := e.admitCaller(in); r != nil { // caller.go
		e.pending.Add(-1)
		e.complete(in, entry, r)
		go e.finishTraced(in, r)
		return
	}
	reuseKey, reusable := e.reuseKey(in)
	if reusable {
		r, ok := in.reused, in.reused != nil
		if !in.reuseAsked {
			r, ok = e.reuse.Get(reuseKey)
		}
		if ok {
			e.pending.Add(-1)
			e.complete(in, entry, r)
			go e.finishTraced(in, r)
			return
		}
	}
	c := e.calls.begin(key) // in progress: a cancel can find it from now on
	e.accept(in)
	turn := in.route.slots.enqueue() // here, in receipt order
	e.workers.Run(func() {
		defer e.pending.Add(-1)
		r, ok := e.runCommitted(in, turn, c, entry)
		if !ok {
			e.logCancelled(in, c)
		}
		e.calls.end(key, c)
		if reusable && ok && e.rememberCarried(reuseKey, in, entry, r) {
			e.finishTraced(in, r)
			return
		}
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
	e.dedup.Complete(entry, r, keepUntil(in))
}

// keepUntil is when a request's dedup entry may go: one request window
// past its expiry.
func keepUntil(in *incoming) time.Time { return in.expiry.Add(in.expiry.Sub(in.received)) }

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
		wait = in.expiry.Sub(e.cfg.Clock.Now())
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := e.sess.AwaitConnection(ctx); err != nil {
		e.log.Warn("no connection to publish the response before its expiry", "topic", in.responseTopic)
		return
	}
	var expiry uint32 // none when the request had none
	if !in.expiry.IsZero() {
		if expiry = expirySeconds(e.cfg.Clock.Now(), in.expiry); expiry == 0 {
			e.log.Info("no time left to answer", "topic", in.pub.Topic)
			return
		}
	}
	p := e.wireReply(in, r, expiry)
	if p == nil {
		return
	}
	if err := e.sess.Publish(ctx, p); err != nil {
		e.log.Warn("publishing a response", "topic", in.responseTopic, "err", err)
	}
}

// ack acknowledges the request on the connection that delivered it; the
// session sends acks in receipt order. After that connection dropped,
// the ack is moot: the broker redelivers the request.
func (e *Executor) ack(in *incoming) {
	if err := e.sess.Ack(in.msg); err != nil {
		e.log.Debug("ack not sent", "topic", in.pub.Topic, "err", err)
	}
}

// nodeID makes an HLC node id of a client id: timestamps separate their
// fields with ':', so a node id cannot hold one.
func nodeID(clientID string) string { return strings.ReplaceAll(clientID, ":", "_") }

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
