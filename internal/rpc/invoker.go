package rpc

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/logx"
	"github.com/cmdhost/cmdhost/internal/session"
)

// InvokerConfig configures an Invoker. Session.Broker is required.
type InvokerConfig struct {
	// Session is how the invoker connects to its broker (package
	// session); its ClientID defaults to "cmdhost-invoker-" and random
	// hex. The invoker's session starts clean and ends with its
	// connection, paho acks the responses, and nothing is announced or
	// watched (it sets CleanStart, Expiry, ManualAcks, MaxPacketSize and
	// ReplyAckTimeout); it connects within 5 s unless ConnectTimeout
	// says otherwise, and logs nothing unless given a Logger of its own.
	Session session.Config
	// Logger is the invoker's; nil discards.
	Logger *slog.Logger
	// RefusedIsFinal makes NewInvoker return at once when nothing listens
	// at the broker's address (the connection is refused) or its host
	// name does not resolve, instead of trying again until its ctx ends:
	// a command-line client wants the answer now; a host whose broker may
	// come up after it does not. A broker that refuses the client's
	// credentials, or a certificate refused on either side
	// (session.Refused), ends NewInvoker at once whatever this says.
	RefusedIsFinal bool
	// AckAttempts is how many times a call with Call.Ack sends its
	// request while neither an ack (202) nor a reply has come back;
	// default DefaultAckAttempts, at most MaxAckAttempts.
	AckAttempts int
	// Tracer makes a span of each call and writes its trace context into
	// the request (traceparent, tracestate: tracing.go); nil: no tracing.
	Tracer trace.Tracer
	// AckInterval is how long the first send waits for an ack before the
	// request is sent again; each later send waits twice as long as the
	// one before. The call gives up after AckInterval·(2^AckAttempts − 1):
	// with the defaults the request goes out at 0, 100, 300 and 700 ms
	// and the call fails with ErrNoExecutor at 1.5 s. Default
	// DefaultAckInterval.
	AckInterval time.Duration
	// AliveInterval is how often an acknowledged ask sends its request
	// again to learn that its executor is still there (a live executor
	// acknowledges the duplicate; one that died cannot, and a replica, or
	// the executor restarted, answers it from the shared store: the
	// reply, or 500 "outcome unknown"). After a send that gets no ack,
	// the request goes again as before the first ack, and with neither
	// ack nor reply the call fails with ErrExecutorGone. Default
	// DefaultAliveInterval.
	AliveInterval time.Duration
}

// Defaults of InvokerConfig's ack retries.
const (
	DefaultAckAttempts   = 4
	DefaultAckInterval   = 100 * time.Millisecond
	DefaultAliveInterval = 2 * time.Second
	// MaxAckAttempts bounds AckAttempts: the waits double, and 16 sends
	// 100 ms apart already wait for almost two hours.
	MaxAckAttempts = 16
)

// Call is one invocation.
type Call struct {
	Topic       string // the request topic, e.g. rpc/host-1/echo
	Payload     []byte
	ContentType string
	Format      abi.FormatIndicator
	Metadata    map[string]string
	// Timeout is the request's message expiry, rounded up to whole
	// seconds; the call waits at most this long (or ctx's deadline).
	Timeout time.Duration
	// Correlation overrides the random correlation data (tests send
	// duplicates with it).
	Correlation []byte
	// Ack makes the call an ask (PROTOCOL.md "Extensions"): the request
	// carries cmdhost-ack: 1 and is sent again, with the same correlation
	// data and response topic, until the executor acknowledges it (202)
	// or replies, at most InvokerConfig.AckAttempts times; without either
	// the call fails fast with ErrNoExecutor. After the ack the call waits
	// for the reply until its timeout. A call that ends early, by its
	// timeout or by ctx, sends the executor a cancel (cmdhost-cancel: 1),
	// best effort; a cancelled call's reply is 499 (abi.StatusCancelled).
	// An executor without the extension never acks, so an ask to one that
	// takes longer than the ack window fails with ErrNoExecutor: call it
	// without Ack. A call without Ack is plain v1.0.
	Ack bool
	// Timestamp, when not "", is the request's __ts (an HLC) in place of
	// a reading of the invoker's clock: a client of a protocol that
	// orders what it writes after the request's timestamp (the Azure IoT
	// Operations state store: package stateaio) sends its own clock's.
	Timestamp string
}

