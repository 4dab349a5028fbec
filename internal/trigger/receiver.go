// Package trigger runs the plugins' triggers: handlers the host runs for
// each message published on a topic filter (telemetry in), as the Azure
// IoT Operations telemetry receiver does, with the guarantees of the
// host's commands (docs/messages.md, "Handlers triggered by messages").
//
// A Receiver has an MQTT session of its own (package session), so that a
// slow trigger never holds up the acknowledgements of requests: a
// persistent session (the broker keeps the messages sent while the host
// is down), acknowledged by hand in receipt order, whose Receive Maximum
// bounds the messages the broker leaves unacknowledged with it
// (Config.MaxInFlight). Each trigger handles at most its Concurrency of
// them at once, in the order they came.
//
// A message is acknowledged once its handler completed (at least once):
// its headers checked as the protocol says (header.go), the handler run
// under the command's deadline, fuel and memory, its state writes and
// published messages committed with it (run.go). A failed attempt (an
// error status, a trap, the deadline, a commit refused) runs again after
// a short backoff, up to the trigger's Attempts; then the message is
// dropped: acknowledged, logged (rate-limited), counted, an event. A
// message with an id (cmdhost-message-id, or a CloudEvent's id and
// source) is handled once: its outcome is recorded in the state store in
// the commit of its writes, and a redelivery finds it and runs nothing.
package trigger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/logx"
	"github.com/cmdhost/cmdhost/internal/ratelog"
	"github.com/cmdhost/cmdhost/internal/redact"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/topic"
)

// Trigger is one trigger a Receiver subscribes.
type Trigger struct {
	// Name is the trigger's name (its command's), Plugin the plugin's.
	Name, Plugin string
	// Filter is the module's declared filter: its {token} levels give the
	// handler's topic tokens. Topic is the filter subscribed (within
	// Filter; the operator's, or Filter).
	Filter, Topic topic.Filter
	// Attempts is how many times a message runs before it is dropped;
	// default DefaultAttempts.
	Attempts int
	// Concurrency bounds the trigger's messages handled at once; default
	// 1.
	Concurrency int
	// Timeout is each run's deadline (the command's execution timeout);
	// 0: MaxTimeout.
	Timeout time.Duration
	// Idempotent triggers keep no outcome for their messages' ids: a
	// redelivered message runs again (its messages go out as it runs).
	Idempotent bool
	// ContentTypes the trigger accepts; empty: any. A message of another
	// is dropped unrun.
	ContentTypes []string
	// Handler runs one message. It must return by its context's deadline
	// (a WASM guest does: the engine closes it at the cut).
	Handler rpc.Handler
}

// Defaults.
const (
	DefaultAttempts    = 3
	DefaultMaxInFlight = 64
	DefaultMaxWaiting  = 10_000
	DefaultOutcomeTTL  = 24 * time.Hour
	DefaultBackoff     = 100 * time.Millisecond
	// MaxBackoff bounds the wait between two attempts.
	MaxBackoff = 5 * time.Second
	// MaxTimeout is the deadline of a trigger whose command has no
	// execution timeout: one message never holds the session's
	// acknowledgements longer.
	MaxTimeout = 5 * time.Minute
)

