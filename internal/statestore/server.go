package statestore

import (
	"context"
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
	"github.com/cmdhost/cmdhost/internal/state"
)

// The protocol's names.
const (
	// Topic is the request topic of the state store.
	Topic = "statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/command/invoke"
	// CommandName is the executor's name of the command that serves it.
	CommandName = "statestore"
	// ContentType is the content type of the replies and notifications.
	ContentType = "application/octet-stream"
	// FencingTokenProperty is the user property of a request's fencing
	// token (an HLC).
	FencingTokenProperty = "__ft"
	// TimestampProperty is the user property of a request's timestamp,
	// and of a reply's or a notification's version.
	TimestampProperty = "__ts"
)

// The error messages of the protocol, which the clients match (`-ERR
// <message>`; package stateaio, a client, too).
const (
	MsgTimestampSkew      = "the request timestamp is too far in the future; ensure that the client and broker system clocks are synchronized"
	MsgFencingRequired    = "a fencing token is required for this request"
	MsgFencingSkew        = "the request fencing token timestamp is too far in the future; ensure that the client and broker system clocks are synchronized"
	MsgFencingLower       = "the request fencing token is a lower version than the fencing token protecting the resource"
	MsgQuota              = "the quota has been exceeded"
	MsgSyntax             = "syntax error"
	MsgNotAuthorized      = "not authorized"
	MsgUnknownCommand     = "unknown command"
	MsgArity              = "wrong number of arguments"
	MsgMissingTimestamp   = "missing timestamp"
	MsgMalformedTimestamp = "malformed timestamp"
	MsgKeyLengthZero      = "the key length is zero"
)

// Store is what the server needs of the state store: a Backend whose
// changes (expiries included) can be observed.
type Store interface {
	state.Backend
	Observe(f func([]state.Change)) (stop func())
}

// Config configures a Server. Store is required.
type Config struct {
	Store Store
	// NodeID is the node id of the versions' HLCs; "": DefaultNodeID. It
	// may not hold ':'.
	NodeID string
	// Clock is what requests' timestamps are judged against; nil: the
	// system's.
	Clock clock.Clock
	// MaxSkew is how far ahead of Clock a request's __ts or __ft may be;
	// 0: hlc.DefaultMaxDrift (a minute, the protocol's).
	MaxSkew time.Duration
	// Authorize says whether caller (as the broker verified it) may read
	// (write false: GET, KEYNOTIFY) or write (SET, DEL, VDEL) the
	// protocol's key key; a refusal is `-ERR not authorized`. nil: anyone
	// may do anything (the anonymous embedded broker's rule).
	Authorize func(caller abi.Caller, key []byte, write bool) bool
	// Quota is the quota of namespace ns where the operator set one (a
	// plugin's operator file); nil, or zero fields: the store's defaults.
	Quota func(ns string) state.Quota
	// Publish publishes a notification: QoS 1, ContentType, with ts as
	// its __ts (rpc.Executor.PublishTelemetryAt). nil: KEYNOTIFY is
	// refused.
	Publish func(ctx context.Context, topic string, payload []byte, ts string) error
	// Reach makes what is published on a client's notify topics (filter,
	// NotifyFilter) reach it, subscribed or not (the embedded broker
	// subscribes it itself; the Go and .NET SDKs' clients subscribe to
	// nothing that matches); an error says the client is gone. nil: only
	// a client that subscribes gets its notifications.
	Reach func(clientID, filter string) error
	// Connected reports whether a client is connected: a registration
	// made as its client disconnected is dropped (ClientGone missed it).
	// nil: every client is.
	Connected func(clientID string) bool
	// MaxRegistrations bounds the KEYNOTIFY registrations, all clients
	// together (default DefaultMaxRegistrations), MaxClientRegistrations
	// one client's (default DefaultMaxClientRegistrations); past them
	// KEYNOTIFY answers `-ERR the quota has been exceeded`.
	MaxRegistrations, MaxClientRegistrations int
	// QueueLen and QueueBytes bound the notifications waiting to be
	// published (defaults DefaultQueueLen, DefaultQueueBytes); past them a
	// notification is dropped, counted and logged.
	QueueLen   int
	QueueBytes int64
	// Logger; nil discards.
	Logger *slog.Logger
}