// Result is an executor's response.
type Result struct {
	Status      abi.Status
	Message     string
	AppError    bool
	PropName    string
	PropValue   string
	Payload     []byte
	ContentType string
	Metadata    map[string]string // user properties other than the protocol's
	Expiry      uint32            // the response's message expiry, seconds (0: none)
	Timestamp   string
	// Sends is how many times the request went out (an ask resends it
	// until acked); AckedAfter is the time from the first send to the
	// executor's ack, 0 when none came (a plain call, or a reply first).
	Sends      int
	AckedAfter time.Duration
}

// Err returns the result as an error when its status is not a success.
func (r *Result) Err() error {
	if r.Status == abi.StatusOK || r.Status == abi.StatusNoContent {
		return nil
	}
	return &RemoteError{Result: r}
}

// RemoteError is an error status from the executor.
type RemoteError struct{ Result *Result }

func (e *RemoteError) Error() string {
	r := e.Result
	msg := fmt.Sprintf("status %d", r.Status)
	if r.AppError {
		msg += " (application error)"
	}
	if r.Message != "" {
		msg += ": " + r.Message
	}
	if r.PropName != "" {
		msg += fmt.Sprintf(" [%s=%q]", r.PropName, r.PropValue)
	}
	return msg
}

// ErrNoResponse means no executor answered before the call's timeout.
var ErrNoResponse = errors.New("no response before the timeout")

// ErrAcked is wrapped, with ErrNoResponse, by the error of an ask that
// timed out after its executor acknowledged the request: an executor has
// it, and the command took longer than the call's timeout.
var ErrAcked = errors.New("the executor acknowledged the request")

// ErrNoExecutor means a call with Call.Ack got neither an ack nor a reply
// to any of its sends: no executor serves its topic on that broker.
var ErrNoExecutor = errors.New("no executor answered")

// ErrExecutorGone means the executor that acknowledged an ask stopped
// answering: the request's sends after the ack (each the same request,
// which a live executor acknowledges again) got no ack and no reply. It
// may have died while running the call; the outcome is unknown.
var ErrExecutorGone = errors.New("the executor that acknowledged the request stopped answering")

// cancelExpiry is the message expiry of a cancel, and cancelWait how long
// the invoker waits for the broker to take it (its PUBACK).
const (
	cancelExpiry = 10 // seconds
	cancelWait   = 2 * time.Second
)

// Invoker calls commands over MQTT v5 with the RPC protocol. Invoke is
// safe for concurrent use: responses come to one topic of the invoker's
// and are matched by correlation data.
type Invoker struct {
	cfg           InvokerConfig
	sess          mqttSession
	responseTopic string
	hlc           *hlc.Clock

	mu        sync.Mutex
	waiting   map[string]*waiter                            // by correlation data
	telemetry map[string]func(topic string, payload []byte) // by topic or filter (telemetry_receive.go)
	// subscribed is closed once the response topic is subscribed on the
	// current connection, and replaced by an open one when that
	// connection is lost (session's Up and Down, under mu): a first send
	// waits on it (publishRequest).
	subscribed chan struct{}
	// closed is closed by Close: a call waiting for a connection ends.
	closed    chan struct{}
	closeOnce sync.Once
}

// waiter is one call waiting for its response. receive, on paho's
// goroutine, only signals it and never blocks: it closes acked at the
// first 202 of an ask, and puts the first reply in result (buffered 1);
// later replies, and acks after the first, are dropped.
type waiter struct {
	ask     bool
	result  chan *Result
	acked   chan struct{}
	ackOnce sync.Once
	ackedAt time.Time // set before acked is closed: read it only after
	// acks counts every 202, the first and those to the sends after it
	// (ask: its executor is still there).
	acks atomic.Int64
}

// invokerConnectTimeout is the invoker's Session.ConnectTimeout when it
// is not set.
const invokerConnectTimeout = 5 * time.Second

