package stateaio

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/logx"
	"github.com/cmdhost/cmdhost/internal/ratelog"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/statestore"
)

// Config configures a Store.
type Config struct {
	// Session is how the store reaches the broker (package session): its
	// Broker is required; its ClientID defaults to "cmdhost-state-" and
	// random hex. The store's session starts clean and ends with its
	// connection (rpc.NewInvoker).
	Session session.Config
	// Outcomes keeps the outcomes of non-idempotent requests and the
	// outbox (the host's state folder, a state.Disk that holds nothing
	// else): see the package's comment. nil: the store keeps none, and
	// refuses a commit with an outcome or messages (the executor keeps
	// outcomes in memory then).
	Outcomes state.Backend
	// Limits bound keys, values and commits (state.Limits; zero fields:
	// its defaults). A namespace's quota and the store's total are not
	// counted: the protocol has no usage.
	Limits state.Limits
	// Timeout bounds each request to the broker; default DefaultTimeout.
	Timeout time.Duration
	// Clock is the clock of the requests' __ts; nil: the system's.
	Clock clock.Clock
	// Logger; nil discards.
	Logger *slog.Logger
}

// DefaultTimeout is a request's timeout, the Azure Go SDK's.
const DefaultTimeout = 10 * time.Second

// Store is a state.Backend in an Azure IoT Operations broker's state
// store. Safe for concurrent use. New makes it, Start connects it.
type Store struct {
	cfg    Config
	log    *slog.Logger
	limits state.Limits
	hlc    *hlc.Clock

	mu     sync.Mutex
	inv    *rpc.Invoker // nil until Start
	closed bool

	refusals ratelog.Limiter // the log lines of ops refused for the protocol's limits
	health   health
}

var (
	_ state.Backend   = (*Store)(nil)
	_ state.OpChecker = (*Store)(nil)
)