// The defaults of Config's bounds.
const (
	DefaultMaxRegistrations       = 100_000
	DefaultMaxClientRegistrations = 1000
	DefaultQueueLen               = 10_000
	DefaultQueueBytes             = 64 << 20
)

func (c *Config) defaults() error {
	if c.Store == nil {
		return errors.New("statestore: no state store")
	}
	if c.NodeID == "" {
		c.NodeID = DefaultNodeID
	}
	if strings.Contains(c.NodeID, ":") {
		return fmt.Errorf("statestore: node id %q holds ':', which an HLC cannot carry", c.NodeID)
	}
	c.Clock = clock.OrSystem(c.Clock)
	if c.MaxSkew <= 0 {
		c.MaxSkew = hlc.DefaultMaxDrift
	}
	if c.MaxRegistrations <= 0 {
		c.MaxRegistrations = DefaultMaxRegistrations
	}
	if c.MaxClientRegistrations <= 0 {
		c.MaxClientRegistrations = DefaultMaxClientRegistrations
	}
	if c.QueueLen <= 0 {
		c.QueueLen = DefaultQueueLen
	}
	if c.QueueBytes <= 0 {
		c.QueueBytes = DefaultQueueBytes
	}
	c.Logger = logx.OrDiscard(c.Logger)
	return nil
}

// Server answers the state store protocol over a state store. Safe for
// concurrent use.
type Server struct {
	cfg      Config
	log      *slog.Logger
	refusals ratelog.Limiter // the log lines of refused ops
	regs     registry
	queue    *queue
	stop     func() // stops observing the store
	closing  sync.Once
}

// New starts a server: it observes the store's changes from now on.
// Close stops it.
func New(cfg Config) (*Server, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, refusals: ratelog.Limiter{Interval: time.Second}}
	s.queue = newQueue(cfg.QueueLen, cfg.QueueBytes, cfg.Publish, s.log)
	s.stop = cfg.Store.Observe(s.changed)
	return s, nil
}

// Close stops observing the store and publishing: the notifications
// queued are dropped.
func (s *Server) Close() {
	s.closing.Do(func() {
		s.stop() // no change is told to s once it returns
		s.queue.close()
	})
}

// Command is the executor's command that serves the protocol on Topic.
// Concurrency lets requests share the store's group commits.
func (s *Server) Command() rpc.Command {
	return rpc.Command{Name: CommandName, Topic: Topic, Raw: s.Handle, Concurrency: 64}
}

// Handle answers one request: a reply of status 200 whatever the
// outcome (the protocol's errors are payloads), with the version the
// reply is about as its __ts (none for a GET that found nothing, a
// deleted key's absence, KEYNOTIFY and errors). A store that cannot be
// used is the host's 503 (nothing written; send again).
func (s *Server) Handle(ctx context.Context, req *rpc.RawRequest) (*rpc.RawResponse, error) {
	payload, version, err := s.do(ctx, req)
	if err != nil {
		return nil, err
	}
	r := &rpc.RawResponse{Response: abi.Response{Payload: payload, ContentType: ContentType}}
	if version != 0 {
		r.Timestamp = versionString(version, s.cfg.NodeID)
	}
	return r, nil
}

// request is one request, read.
type request struct {
	verb  string
	args  [][]byte // after the verb
	key   []byte   // the protocol's
	ns    string   // the store's namespace and key
	k     []byte
	after uint64 // the request's __ts, as a version
	fence string // __ft, canonical; "" for none
}