// NewInvoker connects to the broker and subscribes to its response topic.
func NewInvoker(ctx context.Context, cfg InvokerConfig) (*Invoker, error) {
	if cfg.Session.Broker == nil {
		return nil, errors.New("broker URL is required")
	}
	s := &cfg.Session
	if s.ClientID == "" {
		s.ClientID = "cmdhost-invoker-" + randomHex(6)
	}
	cfg.Logger = logx.OrDiscard(cfg.Logger)
	if s.ConnectTimeout <= 0 {
		s.ConnectTimeout = invokerConnectTimeout
	}
	s.CleanStart, s.Expiry, s.ManualAcks, s.MaxPacketSize, s.ReplyAckTimeout = true, -1, false, -1, -1
	inv := &Invoker{
		cfg: cfg, responseTopic: "clients/" + s.ClientID + "/rpc/response",
		hlc:     hlc.New(hlc.Config{NodeID: nodeID(s.ClientID)}),
		waiting: make(map[string]*waiter), telemetry: make(map[string]func(string, []byte)),
		subscribed: make(chan struct{}), closed: make(chan struct{}),
	}
	if inv.cfg.AckAttempts <= 0 {
		inv.cfg.AckAttempts = DefaultAckAttempts
	}
	inv.cfg.AckAttempts = min(inv.cfg.AckAttempts, MaxAckAttempts)
	if inv.cfg.AliveInterval <= 0 {
		inv.cfg.AliveInterval = DefaultAliveInterval
	}
	if inv.cfg.AckInterval <= 0 {
		inv.cfg.AckInterval = DefaultAckInterval
	}
	up := make(chan error, 1)
	// Nothing listening at the broker's address is said at once: retrying
	// a refused connection until ctx ends only delays the same answer.
	refused := make(chan error, 1)
	var lastErr atomic.Pointer[error] // the last attempt's, for the message when the wait ends
	sess, err := session.New(cfg.Session, session.Handlers{
		Received: inv.receive,
		Up: func(bool) {
			go func() {
				sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				subs := append([]paho.SubscribeOptions{{Topic: inv.responseTopic, QoS: 1}}, inv.telemetryTopics()...)
				_, err := inv.sess.Subscribe(sctx, &paho.Subscribe{Subscriptions: subs})
				if err == nil {
					inv.setSubscribed(true)
				}
				select {
				case up <- err:
				default:
				}
			}()
		},
		Down: func() { inv.setSubscribed(false) },
		ConnectError: func(err error) {
			cfg.Logger.Debug("invoker connect", "err", err)
			lastErr.Store(&err)
			if session.Refused(err) || cfg.RefusedIsFinal && (errors.Is(err, syscall.ECONNREFUSED) || session.NoSuchHost(err)) {
				select { // the first refusal ends NewInvoker's wait
				case refused <- err:
				default:
				}
			}
		},
	})
	if err != nil {
		return nil, err
	}
	inv.sess = sess
	if err := sess.Connect(); err != nil {
		return nil, err
	}
	select {
	case err := <-up:
		if err != nil {
			_ = sess.Disconnect(context.Background())
			return nil, fmt.Errorf("subscribing to %s: %w", inv.responseTopic, err)
		}
		return inv, nil
	case err := <-refused:
		_ = sess.Disconnect(context.Background())
		cfg.Logger.Debug("invoker: connection refused", "err", err)
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("no broker at %s: %w (is one running there? see --broker)", sess.Config().BrokersText(), syscall.ECONNREFUSED)
		}
		return nil, fmt.Errorf("connecting to %s: %w", sess.Config().BrokersText(), err)
	case <-ctx.Done():
		_ = sess.Disconnect(context.Background())
		if last := lastErr.Load(); last != nil { // why the attempts failed says more than the wait's end
			return nil, fmt.Errorf("connecting to %s: %w (the last attempt: %v)", sess.Config().BrokersText(), ctx.Err(), *last)
		}
		return nil, fmt.Errorf("connecting to %s: %w (is a broker running there?)", sess.Config().BrokersText(), ctx.Err())
	}
}

// PacketLimit is the broker's Maximum Packet Size (from the CONNACK of
// the invoker's connection), in bytes; 0 when the broker set none (MQTT's
// own bound applies) or it is not known.
func (inv *Invoker) PacketLimit() int {
	if l, ok := inv.sess.(interface{ PacketLimit() int }); ok {
		return l.PacketLimit()
	}
	return 0
}

// Close disconnects.
func (inv *Invoker) Close() error {
	inv.closeOnce.Do(func() { close(inv.closed) })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return inv.sess.Disconnect(ctx)
}