// Config configures a Receiver. ExecutorID, Session.Broker and
// Session.ClientID are required.
type Config struct {
	// ExecutorID is the host's executor id (abi.Request.ExecutorID).
	ExecutorID string
	// Session is how the receiver connects: its own client id (the
	// host's with "-triggers"), persistent, acknowledged by hand in
	// receipt order (the receiver sets CleanStart false, ManualAcks and
	// ReceiveMaximum).
	Session session.Config
	// ShareGroup subscribes each trigger whose topic names no group of
	// its own as $share/GROUP/… so that replicas split its messages.
	ShareGroup string
	// TrustBrokerIdentity reads a message's sender from the stamps of
	// cmdhost's embedded broker (rpc.BrokerClientIDProperty,
	// rpc.BrokerUserProperty), which it sets for the receiver's client
	// (broker.Embedded.StampFor) and no client can forge there. Set it
	// only on the embedded broker.
	TrustBrokerIdentity bool
	// MaxInFlight is the session's Receive Maximum: the messages the
	// broker leaves unacknowledged with the receiver, handled or waiting
	// for their trigger's turn. Default DefaultMaxInFlight.
	MaxInFlight int
	// MaxWaiting bounds the messages received and not done, for a broker
	// that sends past the Receive Maximum: beyond it a message is
	// dropped. Default DefaultMaxWaiting.
	MaxWaiting int
	// State is the state store: each run stages its writes in a Txn,
	// committed with the message's outcome. nil: none (handlers' state
	// calls answer unavailable, no message is kept for its id).
	State       state.Backend
	StateLimits state.Limits
	// OutcomeTTL is how long a handled message's id is remembered;
	// default DefaultOutcomeTTL.
	OutcomeTTL time.Duration
	// Backoff is the wait before a message's second attempt, doubled for
	// each further one up to MaxBackoff; default DefaultBackoff.
	Backoff time.Duration
	// MaxClockDrift bounds how far ahead a message's __ts may be; default
	// 1 min.
	MaxClockDrift time.Duration
	// Clock, Logger, Events (timeouts, drops) and Observer (metrics); nil:
	// the system clock, discarded, none.
	Clock    clock.Clock
	Logger   *slog.Logger
	Events   events.Sink
	Observer Observer
}

// Observer is told what the receiver does with messages (metrics). Its
// methods are called from many goroutines and must not block.
type Observer interface {
	// TriggerMessage is called once per message received for trigger,
	// when it is done: outcome is OutcomeHandled, OutcomeDuplicate or
	// OutcomeDropped; d the time since its receipt.
	TriggerMessage(trigger, outcome string, d time.Duration)
	// TriggerFailure is called for each failed attempt: reason is
	// ReasonError, ReasonTimeout or ReasonCommit.
	TriggerFailure(trigger, reason string)
}

// Outcomes and reasons told to the Observer.
const (
	OutcomeHandled   = "handled"
	OutcomeDuplicate = "duplicate"
	OutcomeDropped   = "dropped"
	ReasonError      = "error"
	ReasonTimeout    = "timeout"
	ReasonCommit     = "commit"
)

func (c *Config) defaults() error {
	if c.ExecutorID == "" {
		return errors.New("trigger receiver: executor id is required")
	}
	c.Clock = clock.OrSystem(c.Clock)
	c.Logger = logx.OrDiscard(c.Logger)
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	c.MaxInFlight = min(c.MaxInFlight, 65535)
	if c.MaxWaiting <= 0 {
		c.MaxWaiting = DefaultMaxWaiting
	}
	if c.OutcomeTTL <= 0 {
		c.OutcomeTTL = DefaultOutcomeTTL
	}
	if c.Backoff <= 0 {
		c.Backoff = DefaultBackoff
	}
	s := &c.Session
	if s.Clock == nil {
		s.Clock = c.Clock
	}
	if s.Logger == nil {
		s.Logger = c.Logger
	}
	s.CleanStart, s.ManualAcks, s.ReceiveMaximum = false, true, c.MaxInFlight
	var err error
	c.Session, err = c.Session.Resolve()
	return err
}

// Receiver subscribes the triggers and runs their handlers.
type Receiver struct {
	cfg Config
	log *slog.Logger
	hlc *hlc.Clock

	sess  *session.Session
	table atomic.Pointer[[]*route] // replaced whole by SetTriggers

	subMu      sync.Mutex        // serialises subscribing
	subscribed map[string]string // subscription filter → trigger name, as made on the broker

	countMu  sync.Mutex
	counters map[string]*counters // by trigger name; kept across changes

	waiting  atomic.Int64   // messages received and not done
	inflight sync.WaitGroup // the same, for Stop
	stopping atomic.Bool
	stop     chan struct{} // closed by Stop: waits end
	stopOnce sync.Once

	keys keyLocks // messages with an id in progress (run.go)

	// synced is closed once the subscriptions of the first connection
	// are made (or refused): Start waits for it.
	synced     chan struct{}
	syncedOnce sync.Once

	dropLog, refuseLog ratelog.Limiter
	unrouted           atomic.Int64
}