// do answers req: the reply's payload and the version it names (0:
// none), or an error for the host to answer (503).
func (s *Server) do(ctx context.Context, raw *rpc.RawRequest) ([]byte, uint64, error) {
	args, err := parseRequest(raw.Payload)
	if err != nil {
		return errorReply(MsgSyntax), 0, nil
	}
	r := &request{args: args[1:]}
	if len(args[0]) > len("KEYNOTIFY") {
		return errorReply(MsgUnknownCommand), 0, nil
	}
	r.verb = strings.ToUpper(string(args[0]))
	if msg := r.checkArity(); msg != "" {
		return errorReply(msg), 0, nil
	}
	r.key = r.args[0]
	if len(r.key) == 0 {
		return errorReply(MsgKeyLengthZero), 0, nil
	}
	if msg := s.readTimestamps(r, raw.Reserved); msg != "" {
		return errorReply(msg), 0, nil
	}
	var set setOptions
	switch r.verb {
	case "SET":
		if set, err = parseSetOptions(r.args[2:]); err != nil {
			return errorReply(MsgSyntax), 0, nil
		}
	case "KEYNOTIFY":
		if len(r.args) == 2 && !strings.EqualFold(string(r.args[1]), "STOP") {
			return errorReply(MsgSyntax), 0, nil
		}
	}
	if r.ns, r.k, err = state.ProtocolKey(r.key); err != nil {
		return errorReply(err.Error()), 0, nil
	}
	if r.verb == "KEYNOTIFY" && len(r.args) == 2 {
		return s.keyNotifyStop(raw.Caller, r), 0, nil // removing one's own registration needs no grant
	}
	write := r.verb == "SET" || r.verb == "DEL" || r.verb == "VDEL"
	if s.cfg.Authorize != nil && !s.cfg.Authorize(raw.Caller, r.key, write) {
		s.refused(raw.Caller, r, write)
		return errorReply(MsgNotAuthorized), 0, nil
	}
	switch r.verb {
	case "SET":
		return s.set(ctx, r, set)
	case "GET":
		return s.get(ctx, r)
	case "DEL":
		return s.del(ctx, r, state.Cond{})
	case "VDEL":
		return s.del(ctx, r, state.Cond{HasValue: true, Value: r.args[1]})
	}
	return s.keyNotify(raw.Caller, r), 0, nil
}

// checkArity checks the verb and its number of arguments.
func (r *request) checkArity() string {
	n := len(r.args)
	var ok bool
	switch r.verb {
	case "SET":
		ok = n >= 2
	case "GET", "DEL":
		ok = n == 1
	case "VDEL":
		ok = n == 2
	case "KEYNOTIFY":
		ok = n == 1 || n == 2
	default:
		return MsgUnknownCommand
	}
	if !ok {
		return MsgArity
	}
	return ""
}

// readTimestamps reads the request's __ts (required on SET) and, on a
// write, its __ft.
func (s *Server) readTimestamps(r *request, reserved map[string]string) string {
	now := s.cfg.Clock.Now()
	v, ok := reserved[TimestampProperty]
	switch {
	case !ok && r.verb == "SET":
		return MsgMissingTimestamp
	case ok:
		ts, good := ParseTimestamp(v)
		if !good {
			return MsgMalformedTimestamp
		}
		if ahead(ts, now, s.cfg.MaxSkew) {
			return MsgTimestampSkew
		}
		r.after = Version(ts)
	}
	if r.verb != "SET" && r.verb != "DEL" && r.verb != "VDEL" {
		return "" // GET and KEYNOTIFY ignore a fencing token
	}
	if v, ok := reserved[FencingTokenProperty]; ok {
		ft, good := ParseTimestamp(v)
		if !good {
			return MsgMalformedTimestamp
		}
		if ahead(ft, now, s.cfg.MaxSkew) {
			return MsgFencingSkew
		}
		r.fence = ft.String()
	}
	return ""
}

// setOptions are SET's options: a condition (NX: the key is absent; NEX:
// absent or holding the value), an expiry.
type setOptions struct {
	nx, nex bool
	ttl     time.Duration
}