// Invoke publishes one request and waits for its response. A response with
// an error status is a Result, not an error: see Result.Err. With c.Ack
// the call is an ask (see Call.Ack); its errors are then also
// ErrNoExecutor, and a 499 reply is a Result.
func (inv *Invoker) Invoke(ctx context.Context, c Call) (res *Result, err error) {
	if c.Timeout <= 0 {
		return nil, errors.New("a call needs a positive timeout (its message expiry)")
	}
	for _, k := range []string{propAck, propCancel} {
		if _, ok := c.Metadata[k]; ok {
			return nil, fmt.Errorf("metadata key %q is a protocol extension's (see Call.Ack), not metadata", k)
		}
	}
	if err := checkCall(c); err != nil {
		return nil, fmt.Errorf("the request to %s cannot be sent: %w", cleanText(c.Topic, MaxPropertyValue), err)
	}
	corr := c.Correlation
	if corr == nil {
		corr = NewCorrelation()
	}
	ctx, span := inv.traceCall(ctx, &c)
	defer func() { endCall(span, corr, res, err) }()
	w := &waiter{ask: c.Ack, result: make(chan *Result, 1), acked: make(chan struct{})}
	inv.mu.Lock()
	inv.waiting[string(corr)] = w
	inv.mu.Unlock()
	defer func() {
		inv.mu.Lock()
		delete(inv.waiting, string(corr))
		inv.mu.Unlock()
	}()

	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	end := start.Add(c.Timeout) // the request's expiry, as the invoker sees it
	first := inv.request(c, corr, end)
	// Checked whole before it goes (session.Check): a packet the broker
	// refuses would cost the connection, and every call in flight on it.
	// Resends and the cancel carry the same strings.
	if err := inv.sess.Check(first); err != nil {
		return nil, fmt.Errorf("the request to %s cannot be sent: %w", cleanText(c.Topic, MaxPropertyValue), err)
	}
	if err := inv.publishRequest(ctx, first); err != nil {
		if c.Ack && ctx.Err() != nil {
			inv.cancel(c, corr) // the request may have gone out before ctx ended
		}
		if refused := (*session.PublishRefusedError)(nil); errors.As(err, &refused) {
			return nil, err // it names the topic, and why: the broker's ACL, most often
		}
		return nil, fmt.Errorf("publishing the request to %s: %w", c.Topic, err)
	}
	if !c.Ack {
		select {
		case r := <-w.result:
			r.Sends = 1
			return r, nil
		case <-ctx.Done():
			return nil, inv.ended(ctx, c, "")
		}
	}
	return inv.ask(ctx, c, corr, w, start, end)
}

// checkCall refuses what a call's request cannot carry (text.go): a
// topic that is not a topic name, metadata that is not sendable as it is.
func checkCall(c Call) error {
	if !validTopicName(c.Topic) {
		return fmt.Errorf("topic %.64q: not a topic name (no wildcards, no empty level, no leading or trailing '/')", c.Topic)
	}
	for k, v := range c.Metadata {
		if problem := metadataProblem(k, v); problem != "" {
			return fmt.Errorf("metadata %.64q: %s", k, problem)
		}
	}
	if problem := session.WireProblem(c.Timestamp); problem != "" {
		return fmt.Errorf("timestamp %.64q: %s", c.Timestamp, problem)
	}
	return nil
}