// route is a subscribed trigger and the messages waiting for it.
type route struct {
	sub   string       // the subscription filter
	topic topic.Filter // the filter its messages match
	c     *counters
	// lane serialises a run whose commit conflicted against the
	// trigger's other runs (run.go).
	lane sync.RWMutex

	mu      sync.Mutex
	t       Trigger    // as SetTriggers last set it
	running int        // workers handling its messages
	queue   []*message // waiting, in receipt order
}

// trigger returns the trigger as set now.
func (rt *route) trigger() Trigger {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.t
}

// NewReceiver returns a receiver of cfg; Start connects it.
func NewReceiver(cfg Config) (*Receiver, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	r := &Receiver{cfg: cfg, log: cfg.Logger, subscribed: map[string]string{}, counters: map[string]*counters{},
		stop: make(chan struct{}), synced: make(chan struct{}),
		dropLog: ratelog.Limiter{Interval: time.Second}, refuseLog: ratelog.Limiter{Interval: time.Second},
		hlc: hlc.New(hlc.Config{NodeID: strings.ReplaceAll(cfg.Session.ClientID, ":", "_"), Clock: cfg.Clock,
			MaxDrift: cfg.MaxClockDrift})}
	r.keys.init()
	empty := []*route{}
	r.table.Store(&empty)
	sess, err := session.New(cfg.Session, session.Handlers{Received: r.receive, Up: r.connectionUp})
	if err != nil {
		return nil, err
	}
	r.sess = sess
	return r, nil
}

// ClientID is the receiver's MQTT client id.
func (r *Receiver) ClientID() string { return r.cfg.Session.ClientID }

// Start connects to the broker; the triggers are subscribed on each
// connection. It returns once connected and the triggers subscribed (a
// subscription refused is logged, and its trigger's counters say so), or
// with ctx's error: a message published after it returns reaches its
// trigger even on the session's first connection, when the broker held
// no subscription of it yet.
func (r *Receiver) Start(ctx context.Context) error {
	if err := r.sess.Connect(); err != nil {
		return fmt.Errorf("trigger session: connecting to %s: %w", redact.URL(r.cfg.Session.Broker), err)
	}
	if err := r.sess.AwaitConnection(ctx); err != nil {
		return fmt.Errorf("trigger session: connecting to %s: %w", redact.URL(r.cfg.Session.Broker), err)
	}
	select {
	case <-r.synced:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("trigger session: subscribing the triggers on %s: %w", redact.URL(r.cfg.Session.Broker), ctx.Err())
	}
}

// SetTriggers makes ts the triggers served: it subscribes the new ones'
// filters and unsubscribes those no longer served. Messages in progress
// finish on the trigger as it was. Triggers with the same subscription
// as another are an error (their filters must not overlap: the plugins
// manager refuses that), the others are served.
func (r *Receiver) SetTriggers(ctx context.Context, ts []Trigger) error {
	old := map[string]*route{}
	for _, rt := range *r.table.Load() {
		old[rt.trigger().Name+"\x00"+rt.sub] = rt
	}
	var errs []error
	routes := make([]*route, 0, len(ts))
	subs := map[string]bool{}
	for _, t := range ts {
		t = withDefaults(t)
		sub := t.Topic.Subscription(r.cfg.ShareGroup)
		if subs[sub] {
			errs = append(errs, fmt.Errorf("trigger %s: another trigger subscribes %s", t.Name, sub))
			continue
		}
		subs[sub] = true
		rt := old[t.Name+"\x00"+sub]
		if rt == nil {
			rt = &route{sub: sub, topic: t.Topic, c: r.countersOf(t.Name)}
		}
		rt.mu.Lock()
		rt.t = t
		rt.mu.Unlock()
		routes = append(routes, rt)
	}
	r.table.Store(&routes)
	if r.sess.Started() {
		errs = append(errs, r.sync(ctx))
	}
	return errors.Join(errs...)
}

