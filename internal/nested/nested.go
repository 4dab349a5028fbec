// Package nested runs the calls a handler makes to other commands
// (abi.FnInvoke): the engine hands each invocation to a Calls, which runs
// its branches on local plugins or, through the broker, on other
// executors, and waits for them by the invocation's sync rule. host builds
// one per server (Config, New) and gives it to the engine
// (wasm.Engine.SetNester); why it works the way it does is below.
package nested

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/commands"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// Why it is built this way:
//   - Deadlines only shrink. A child gets min(the caller's deadline, the
//     branch's requested timeout, the child command's own execution
//     timeout), so nothing a handler starts can outlive it, and a child
//     keeps its own bound when the caller has time to spare.
//   - Local children are called directly on their plugin (no broker, no
//     dedup, no reuse): a nested call is part of its caller's execution,
//     not a new request of an invoker. A branch naming another executor
//     goes through the broker like any protocol invoker, so the two hosts
//     need nothing but the RPC protocol (plus the chain property).
//   - Cycles fail fast instead of hanging until a deadline: the call chain
//     travels with every nested request in the cmdhost-chain property
//     (abi.ChainKey), across hosts too, and a call to a command already in
//     it, or past the depth limit, fails at once naming the chain.
//   - Fan-out waits by a synchronization timeout: branches start at once;
//     the sync timeout is wait time measured from the first answer, not
//     total time, so slow starts do not eat it; its default,
//     min(max child budget × n × 1.5, 30 min), leaves every branch its own
//     budget with room to spare; the caller's own deadline caps everything.
//   - Branches still running when the invocation completes (strategy met,
//     sync timeout, caller cut) are cancelled: their module contexts are
//     closed. Nobody would read their output, and it frees their pool
//     instances for other calls at once. Remote branches stop being waited
//     for; with RemoteAck the remote executor is sent a cancel, otherwise
//     it stops them at their message expiry.

// DefaultMaxDepth bounds call chains when Config.MaxDepth is 0.
const DefaultMaxDepth = 8

// maxSyncTimeout caps the computed default sync timeout, so a fan-out over
// long commands ends within half an hour unless it sets its own timeout.
const maxSyncTimeout = 30 * time.Minute

// RemoteInvoker calls a command of another executor through the broker;
// *rpc.Invoker is one.
type RemoteInvoker interface {
	Invoke(ctx context.Context, c rpc.Call) (*rpc.Result, error)
}

// Config configures Calls. ExecutorID and Resolver are required.
type Config struct {
	// ExecutorID is this host's executor id: a branch naming none, or
	// this one, runs on a local plugin. It is also the chain's name for
	// this host.
	ExecutorID string
	// Resolver finds the plugin version serving a local command
	// (plugins.Manager).
	Resolver plugins.Lookuper
	// Timeout returns a local command's own execution timeout (0: none),
	// the one the executor applies to it.
	Timeout func(command string) time.Duration
	// Remote sends branches that name another executor; nil: they fail
	// with abi.ReasonUnavailable.
	Remote RemoteInvoker
	// RemoteAck makes remote calls asks (rpc.Call.Ack, the cmdhost-ack
	// extension): a branch abandoned or cut here is cancelled on the
	// remote executor too (cmdhost-cancel), rather than left to run until
	// its message expiry, and an executor that is not there fails the
	// branch in 1.5 s (abi.ReasonUnavailable) instead of at its deadline.
	// Executors without the extension never ack: a call to one that takes
	// longer than the ack window fails, so leave it off for them.
	RemoteAck bool
	// RemoteTopic is the request topic pattern of remote commands, with
	// {executorId} and {commandName}; default rpc.DefaultTopic.
	RemoteTopic string
	// MaxDepth bounds the call chain, the caller's callers, the caller and
	// the child included; default DefaultMaxDepth.
	MaxDepth int
	// RemoteTimeout is the message expiry of a remote call nothing else
	// bounds (no caller deadline, no requested timeout); default 1 min.
	RemoteTimeout time.Duration
	// Events receives the nested and sync timeout events; nil: none.
	Events events.Sink
	// Tracer makes a span of each nested call to a local command (remote
	// ones are Remote's: an invoker with a tracer); Origin names the plugin
	// serving a command on it. nil: no tracing.
	Tracer trace.Tracer
	Origin commands.Origin
	// Gate puts a local command's handler behind who may call it and how
	// often (the operator file's allow and quota, internal/gate), judged by
	// the caller of the request the calling plugin handles, which a call
	// to a local command carries as its own (abi.Request.Caller); nil:
	// none.
	Gate func(command string, h rpc.Handler) rpc.Handler
	// Clock drives the sync timeout; nil is the system clock. Deadlines
	// are context deadlines, on the system clock.
	Clock clock.Clock
}