// ask waits for the outcome of an ask whose first send has gone out. It
// runs on the caller's goroutine, which alone sends: the resends and the
// cancel. A resend is the same request (same correlation data and response
// topic: a duplicate to the executor) with the expiry that remains.
//
// Until an ack, resend n (1-based) is due AckInterval·(2^n − 1) after the
// first send, and the call gives up with ErrNoExecutor when resend
// AckAttempts would be due. Once acked, the request is sent again every
// AliveInterval: a live executor acknowledges the duplicate again. When
// one of those sends gets no ack, the resends start again as before the
// first ack, from that send; a new ack (or the reply) ends them, and
// with neither the call gives up with ErrExecutorGone. No send is due at
// or after the call's end: a request that reached an executor then would
// run for an invoker that has stopped waiting.
func (inv *Invoker) ask(ctx context.Context, c Call, corr []byte, w *waiter, start, end time.Time) (*Result, error) {
	sends := 1
	deadline, _ := ctx.Deadline() // Invoke set one
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	// due is nil, which never fires, when no send or give-up is due
	// before the end; ackCh is nil once acked.
	var due <-chan time.Time
	ackCh := w.acked
	at := func(t time.Time) {
		if !t.Before(deadline) {
			timer.Stop()
			due = nil
			return
		}
		timer.Reset(time.Until(t))
		due = timer.C
	}
	// The resends since the last sign of the executor: from, the first
	// of them; n, how many went; alive, the acks counted at from.
	from, n := start, 1
	acked, probing := false, false
	var alive int64
	backoff := func() { at(from.Add(inv.cfg.AckInterval * time.Duration(1<<n-1))) }
	backoff()
	resend := func() {
		sends++
		if err := inv.sess.Publish(ctx, inv.request(c, corr, end)); err != nil {
			// A lost send is what the resends are for; ctx's end is
			// handled by its own case.
			inv.cfg.Logger.Debug("resending the request", "topic", c.Topic, "err", err)
		}
	}
	for {
		select {
		case r := <-w.result:
			r.Sends = sends
			select { // the ack came first, whichever case select took
			case <-w.acked:
				r.AckedAfter = max(w.ackedAt.Sub(start), time.Nanosecond)
			default:
			}
			return r, nil
		case <-ackCh:
			// The executor has the request: from now on a send every
			// AliveInterval only, to see it is still there.
			ackCh, acked = nil, true
			at(time.Now().Add(inv.cfg.AliveInterval))
			inv.cfg.Logger.Debug("request acknowledged", "topic", c.Topic, "sends", sends, "after", time.Since(start))
		case <-due:
			switch {
			case !acked && n == inv.cfg.AckAttempts:
				// An executor may have the request and lost acks: tell it
				// that nobody waits for the reply any more.
				inv.cancel(c, corr)
				return nil, fmt.Errorf("%w on %s: no ack and no reply to %d sends in %v",
					ErrNoExecutor, c.Topic, sends, time.Since(start).Round(time.Millisecond))
			case !acked:
				n++
				resend()
				backoff()
			case !probing:
				// Still there? Its ack to this send says so.
				probing, from, n, alive = true, time.Now(), 1, w.acks.Load()
				resend()
				backoff()
			case w.acks.Load() > alive:
				probing = false
				at(time.Now().Add(inv.cfg.AliveInterval))
			case n == inv.cfg.AckAttempts:
				inv.cancel(c, corr)
				return nil, fmt.Errorf("%w on %s: no ack and no reply to %d sends in %v after it acknowledged; it may have stopped while running the call: the outcome is unknown",
					ErrExecutorGone, c.Topic, n, time.Since(from).Round(time.Millisecond))
			default:
				n++
				resend()
				backoff()
			}
		case <-ctx.Done():
			inv.cancel(c, corr)
			if acked && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("%w (%v) on %s: %w, which was told to cancel the call",
					ErrNoResponse, c.Timeout, c.Topic, ErrAcked)
			}
			return nil, inv.ended(ctx, c, ", and no executor acknowledged it")
		}
	}
}

// ended is a call's error when its ctx ended: the timeout error when that
// was a deadline, ctx's error otherwise.
func (inv *Invoker) ended(ctx context.Context, c Call, state string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w (%v) on %s%s", ErrNoResponse, c.Timeout, c.Topic, state)
	}
	return ctx.Err()
}

// request builds one send of c's request; its expiry is what remains until
// end, rounded up to whole seconds (at least 1).
func (inv *Invoker) request(c Call, corr []byte, end time.Time) *paho.Publish {
	expiry := uint32(max(math.Ceil(time.Until(end).Seconds()), 1))
	props := inv.protocolProps(c.Timestamp)
	if c.Ack {
		props = append(props, paho.UserProperty{Key: propAck, Value: "1"})
	}
	for k, v := range c.Metadata {
		if k != propHighPriority { // sent once, above
			props = append(props, paho.UserProperty{Key: k, Value: v})
		}
	}
	pub := &paho.Publish{
		QoS: 1, Topic: c.Topic, Payload: c.Payload,
		Properties: &paho.PublishProperties{
			CorrelationData: corr, ResponseTopic: inv.responseTopic, ContentType: c.ContentType,
			MessageExpiry: &expiry, User: props,
		},
	}
	if c.Format != abi.FormatBytes {
		f := byte(c.Format)
		pub.Properties.PayloadFormat = &f
	}
	return pub
}

// protocolProps are the protocol's user properties of every message the
// invoker sends; ts is its __ts ("": a reading of the invoker's clock).
func (inv *Invoker) protocolProps(ts string) paho.UserProperties {
	if ts == "" {
		now, _ := inv.hlc.Now()
		ts = now.String()
	}
	return paho.UserProperties{
		{Key: propProtocol, Value: protocolVersion},
		{Key: propSourceID, Value: inv.cfg.Session.ClientID},
		{Key: propTimestamp, Value: ts},
		{Key: propHighPriority},
	}
}