// New makes a store; it connects at Start.
func New(cfg Config) (*Store, error) {
	if cfg.Session.Broker == nil {
		return nil, errors.New("stateaio: the broker is required")
	}
	if cfg.Session.ClientID == "" {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		cfg.Session.ClientID = "cmdhost-state-" + hex.EncodeToString(b)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	cfg.Clock = clock.OrSystem(cfg.Clock)
	cfg.Logger = logx.OrDiscard(cfg.Logger)
	node := strings.ReplaceAll(cfg.Session.ClientID, ":", "-")
	return &Store{cfg: cfg, log: cfg.Logger, limits: cfg.Limits.WithDefaults(),
		hlc:      hlc.New(hlc.Config{NodeID: node, Clock: cfg.Clock}),
		refusals: ratelog.Limiter{Interval: time.Second}}, nil
}

// Start connects to the broker and subscribes to the replies' topic,
// within ctx; later connections are the session's to make again.
func (s *Store) Start(ctx context.Context) error {
	inv, err := rpc.NewInvoker(ctx, rpc.InvokerConfig{Session: s.cfg.Session, Logger: s.log})
	if err != nil {
		return fmt.Errorf("the Azure IoT Operations state store (--state aio): %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.inv != nil {
		_ = inv.Close()
		return errors.New("stateaio: started twice, or closed")
	}
	s.inv = inv
	return nil
}

// Close disconnects; later calls return state.ErrUnavailable. The
// outcomes' store is its owner's to close.
func (s *Store) Close() error {
	s.mu.Lock()
	inv := s.inv
	s.inv, s.closed = nil, true
	s.mu.Unlock()
	if inv != nil {
		return inv.Close()
	}
	return nil
}

// ClientID is the MQTT client id of the store's connection.
func (s *Store) ClientID() string { return s.cfg.Session.ClientID }

// Limits are the store's bounds, defaults resolved.
func (s *Store) Limits() state.Limits { return s.limits }

// Get reads key of ns: GET, the version the reply's __ts.
func (s *Store) Get(ctx context.Context, ns string, key []byte) (state.Item, error) {
	if err := s.limits.CheckKey(key); err != nil {
		return state.Item{}, err
	}
	pk, err := protocolKey(ns, key)
	if err != nil {
		return state.Item{}, err
	}
	r, version, err := s.do(ctx, false, "", []byte("GET"), pk)
	if err != nil {
		return state.Item{}, err
	}
	switch {
	case r.kind == '$' && r.n == -1:
		return state.Item{}, state.ErrNotFound
	case r.kind == '$':
		return state.Item{Key: bytes.Clone(key), Value: r.data, Version: version}, nil
	case r.kind == '-':
		return state.Item{}, serviceError("GET", ns, key, pk, r.text)
	}
	return state.Item{}, unexpected("GET", pk, r.String(), false)
}

// List is refused: the protocol has no SCAN.
func (s *Store) List(_ context.Context, ns string, _, _ []byte, _ int) ([][]byte, bool, error) {
	if err := state.CheckNamespace(ns); err != nil {
		return nil, false, err
	}
	return nil, false, s.refused(errNoList)
}

// Usage is zero: the protocol has no usage (the package's comment).
func (s *Store) Usage(_ context.Context, ns string) (state.Usage, error) {
	return state.Usage{}, state.CheckNamespace(ns)
}

// CheckOp refuses what Commit would refuse of op for the protocol's
// limits (state.OpChecker), with conditional writes staged before it.
func (s *Store) CheckOp(op state.Op, conditional int) error {
	if _, err := s.prepare(&op); err != nil {
		return s.refused(err)
	}
	if conditional > 0 && !op.If.IsZero() {
		return s.refused(errOneConditional)
	}
	return nil
}

// refused logs a refusal for the protocol's limits, at most a line a
// second, and returns it.
func (s *Store) refused(err error) error {
	var le *LimitError
	if !errors.As(err, &le) {
		return err
	}
	if ok, leftOut := s.refusals.Allow(s.cfg.Clock.Now()); ok {
		s.log.Warn("state op refused: the Azure IoT Operations state store cannot do it", "what", le.What, "why", le.Why, "refusals_not_logged", leftOut)
	}
	return err
}

// request is an op as the protocol sends it.
type request struct {
	verb  string
	key   []byte // the protocol's
	args  [][]byte
	fence string // canonical, or ""
}

// prepare checks op against the protocol's limits and makes its request.
func (s *Store) prepare(op *state.Op) (request, error) {
	pk, err := protocolKey(op.NS, op.Key)
	if err != nil {
		return request{}, err
	}
	r := request{key: pk}
	if op.Fence != "" {
		ft, ok := statestore.ParseTimestamp(op.Fence)
		if !ok { // older than any token, as the store orders one that does not parse (the broker would refuse it)
			return request{}, &state.FenceError{Namespace: op.NS, Key: op.Key}
		}
		r.fence = ft.String()
	}
	c := op.If
	if c.Version != 0 {
		return request{}, errNoVersion
	}
	switch op.Kind {
	case state.OpSet:
		r.verb = "SET"
		r.args = [][]byte{[]byte("SET"), pk, op.Value}
		switch {
		case c.IsZero():
		case c.Absent && !c.HasValue:
			r.args = append(r.args, []byte("NX"))
		case c.Absent && bytes.Equal(c.Value, op.Value):
			r.args = append(r.args, []byte("NEX"))
		default:
			return request{}, errNoValueSet
		}
		if op.TTL > 0 {
			ms := (op.TTL + time.Millisecond - 1) / time.Millisecond // up: a TTL is never cut to nothing
			r.args = append(r.args, []byte("PX"), strconv.AppendInt(nil, int64(ms), 10))
		}
	case state.OpDelete:
		switch {
		case c.IsZero():
			r.verb = "DEL"
			r.args = [][]byte{[]byte("DEL"), pk}
		case c.HasValue && !c.Absent:
			r.verb = "VDEL"
			r.args = [][]byte{[]byte("VDEL"), pk, c.Value}
		default:
			return request{}, errNoDeleteCond
		}
	default:
		return request{}, fmt.Errorf("%w: op kind %d", state.ErrInvalid, op.Kind)
	}
	return r, nil
}

// protocolKey is the protocol's key of k in ns: only the namespaces the
// protocol's key space maps back to ns have one (state.ProtocolKey).
func protocolKey(ns string, k []byte) ([]byte, error) {
	if err := state.CheckNamespace(ns); err != nil {
		return nil, err
	}
	pk, ok := state.ProtocolKeyOf(ns, k)
	if !ok {
		return nil, errNamespace(ns)
	}
	if back, bk, err := state.ProtocolKey(pk); err != nil || back != ns || !bytes.Equal(bk, k) {
		return nil, fmt.Errorf("%w: key %s of namespace %s would be key %s of the protocol, which is another namespace's",
			state.ErrInvalid, quote(k), ns, quote(pk))
	}
	return pk, nil
}

// Commit applies c's writes one request after another (the package's
// comment): the conditional one first, the others in order. Its outcome
// and messages go to Config.Outcomes around them.
func (s *Store) Commit(ctx context.Context, c *state.Commit) ([]state.Result, error) {
	if err := s.limits.CheckCommit(c); err != nil {
		return nil, err
	}
	reqs, order, err := s.plan(c.Ops)
	if err != nil {
		return nil, s.refused(err)
	}
	keeps := c.Outcome != nil || len(c.Messages) > 0
	if keeps && s.cfg.Outcomes == nil {
		return nil, fmt.Errorf("%w: this Azure IoT Operations state store keeps no outcomes nor messages (no state folder)", state.ErrInvalid)
	}
	if c.Outcome != nil {
		if _, _, err := s.Outcome(ctx, c.Outcome.ID); errors.Is(err, state.ErrUnknown) {
			return nil, err // never a second commit of writes that may have applied
		}
	}
	if len(c.Ops) == 0 {
		return nil, s.record(ctx, c)
	}
	if c.Outcome != nil {
		begin := &state.Outcome{ID: c.Outcome.ID, Value: begun, KeepUntil: c.Outcome.KeepUntil}
		if _, err := s.cfg.Outcomes.Commit(ctx, &state.Commit{Outcome: begin}); err != nil {
			return nil, err
		}
	}
	res, applied, err := s.apply(ctx, c, reqs, order)
	if err != nil {
		if applied == 0 && !errors.Is(err, state.ErrUnknown) && c.Outcome != nil {
			s.retract(c.Outcome.ID) // nothing applied: the request may run again
		}
		return nil, err
	}
	if keeps {
		if err := s.record(ctx, c); err != nil {
			// %v: the cause's kind (a full outbox's quota, say) is not this
			// error's, which must never make a caller commit it again.
			return nil, fmt.Errorf("%w: the writes applied and their outcome could not be recorded: %v", state.ErrUnknown, err)
		}
	}
	return res, nil
}

// plan prepares c's writes and the order they go in: the conditional
// one (at most one, the first of its key's) first, then the others.
func (s *Store) plan(ops []state.Op) ([]request, []int, error) {
	reqs := make([]request, len(ops))
	cond := -1
	for i := range ops {
		r, err := s.prepare(&ops[i])
		if err != nil {
			return nil, nil, err
		}
		reqs[i] = r
		if ops[i].If.IsZero() {
			continue
		}
		if cond >= 0 {
			return nil, nil, errOneConditional
		}
		cond = i
	}
	order := make([]int, 0, len(ops))
	if cond >= 0 {
		for i := range cond {
			if ops[i].NS == ops[cond].NS && bytes.Equal(ops[i].Key, ops[cond].Key) {
				return nil, nil, errCondFirst
			}
		}
		order = append(order, cond)
	}
	for i := range ops {
		if i != cond {
			order = append(order, i)
		}
	}
	return reqs, order, nil
}

// apply sends the writes in order; it returns how many applied.
func (s *Store) apply(ctx context.Context, c *state.Commit, reqs []request, order []int) ([]state.Result, int, error) {
	if c.After != 0 { // the writes' versions follow it: the requests' __ts do
		ms, counter := state.VersionParts(c.After)
		if err := s.hlc.Update(hlc.Timestamp{Millis: ms, Counter: uint32(counter)}); err != nil {
			return nil, 0, fmt.Errorf("%w: a commit's versions must follow %d: %w (the protocol takes a request's timestamp at most a minute ahead of the broker's clock)",
				state.ErrInvalid, c.After, err)
		}
	}
	res := make([]state.Result, len(c.Ops))
	for n, i := range order {
		r, err := s.write(ctx, &c.Ops[i], i, reqs[i])
		if err != nil {
			if n > 0 {
				return nil, n, &PartialError{Applied: n, Writes: len(order), Err: err}
			}
			return nil, 0, err
		}
		res[i] = r
	}
	return res, len(order), nil
}

// write sends one write (op, the commit's i-th) and reads its reply.
func (s *Store) write(ctx context.Context, op *state.Op, i int, req request) (state.Result, error) {
	r, version, err := s.do(ctx, true, req.fence, req.args...)
	if err != nil {
		return state.Result{}, err
	}
	conflict := func(why string) error {
		return &state.ConflictError{Op: i, Namespace: op.NS, Key: bytes.Clone(op.Key), Why: why}
	}
	switch {
	case r.kind == '-':
		return state.Result{}, serviceError(req.verb, op.NS, op.Key, req.key, r.text)
	case req.verb == "SET" && r.kind == '+' && r.text == "OK":
		return state.Result{Version: version}, nil
	case req.verb == "SET" && r.kind == ':' && r.n == -1 && op.If.HasValue:
		return state.Result{}, conflict("the key holds another value")
	case req.verb == "SET" && r.kind == ':' && r.n == -1:
		return state.Result{}, conflict("the key exists")
	case req.verb != "SET" && r.kind == ':' && r.n == 1:
		return state.Result{Existed: true, Version: version}, nil
	case req.verb == "DEL" && r.kind == ':' && r.n == 0:
		return state.Result{}, nil
	case req.verb == "VDEL" && r.kind == ':' && r.n == 0:
		return state.Result{}, conflict("the key does not exist")
	case req.verb == "VDEL" && r.kind == ':' && r.n == -1:
		return state.Result{}, conflict("the key holds another value")
	}
	return state.Result{}, unexpected(req.verb, req.key, r.String(), true)
}

// unexpected is the error of a reply (what) that is none of the verb's:
// a write may have applied.
func unexpected(verb string, key []byte, what string, write bool) error {
	kind, also := state.ErrUnavailable, ""
	if write {
		kind, also = state.ErrUnknown, ": it may have applied"
	}
	return fmt.Errorf("%w: the Azure IoT Operations state store answered %s %s with %s, not one of its replies%s", kind, verb, quote(key), what, also)
}

// begun is the record, in Config.Outcomes, of a commit whose writes are
// being sent: a reply (rpc's encoding, JSON) never starts with a NUL.
var begun = []byte("\x00stateaio: the commit began")

// Outcome returns the outcome recorded under id in Config.Outcomes; an
// error wrapping state.ErrUnknown when the commit of its writes began
// and did not end (its writes may have applied, in part).
func (s *Store) Outcome(ctx context.Context, id state.OutcomeID) ([]byte, bool, error) {
	if s.cfg.Outcomes == nil {
		return nil, false, nil
	}
	v, ok, err := s.cfg.Outcomes.Outcome(ctx, id)
	if ok && bytes.Equal(v, begun) {
		return nil, false, fmt.Errorf("%w: the host stopped, or the Azure IoT Operations state store stopped answering, while it applied the writes of this request: they may have applied, in part", state.ErrUnknown)
	}
	return v, ok, err
}

// MayHaveOutcome reports whether Config.Outcomes may hold an outcome of
// id recorded before this process (state.Disk's MayHaveOutcome): the
// record that a commit began is one.
func (s *Store) MayHaveOutcome(id state.OutcomeID) bool {
	if p, ok := s.cfg.Outcomes.(state.OutcomeFilter); ok {
		return p.MayHaveOutcome(id)
	}
	return s.cfg.Outcomes != nil
}

// record commits c's outcome and messages to Config.Outcomes.
func (s *Store) record(ctx context.Context, c *state.Commit) error {
	_, err := s.cfg.Outcomes.Commit(ctx, &state.Commit{Outcome: c.Outcome, Messages: c.Messages})
	return err
}

// retract takes back the record that id's commit began, when none of
// its writes applied: an outcome already past its keep-until, which
// Outcome does not find. One that cannot be written leaves the record:
// the request is then answered outcome unknown, never run twice.
func (s *Store) retract(id state.OutcomeID) {
	_, err := s.cfg.Outcomes.Commit(context.Background(), &state.Commit{Outcome: &state.Outcome{ID: id, KeepUntil: time.Unix(0, 1)}})
	if err != nil {
		s.log.Warn("state: a commit that applied nothing could not be taken back: its request will be answered outcome unknown", "err", err)
	}
}

// OutboxBytes is what the outbox in Config.Outcomes holds (state.Txn
// bounds a call's messages by it).
func (s *Store) OutboxBytes() int64 {
	if o, ok := s.cfg.Outcomes.(interface{ OutboxBytes() int64 }); ok {
		return o.OutboxBytes()
	}
	return 0
}

// do sends one request (a write, or a read) with fence as its __ft and
// reads its reply, and the version its __ts names (0: none). An error is
// one of the wire: state.ErrUnavailable (nothing applied), or, for a
// write sent and not answered, state.ErrUnknown.
func (s *Store) do(ctx context.Context, write bool, fence string, args ...[]byte) (reply, uint64, error) {
	verb := string(args[0])
	s.mu.Lock()
	inv, closed := s.inv, s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return reply{}, 0, fmt.Errorf("%w: the Azure IoT Operations state store's client is closed", state.ErrUnavailable)
	case inv == nil:
		return reply{}, 0, fmt.Errorf("%w: the Azure IoT Operations state store's client is not connected yet", state.ErrUnavailable)
	}
	payload := encodeRequest(args...)
	if limit := inv.PacketLimit(); limit > 0 && len(payload)+packetOverhead > limit {
		return reply{}, 0, fmt.Errorf("%w: a %s of %d bytes is over what the broker takes in a packet (%d bytes)", state.ErrTooLarge, verb, len(payload), limit)
	}
	ts, err := s.hlc.Now()
	if err != nil {
		return reply{}, 0, fmt.Errorf("%w: the host's clock: %w", state.ErrUnavailable, err)
	}
	call := rpc.Call{Topic: statestore.Topic, Payload: payload, ContentType: statestore.ContentType, Timeout: s.cfg.Timeout, Timestamp: ts.String()}
	if fence != "" {
		call.Metadata = map[string]string{statestore.FencingTokenProperty: fence}
	}
	res, err := inv.Invoke(ctx, call)
	if err != nil {
		return reply{}, 0, s.wireError(verb, write, err)
	}
	s.health.answered()
	switch res.Status {
	case abi.StatusOK:
	case abi.StatusInternalError:
		if write { // cmdhost's executor: the outcome of a request it may have run is unknown
			return reply{}, 0, fmt.Errorf("%w: the Azure IoT Operations state store answered %s with status 500 (%s): it may have applied", state.ErrUnknown, verb, res.Message)
		}
		fallthrough
	default:
		return reply{}, 0, fmt.Errorf("%w: the Azure IoT Operations state store answered %s with status %d (%s)", state.ErrUnavailable, verb, res.Status, res.Message)
	}
	r, err := parseReply(res.Payload)
	if err != nil {
		return reply{}, 0, unexpected(verb, args[1], quote(res.Payload), write)
	}
	var version uint64
	if t, ok := statestore.ParseTimestamp(res.Timestamp); ok && res.Timestamp != "" {
		version = statestore.Version(t)
		_ = s.hlc.Update(t) // what follows orders after it; one too far ahead is not taken
	}
	return r, version, nil
}

// packetOverhead is what a request adds to its payload, at most: its
// topic, properties and header.
const packetOverhead = 1024

// wireError is the state error of a request that got no reply: nothing
// applied when it was not sent (no connection, refused by the broker);
// a write that was, or may have been, sent may have applied.
func (s *Store) wireError(verb string, write bool, err error) error {
	s.health.failed(err)
	var refused *session.PublishRefusedError
	sent := true
	switch {
	case errors.Is(err, rpc.ErrNoResponse): // published, and no reply in time
	case errors.As(err, &refused), session.NotConnected(err),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled): // it waited for a connection, or was refused
		sent = false
	}
	if write && sent {
		return fmt.Errorf("%w: the Azure IoT Operations state store did not answer a %s: it may have applied: %w", state.ErrUnknown, verb, err)
	}
	return fmt.Errorf("%w: the Azure IoT Operations state store: %s: %w", state.ErrUnavailable, verb, err)
}