// maxTTL bounds PX: what a time.Duration holds.
const maxTTL = time.Duration(1<<63 - 1)

// parseSetOptions reads SET's options, in any order, case aside: NX or
// NEX (not both), PX <milliseconds> (decimal, a fraction cut; 0 is a
// millisecond, as a TTL the SDKs round down to 0 was asked to expire, not
// to stay).
func parseSetOptions(opts [][]byte) (setOptions, error) {
	var o setOptions
	hasPX := false
	for i := 0; i < len(opts); i++ {
		switch strings.ToUpper(string(opts[i])) {
		case "NX":
			if o.nex {
				return o, errSyntaxRESP
			}
			o.nx = true
		case "NEX":
			if o.nx {
				return o, errSyntaxRESP
			}
			o.nex = true
		case "PX":
			if hasPX || i+1 == len(opts) {
				return o, errSyntaxRESP
			}
			i++
			ms, ok := parseMillis(string(opts[i]))
			if !ok {
				return o, errSyntaxRESP
			}
			o.ttl, hasPX = max(time.Duration(ms)*time.Millisecond, time.Millisecond), true
		default:
			return o, errSyntaxRESP
		}
	}
	return o, nil
}

// parseMillis reads PX's value: decimal digits, maybe a fraction (.NET
// sends a double), within maxTTL.
func parseMillis(s string) (int64, bool) {
	whole, frac, hasFrac := strings.Cut(s, ".")
	if hasFrac {
		if _, ok := digits(frac, 20); !ok {
			return 0, false
		}
	}
	ms, ok := digits(whole, 18)
	if !ok || ms > int64(maxTTL/time.Millisecond) {
		return 0, false
	}
	return ms, true
}

// quota is ns's quota where the operator set one.
func (s *Server) quota(ns string) state.Quota {
	if s.cfg.Quota == nil {
		return state.Quota{}
	}
	return s.cfg.Quota(ns)
}

// conflictTries bounds how many times a conditional write whose
// condition failed, on a key gone by the time it is read, is tried again.
const conflictTries = 3

// set answers SET: +OK and the new version, or :-1 and the stored
// version when its condition does not hold.
func (s *Server) set(ctx context.Context, r *request, o setOptions) ([]byte, uint64, error) {
	op := state.Op{Kind: state.OpSet, NS: r.ns, Key: r.k, Value: r.args[1], TTL: o.ttl, Fence: r.fence, Quota: s.quota(r.ns)}
	switch {
	case o.nx:
		op.If = state.Cond{Absent: true}
	case o.nex:
		op.If = state.Cond{Absent: true, HasValue: true, Value: op.Value}
	}
	for range conflictTries {
		res, err := s.cfg.Store.Commit(ctx, &state.Commit{Ops: []state.Op{op}, After: r.after})
		if err == nil {
			return replyOK, res[0].Version, nil
		}
		if !errors.Is(err, state.ErrConflict) {
			return s.storeError(r, err)
		}
		it, err := s.cfg.Store.Get(ctx, r.ns, r.k)
		if err == nil {
			return replyNotDone, it.Version, nil
		}
		if !errors.Is(err, state.ErrNotFound) {
			return s.storeError(r, err)
		}
		// Gone since the commit looked: its condition may hold now.
	}
	return errorReply("the key changed under the request too often; send it again"), 0, nil
}

// get answers GET: the value and its version, or $-1 and no version.
func (s *Server) get(ctx context.Context, r *request) ([]byte, uint64, error) {
	it, err := s.cfg.Store.Get(ctx, r.ns, r.k)
	switch {
	case err == nil:
		return bulk(it.Value), it.Version, nil
	case errors.Is(err, state.ErrNotFound):
		return replyNil, 0, nil
	}
	return s.storeError(r, err)
}