func withDefaults(t Trigger) Trigger {
	if t.Attempts <= 0 {
		t.Attempts = DefaultAttempts
	}
	if t.Concurrency <= 0 {
		t.Concurrency = 1
	}
	if t.Timeout <= 0 {
		t.Timeout = MaxTimeout
	}
	return t
}

// Filters returns the subscriptions of the triggers served, sorted.
func (r *Receiver) Filters() []string {
	var out []string
	for _, rt := range *r.table.Load() {
		out = append(out, rt.sub)
	}
	slices.Sort(out)
	return out
}

// connectionUp is the session's Handlers.Up: every trigger subscribes
// again (a session the broker kept may have lost its subscriptions, and
// subscribing again what is subscribed is harmless).
func (r *Receiver) connectionUp(bool) {
	go func() {
		r.subMu.Lock()
		r.subscribed = map[string]string{}
		r.subMu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.sync(ctx); err != nil {
			r.log.Error("trigger subscriptions failed", "err", err)
		}
		r.syncedOnce.Do(func() { close(r.synced) })
	}()
}

// sync makes the broker's subscriptions those of the table: it
// unsubscribes what is no longer served and subscribes what is new. A
// refused filter is an error naming its trigger (its counters say so
// too).
func (r *Receiver) sync(ctx context.Context) error {
	r.subMu.Lock()
	defer r.subMu.Unlock()
	want := map[string]*route{}
	for _, rt := range *r.table.Load() {
		want[rt.sub] = rt
	}
	var gone []string
	for sub := range r.subscribed {
		if want[sub] == nil {
			gone = append(gone, sub)
		}
	}
	var errs []error
	if len(gone) > 0 {
		slices.Sort(gone)
		for try := 1; ; try++ {
			ack, err := r.sess.Unsubscribe(ctx, &paho.Unsubscribe{Topics: gone})
			if err != nil && ack != nil && idInUse(ack.Reasons) && try < maxIDRetries {
				continue
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("unsubscribing %s: %w", strings.Join(gone, ", "), err))
			}
			break
		}
		for _, sub := range gone {
			delete(r.subscribed, sub)
		}
	}
	var add []*route
	for sub, rt := range want {
		if r.subscribed[sub] == "" {
			add = append(add, rt)
		}
	}
	slices.SortFunc(add, func(a, b *route) int { return strings.Compare(a.sub, b.sub) })
	for try := 1; len(add) > 0; try++ {
		s := &paho.Subscribe{}
		for _, rt := range add {
			s.Subscriptions = append(s.Subscriptions, paho.SubscribeOptions{Topic: rt.sub, QoS: 1})
		}
		ack, err := r.sess.Subscribe(ctx, s)
		var again []*route
		for i, rt := range add {
			var why string
			switch {
			case ack != nil && i < len(ack.Reasons) && ack.Reasons[i] == reasonIDInUse && try < maxIDRetries:
				again = append(again, rt)
				continue
			case ack != nil && i < len(ack.Reasons) && ack.Reasons[i] >= 0x80:
				why = fmt.Sprintf("the broker refused the subscription %s with reason code 0x%02x", rt.sub, ack.Reasons[i])
			case err != nil && ack == nil:
				why = fmt.Sprintf("subscribing %s: %v", rt.sub, err)
			}
			rt.c.setError(why)
			t := rt.trigger()
			if why != "" {
				errs = append(errs, fmt.Errorf("trigger %s: %s", t.Name, why))
				continue
			}
			r.subscribed[rt.sub] = t.Name
			r.log.Info("trigger subscribed", "trigger", t.Name, "plugin", t.Plugin, "topic", rt.sub)
		}
		add = again
	}
	return errors.Join(errs...)
}

// reasonIDInUse is the SUBACK and UNSUBACK reason "packet identifier in
// use". mochi (the embedded broker) answers it when the packet id the
// client chose for its SUBSCRIBE or UNSUBSCRIBE is that of a message it
// sent the client and that is not acknowledged yet (it mixes the two
// sides' ids): a trigger session always has some. paho takes the next id
// for the next packet, so the receiver tries again, up to maxIDRetries
// times.
const (
	reasonIDInUse = 0x91
	maxIDRetries  = 8
)