// publishRequest publishes a call's first send once the response topic
// is subscribed on the current connection. A send refused because no
// connection was up (the session reconnecting, to its broker or the next
// of its list: session.NotConnected) was not sent: it waits for the next
// connection and sends again, until ctx ends, so that a call made while
// the session moves to another broker goes out there, where its reply
// can come back, instead of failing. The pause keeps the loop from
// spinning before the session's Down has reopened inv.subscribed.
func (inv *Invoker) publishRequest(ctx context.Context, p *paho.Publish) error {
	for {
		inv.mu.Lock()
		subscribed := inv.subscribed
		inv.mu.Unlock()
		select {
		case <-subscribed:
		case <-inv.closed:
			return errInvokerClosed
		case <-ctx.Done():
			return fmt.Errorf("no connection to the broker on which to send it: %w", ctx.Err())
		}
		err := inv.sess.Publish(ctx, p)
		if !session.NotConnected(err) {
			return err
		}
		pause := time.NewTimer(notConnectedPause)
		select {
		case <-ctx.Done():
			pause.Stop()
			return err
		case <-inv.closed:
			pause.Stop()
			return errInvokerClosed
		case <-pause.C:
		}
	}
}

// setSubscribed opens (false: the connection was lost) or closes (true:
// the response topic is subscribed on the new one) inv.subscribed.
func (inv *Invoker) setSubscribed(up bool) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	select {
	case <-inv.subscribed:
		if !up {
			inv.subscribed = make(chan struct{})
		}
	default:
		if up {
			close(inv.subscribed)
		}
	}
}

// errInvokerClosed is a call's error after Close.
var errInvokerClosed = errors.New("the invoker is closed")

// notConnectedPause is publishRequest's pause between sends refused for
// want of a connection.
const notConnectedPause = 5 * time.Millisecond

// cancel tells the executor, best effort, that the call ended: a message
// on the request topic with the request's correlation data and response
// topic, cmdhost-cancel: 1 and no payload. It waits at most cancelWait
// for the broker to take it, whatever ctx the call had.
func (inv *Invoker) cancel(c Call, corr []byte) {
	expiry := uint32(cancelExpiry)
	pub := &paho.Publish{
		QoS: 1, Topic: c.Topic,
		Properties: &paho.PublishProperties{
			CorrelationData: corr, ResponseTopic: inv.responseTopic, MessageExpiry: &expiry,
			User: append(inv.protocolProps(""), paho.UserProperty{Key: propCancel, Value: "1"}),
		},
	}
	ctx, stop := context.WithTimeout(context.Background(), cancelWait)
	defer stop()
	if err := inv.sess.Publish(ctx, pub); err != nil {
		inv.cfg.Logger.Debug("sending a cancel", "topic", c.Topic, "err", err)
		return
	}
	inv.cfg.Logger.Debug("cancel sent", "topic", c.Topic)
}

// receive takes a response from the session (on paho's goroutine: it
// must not block). A response to no waiting call (late, duplicate, not
// ours) is dropped.
func (inv *Invoker) receive(m session.Received) {
	p := m.Packet
	if inv.receiveTelemetry(p) || p.Properties == nil {
		return
	}
	inv.mu.Lock()
	w, ok := inv.waiting[string(p.Properties.CorrelationData)]
	inv.mu.Unlock()
	if !ok {
		return
	}
	r := parseResult(p)
	if w.ask && r.Status == abi.StatusAccepted {
		w.acks.Add(1)
		w.ackOnce.Do(func() {
			w.ackedAt = time.Now()
			close(w.acked)
		})
		return
	}
	select {
	case w.result <- r: // the first response wins; duplicates are dropped
	default:
	}
}

func parseResult(p *paho.Publish) *Result {
	r := &Result{Payload: p.Payload, ContentType: p.Properties.ContentType}
	if p.Properties.MessageExpiry != nil {
		r.Expiry = *p.Properties.MessageExpiry
	}
	for _, up := range p.Properties.User {
		switch up.Key {
		case propStatus:
			n, _ := strconv.Atoi(up.Value)
			r.Status = abi.Status(n)
		case propStatusMessage:
			r.Message = up.Value
		case propAppError:
			r.AppError = up.Value == "true"
		case propName:
			r.PropName = up.Value
		case propValue:
			r.PropValue = up.Value
		case propTimestamp:
			r.Timestamp = up.Value
		default:
			if !strings.HasPrefix(up.Key, "__") && up.Key != propHighPriority { // the transport's mark, not the handler's
				if r.Metadata == nil {
					r.Metadata = make(map[string]string)
				}
				r.Metadata[up.Key] = up.Value
			}
		}
	}
	return r
}

// NewCorrelation returns fresh correlation data: 16 random bytes shaped
// as a version 4 UUID.
func NewCorrelation() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return b
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}