// Calls runs nested invocations: it is the engine's wasm.Nester. Nest is
// safe for concurrent use.
type Calls struct {
	cfg Config
}

var _ wasm.Nester = (*Calls)(nil)

// New checks cfg and returns Calls; hand them to wasm.Engine.SetNester.
func New(cfg Config) (*Calls, error) {
	if cfg.ExecutorID == "" {
		return nil, errors.New("nested: the executor id is required")
	}
	if cfg.Resolver == nil {
		return nil, errors.New("nested: a resolver is required")
	}
	if cfg.MaxDepth <= 0 {
		cfg.MaxDepth = DefaultMaxDepth
	}
	if cfg.RemoteTopic == "" {
		cfg.RemoteTopic = rpc.DefaultTopic
	}
	if _, err := remoteTopic(cfg.RemoteTopic, "x", "x"); err != nil {
		return nil, fmt.Errorf("nested: remote topic: %w", err)
	}
	if cfg.RemoteTimeout <= 0 {
		cfg.RemoteTimeout = time.Minute
	}
	cfg.Clock = clock.OrSystem(cfg.Clock)
	return &Calls{cfg: cfg}, nil
}

// arrival is a branch that finished, with its result.
type arrival struct {
	i   int
	res abi.BranchResult
}

// Nest runs inv's branches at once and waits for them by inv.Sync. It
// returns when the strategy is met, every branch has finished, the sync
// timeout fires, or ctx is done; branches still running then are
// cancelled.
func (n *Calls) Nest(ctx context.Context, caller wasm.Caller, inv *abi.Invocation) *abi.InvocationResult {
	if err := inv.Validate(); err != nil { // the engine's are valid; other callers' may not be
		return &abi.InvocationResult{Failure: abi.ReasonInvalid, Message: err.Error()}
	}
	start := time.Now()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the branches still running when we return
	c := n.newCall(caller)
	branches := inv.Branches
	w := waiter{n: n, c: c, inv: inv, plans: make([]*plan, len(branches)),
		results: make([]abi.BranchResult, len(branches)), arrived: make([]bool, len(branches))}
	arrivals := make(chan arrival, len(branches)) // one send per branch: never blocks
	for i := range branches {
		p, failed := n.plan(ctx, c, &branches[i], start)
		if failed != nil { // a cycle, the depth limit, an unknown command: no child runs
			w.results[i], w.arrived[i] = *failed, true
			w.finished++
			continue
		}
		w.plans[i] = p
		if len(branches) == 1 {
			// A lone branch runs on the caller's goroutine: there is no
			// fan-in to wait for, and handing it to another goroutine and
			// back cost more than the dispatcher's own work (see
			// BenchmarkNestedLocal). A cut caller cuts it too (its context
			// derives from the caller's), so the wait still ends with the
			// caller's call: at once for a remote child, as soon as the
			// engine stopped the guest for a local one (~1 ms).
			arrivals <- arrival{i, n.run(runCtx, c, p)}
			continue
		}
		go func() { arrivals <- arrival{i, n.run(runCtx, c, p)} }()
	}
	out := w.wait(ctx, arrivals)
	for i := range branches {
		if !w.arrived[i] {
			w.results[i] = abi.BranchResult{Name: branches[i].Name, Outcome: abi.OutcomeNotArrived,
				Message: w.ended, Elapsed: time.Since(start), Budget: w.plans[i].budget}
		}
	}
	if out.Failure != abi.ReasonCanceled {
		out.Branches = w.results
	}
	return out
}

// waiter is the fan-in of one invocation.
type waiter struct {
	n        *Calls
	c        *call
	inv      *abi.Invocation
	plans    []*plan // nil for a branch that failed before it started
	results  []abi.BranchResult
	arrived  []bool
	finished int    // branches with a result
	ended    string // why the sync ended, for the branches that had not arrived
}

// need is how many answers meet the strategy.
func (w *waiter) need() int {
	switch w.inv.Sync.Strategy {
	case abi.SyncAny:
		return 1
	case abi.SyncMOfN:
		return int(w.inv.Sync.M)
	}
	return len(w.inv.Branches)
}