// del answers DEL and VDEL (if: the value the key must hold): :1 and the
// deletion's version, :0 when the key does not exist, :-1 and the stored
// version when it holds another value.
func (s *Server) del(ctx context.Context, r *request, cond state.Cond) ([]byte, uint64, error) {
	op := state.Op{Kind: state.OpDelete, NS: r.ns, Key: r.k, If: cond, Fence: r.fence}
	res, err := s.cfg.Store.Commit(ctx, &state.Commit{Ops: []state.Op{op}, After: r.after})
	switch {
	case err == nil && res[0].Existed:
		return replyApplied, res[0].Version, nil
	case err == nil:
		return replyNone, 0, nil
	case !errors.Is(err, state.ErrConflict):
		return s.storeError(r, err)
	}
	it, err := s.cfg.Store.Get(ctx, r.ns, r.k)
	switch {
	case err == nil:
		return replyNotDone, it.Version, nil
	case errors.Is(err, state.ErrNotFound):
		return replyNone, 0, nil
	}
	return s.storeError(r, err)
}

// storeError is the reply to a store's refusal: the protocol's error,
// or a clear one of the store's bounds; a store that cannot be used is
// the host's 503.
func (s *Server) storeError(r *request, err error) ([]byte, uint64, error) {
	var fe *state.FenceError
	switch {
	case errors.As(err, &fe) && fe.Missing:
		return errorReply(MsgFencingRequired), 0, nil
	case errors.As(err, &fe):
		return errorReply(MsgFencingLower), 0, nil
	case errors.Is(err, state.ErrQuota):
		return errorReply(MsgQuota), 0, nil
	case errors.Is(err, state.ErrTooLarge), errors.Is(err, state.ErrInvalid):
		return errorReply(err.Error()), 0, nil
	case errors.Is(err, state.ErrUnavailable):
		s.log.Error("state store protocol: the state store is unavailable (503)", "op", r.verb, "err", err)
		return nil, 0, &rpc.StatusError{Status: abi.StatusServiceUnavailable, Message: "the state store is unavailable: nothing was written; send the request again"}
	}
	s.log.Error("state store protocol: an error of the state store", "op", r.verb, "err", err)
	return errorReply("internal error"), 0, nil
}

// refused logs an op the grants refuse, at most a line a second: who,
// what, and the ACL line that would allow it.
func (s *Server) refused(c abi.Caller, r *request, write bool) {
	ok, leftOut := s.refusals.Allow(s.cfg.Clock.Now())
	if !ok {
		return
	}
	s.log.Warn("state store protocol: op refused: not authorized", "user", c.User, "client", cleanLine(c.ClientID, 128),
		"op", r.verb, "key", quoteKey(r.key), "grant", Grant(r.key, write), "refusals_not_logged", leftOut)
}

// Grant is the ACL line (docs/security.md) that would let a user read
// (write false) or write key: `state read PREFIX` or `state write
// PREFIX`, PREFIX the key's namespace prefix (plugin/NAME/ or
// shared/NAME/), or its first level and '/' (app/ of app/config), or the
// key itself.
func Grant(key []byte, write bool) string {
	verb := "read"
	if write {
		verb = "write"
	}
	prefix := key
	levels := 1
	if ns, _, err := state.ProtocolKey(key); err == nil && ns != state.ProtocolNamespace {
		levels = 2
	}
	at := 0
	for i, c := range key {
		if c == '/' {
			if levels--; levels == 0 {
				at = i + 1
				break
			}
		}
	}
	if at > 0 {
		prefix = key[:at]
	}
	return "state " + verb + " " + quoteKey(prefix)
}

// quoteKey shows a key in a log line: as it is when it is printable
// text without spaces, else quoted; cut at 64 bytes.
func quoteKey(k []byte) string {
	const max = 64
	cut := ""
	if len(k) > max {
		k, cut = k[:max], "…"
	}
	for _, c := range k {
		if c <= ' ' || c >= 0x7f || c == '"' {
			return strconv.Quote(string(k)) + cut
		}
	}
	return string(k) + cut
}