// idInUse reports whether every reason is reasonIDInUse.
func idInUse(reasons []byte) bool {
	return len(reasons) > 0 && !slices.ContainsFunc(reasons, func(b byte) bool { return b != reasonIDInUse })
}

// match returns the route of a message's topic, or nil.
func (r *Receiver) match(topic string) *route {
	for _, rt := range *r.table.Load() {
		if _, ok := rt.topic.Match(topic); ok {
			return rt
		}
	}
	return nil
}

// message is one message on its way through the receiver.
type message struct {
	m        session.Received
	received time.Time
}

// receive takes one message from the session. It must not block: the
// session hands it every PUBLISH in turn on one goroutine.
func (r *Receiver) receive(m session.Received) {
	if r.stopping.Load() {
		return // not acknowledged: the broker sends it again after the restart
	}
	rt := r.match(m.Packet.Topic)
	if rt == nil {
		// A trigger removed since it was subscribed (or while the host
		// was down: the persistent session kept its subscription).
		n := r.unrouted.Add(1)
		if ok, left := r.refuseLog.Allow(time.Now()); ok {
			r.log.Info("message on a topic no trigger serves: acknowledged, not handled", "topic", session.CleanText(m.Packet.Topic, 256),
				"not_logged", left, "total", n)
		}
		r.ack(m)
		return
	}
	rt.c.messages.Add(1)
	msg := &message{m: m, received: r.cfg.Clock.Now()}
	if r.waiting.Add(1) > int64(r.cfg.MaxWaiting) {
		r.waiting.Add(-1)
		r.dropped(rt, rt.trigger(), msg, 0, fmt.Sprintf("%d messages are waiting already (the broker sends past the receive maximum)", r.cfg.MaxWaiting))
		r.ack(m)
		return
	}
	r.inflight.Add(1)
	rt.c.inFlight.Add(1)
	rt.mu.Lock()
	start := rt.running < rt.t.Concurrency
	if start {
		rt.running++
	} else {
		rt.queue = append(rt.queue, msg)
	}
	rt.mu.Unlock()
	if start {
		go r.work(rt, msg)
	}
}

// work handles msg, then the messages waiting for rt, in order, until
// none waits.
func (r *Receiver) work(rt *route, msg *message) {
	for msg != nil {
		r.handle(rt, rt.trigger(), msg)
		r.waiting.Add(-1)
		rt.c.inFlight.Add(-1)
		r.inflight.Done()
		rt.mu.Lock()
		msg = nil
		if len(rt.queue) > 0 && rt.running <= rt.t.Concurrency {
			msg, rt.queue = rt.queue[0], rt.queue[1:]
		} else {
			rt.running--
		}
		rt.mu.Unlock()
	}
}

// ack acknowledges m on the connection that delivered it, in receipt
// order (session.Ack). After that connection dropped, the ack is moot:
// the broker sends m again.
func (r *Receiver) ack(m session.Received) {
	if err := r.sess.Ack(m); err != nil {
		r.log.Debug("trigger message: ack not sent", "topic", m.Packet.Topic, "err", err)
	}
}

// Stop stops taking messages, lets those in progress finish until ctx
// ends (their attempts after the first are not started: the broker sends
// them again after a restart), sends the acknowledgements of those done
// and disconnects; what is not acknowledged then comes again at the next
// start.
func (r *Receiver) Stop(ctx context.Context) error {
	r.stopping.Store(true)
	r.stopOnce.Do(func() { close(r.stop) })
	done := make(chan struct{})
	go func() {
		r.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	if !r.sess.Started() {
		return nil
	}
	// The acks made go out first (in receipt order, up to the first
	// message not done), or the broker sends those messages again.
	fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.sess.FlushAcks(fctx)
	return r.sess.Disconnect(fctx)
}

// Unrouted counts the messages received on a topic no trigger serves.
func (r *Receiver) Unrouted() int64 { return r.unrouted.Load() }