// wait collects arrivals until the sync ends. A branch arrives when it
// answers (abi.OutcomeDone, whatever its status); one that ends without
// an answer is finished but does not count towards the strategy.
func (w *waiter) wait(ctx context.Context, arrivals <-chan arrival) *abi.InvocationResult {
	total, need := len(w.inv.Branches), w.need()
	answered := 0
	var fired chan struct{} // armed at the first answer
	var timer clock.Timer
	var first time.Time
	var syncTimeout time.Duration
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for w.finished < total && answered < need {
		select {
		case a := <-arrivals:
			if !w.record(a) {
				continue
			}
			answered++
			if answered == 1 && answered < need && w.finished < total {
				first, syncTimeout = w.n.cfg.Clock.Now(), w.syncTimeout(ctx)
				fired = make(chan struct{}, 1)
				timer = w.n.cfg.Clock.AfterFunc(syncTimeout, func() { fired <- struct{}{} })
			}
		case <-fired:
			answered += w.recordArrived(arrivals, total, need-answered)
			if w.finished < total && answered < need {
				return w.syncTimedOut(first, syncTimeout, answered)
			}
		case <-ctx.Done():
			return &abi.InvocationResult{Failure: abi.ReasonCanceled, Message: "the caller's call ended: " + ctx.Err().Error()}
		}
	}
	w.ended = fmt.Sprintf("the sync ended before it arrived: strategy %s met", w.inv.Sync.Strategy)
	return &abi.InvocationResult{}
}

// record keeps a branch's arrival and reports whether it answered
// (abi.OutcomeDone, whatever its status).
func (w *waiter) record(a arrival) bool {
	w.results[a.i], w.arrived[a.i] = a.res, true
	w.finished++
	return a.res.Outcome == abi.OutcomeDone
}

// recordArrived records the arrivals already waiting when the sync timer
// fired (the select may take the timer first), until every branch
// finished or want answered, and returns how many answered.
func (w *waiter) recordArrived(arrivals <-chan arrival, total, want int) int {
	answered := 0
	for w.finished < total && answered < want {
		select {
		case a := <-arrivals:
			if w.record(a) {
				answered++
			}
		default:
			return answered
		}
	}
	return answered
}

// syncTimeout is the invocation's sync timeout: its own, or the default
// min(max child budget × n × 1.5, 30 min); never past the
// caller's deadline.
func (w *waiter) syncTimeout(ctx context.Context) time.Duration {
	t := w.inv.Sync.Timeout
	if t == 0 {
		var longest time.Duration
		for _, p := range w.plans {
			if p == nil {
				continue
			}
			if p.budget == 0 {
				longest = maxSyncTimeout
				break
			}
			longest = max(longest, p.budget)
		}
		t = maxSyncTimeout
		if n := time.Duration(len(w.inv.Branches)); longest < maxSyncTimeout && longest*n*3/2 < t {
			t = longest * n * 3 / 2
		}
	}
	if d, ok := ctx.Deadline(); ok {
		t = max(min(t, time.Until(d)), 0)
	}
	return t
}

// syncTimedOut ends the wait at the sync timeout, by its policy.
func (w *waiter) syncTimedOut(first time.Time, timeout time.Duration, answered int) *abi.InvocationResult {
	var missing []string
	for i, ok := range w.arrived {
		if !ok {
			missing = append(missing, w.inv.Branches[i].Name)
		}
	}
	s := w.inv.Sync
	msg := fmt.Sprintf("sync timeout of %v after the first arrival: %d of %d branches answered (strategy %s, needs %d); not arrived: %s",
		timeout, answered, len(w.inv.Branches), s.Strategy, w.need(), strings.Join(missing, ", "))
	w.n.emit(events.Event{Type: events.TypeSync, Command: w.c.command, Plugin: w.c.plugin, Correlation: w.c.correlation,
		Budget: timeout, Elapsed: w.n.cfg.Clock.Now().Sub(first), Policy: events.Policy(s.OnTimeout.String()),
		Branch: strings.Join(missing, ",")})
	w.ended = "the sync ended before it arrived: " + msg
	if s.OnTimeout == abi.SyncFail {
		return &abi.InvocationResult{Failure: abi.ReasonSyncTimeout, Message: msg}
	}
	return &abi.InvocationResult{}
}

// emit hands a timeout event to the sink.
func (n *Calls) emit(ev events.Event) {
	if n.cfg.Events == nil {
		return
	}
	ev.Kind = events.KindTimeout
	n.cfg.Events.Emit(events.Finish(ev))
}
