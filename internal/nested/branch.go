package nested

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/commands"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// call is what every branch of one invocation shares about its caller.
type call struct {
	plugin, command string
	correlation     string   // the caller's correlation data as a UUID string, for events
	path            []string // the chain so far, the caller last
	chain           string   // path as the children's abi.ChainKey
	// caller is the verified caller of the request the calling plugin
	// handles: a call to a local command is made on its behalf, and
	// judged by it (Config.Gate).
	caller abi.Caller
}

func (n *Calls) newCall(caller wasm.Caller) *call {
	c := &call{plugin: caller.Plugin}
	if r := caller.Request; r != nil {
		c.command, c.caller = r.Command, r.Caller
		c.correlation = rpc.CorrelationString(r.CorrelationID)
		if chain := r.Metadata[abi.ChainKey]; chain != "" {
			c.path = strings.Split(chain, chainSep)
		}
	}
	c.path = append(c.path, chainElement(n.cfg.ExecutorID, c.command))
	c.chain = strings.Join(c.path, chainSep)
	return c
}

// The chain (abi.ChainKey) lists a request's callers, outermost first, as
// "executorId/command" joined by '>'. Neither part can hold '/', but both
// may hold '>' (and '%'), which are escaped so that elements compare
// exactly.
const chainSep = ">"

var chainEscaper = strings.NewReplacer("%", "%25", ">", "%3E")

func chainElement(executor, command string) string {
	return chainEscaper.Replace(executor) + "/" + chainEscaper.Replace(command)
}

// plan is one branch, checked and ready to run.
type plan struct {
	branch   *abi.Branch
	executor string // the executor serving it
	remote   bool
	chain    string    // the child's abi.ChainKey
	start    time.Time // when the branch was planned
	deadline time.Time // zero: nothing bounds it
	budget   time.Duration
}

// plan checks a branch against the chain and the depth limit and computes
// its deadline: min(the caller's, start + the requested timeout, start +
// the local command's own timeout). A branch that cannot run gets its
// result instead.
func (n *Calls) plan(ctx context.Context, c *call, b *abi.Branch, start time.Time) (*plan, *abi.BranchResult) {
	p := &plan{branch: b, executor: b.ExecutorID, start: start}
	if p.executor == "" {
		p.executor = n.cfg.ExecutorID
	}
	p.remote = p.executor != n.cfg.ExecutorID
	fail := func(r abi.Reason, format string, args ...any) (*plan, *abi.BranchResult) {
		return nil, &abi.BranchResult{Name: b.Name, Outcome: abi.OutcomeError, Reason: r, Message: fmt.Sprintf(format, args...)}
	}
	target := chainElement(p.executor, b.Command)
	chain := append(slices.Clip(c.path), target)
	switch {
	case slices.Contains(c.path, target):
		return fail(abi.ReasonCycle, "nested call cycle: %s", strings.Join(chain, " → "))
	case len(chain) > n.cfg.MaxDepth:
		return fail(abi.ReasonDepth, "nested call depth limit of %d reached: %s", n.cfg.MaxDepth, strings.Join(chain, " → "))
	case p.remote && n.cfg.Remote == nil:
		return fail(abi.ReasonUnavailable, "calls to other executors (%s) are not available on this host", p.executor)
	}
	if !p.remote {
		if _, ok := n.cfg.Resolver.Lookup(b.Command); !ok {
			return fail(abi.ReasonUnknownCommand, "command %s is not served by this host (%s)", b.Command, n.cfg.ExecutorID)
		}
	}
	p.chain = c.chain

	if d, ok := ctx.Deadline(); ok {
		p.deadline = d
	}
	bound := func(t time.Duration) {
		if d := start.Add(t); t > 0 && (p.deadline.IsZero() || d.Before(p.deadline)) {
			p.deadline = d
		}
	}
	bound(b.Timeout)
	if !p.remote && n.cfg.Timeout != nil {
		bound(n.cfg.Timeout(b.Command))
	}
	if p.remote && p.deadline.IsZero() {
		bound(n.cfg.RemoteTimeout) // a request needs a message expiry
	}
	if !p.deadline.IsZero() {
		p.budget = max(p.deadline.Sub(start), 0)
	}
	return p, nil
}

// metadata is the child's: the branch's, and the chain.
func (p *plan) metadata() map[string]string {
	md := make(map[string]string, len(p.branch.Metadata)+1)
	for k, v := range p.branch.Metadata {
		md[k] = v
	}
	md[abi.ChainKey] = p.chain
	return md
}

// run runs one branch to its result.
func (n *Calls) run(ctx context.Context, c *call, p *plan) abi.BranchResult {
	if !p.deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, p.deadline)
		defer cancel()
	}
	var res abi.BranchResult
	var plugin string
	if p.remote {
		res = n.runRemote(ctx, p)
	} else {
		res, plugin = n.runLocal(ctx, c, p)
	}
	res.Name, res.Elapsed, res.Budget = p.branch.Name, time.Since(p.start), p.budget
	if res.Outcome == abi.OutcomeTimedOut {
		n.emit(events.Event{Type: events.TypeNested, Command: p.branch.Command, Plugin: plugin, Correlation: c.correlation,
			Budget: p.budget, Elapsed: res.Elapsed, Policy: events.PolicyFail, Branch: p.branch.Name, Attempt: 1})
	}
	return res
}

// runLocal calls the local plugin serving the command directly.
func (n *Calls) runLocal(ctx context.Context, c *call, p *plan) (res abi.BranchResult, plugin string) {
	b := p.branch
	ctx, end := n.traceLocal(ctx, b.Command)
	defer func() { end(res) }()
	req := &abi.Request{Command: b.Command, Payload: b.Payload, ContentType: b.ContentType, Format: b.Format,
		Metadata: p.metadata(), InvokerID: n.cfg.ExecutorID, CorrelationID: rpc.NewCorrelation(),
		ExecutorID: n.cfg.ExecutorID, Deadline: p.deadline, Caller: c.caller}
	if pl, ok := n.cfg.Resolver.Lookup(b.Command); ok {
		plugin = pl.Name()
	}
	h := commands.Resolving(n.cfg.Resolver, b.Command)
	if n.cfg.Gate != nil {
		h = n.cfg.Gate(b.Command, h)
	}
	// The child's state writes join its caller's only if it succeeds
	// (state.Txn.Child); the caller's commit then applies them.
	var writes *state.Txn
	if tx := state.TxnFrom(ctx); tx != nil {
		writes = tx.Child()
		ctx = state.WithTxn(ctx, writes)
	}
	resp, err := h(ctx, req)
	if writes != nil && err == nil && (resp == nil || resp.Code() < 400) {
		if merr := writes.Merge(); merr != nil {
			return abi.BranchResult{Outcome: abi.OutcomeError, Reason: abi.ReasonHostFault, Message: merr.Error()}, plugin
		}
	}
	var se *rpc.StatusError
	switch {
	case err == nil && resp == nil:
		return abi.BranchResult{Status: abi.StatusNoContent}, plugin
	case err == nil:
		return abi.BranchResult{Status: resp.Code(), AppError: resp.AppError, Message: resp.Message,
			Payload: resp.Payload, ContentType: resp.ContentType, Format: resp.Format, Metadata: resp.Metadata}, plugin
	case errors.As(err, &se): // the host's own answer, e.g. 503 while the plugin is replaced
		return abi.BranchResult{Status: se.Status, Message: se.Message}, plugin
	case errors.Is(err, context.DeadlineExceeded):
		return abi.BranchResult{Outcome: abi.OutcomeTimedOut, Status: abi.StatusRequestTimeout,
			Message: fmt.Sprintf("the nested deadline (%v) cut the call: %v", p.budget, err)}, plugin
	case errors.Is(err, context.Canceled):
		return abi.BranchResult{Outcome: abi.OutcomeError, Reason: abi.ReasonCanceled, Message: err.Error()}, plugin
	}
	return abi.BranchResult{Outcome: abi.OutcomeError, Reason: abi.ReasonHostFault, Message: err.Error()}, plugin
}

// runRemote sends the request to another executor through the broker,
// with the branch's budget as its message expiry. MQTT counts expiry in
// whole seconds, so the remote executor may give the child up to a second
// more; this side stops waiting at the exact deadline.
func (n *Calls) runRemote(ctx context.Context, p *plan) abi.BranchResult {
	b := p.branch
	topic, err := remoteTopic(n.cfg.RemoteTopic, p.executor, b.Command)
	if err != nil {
		return abi.BranchResult{Outcome: abi.OutcomeError, Reason: abi.ReasonHostFault, Message: err.Error()}
	}
	timeout := time.Until(p.deadline)
	if timeout <= 0 {
		return abi.BranchResult{Outcome: abi.OutcomeTimedOut, Status: abi.StatusRequestTimeout,
			Message: "no time left for the call"}
	}
	r, err := n.cfg.Remote.Invoke(ctx, rpc.Call{Topic: topic, Payload: b.Payload, ContentType: b.ContentType,
		Format: b.Format, Metadata: p.metadata(), Timeout: timeout, Ack: n.cfg.RemoteAck})
	switch {
	case errors.Is(err, rpc.ErrNoExecutor):
		return abi.BranchResult{Outcome: abi.OutcomeError, Reason: abi.ReasonUnavailable,
			Message: fmt.Sprintf("executor %s: %v", p.executor, err)}
	case errors.Is(err, rpc.ErrNoResponse) || err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return abi.BranchResult{Outcome: abi.OutcomeTimedOut, Status: abi.StatusRequestTimeout,
			Message: fmt.Sprintf("no response from executor %s within the nested deadline (%v)", p.executor, p.budget)}
	case errors.Is(err, context.Canceled):
		return abi.BranchResult{Outcome: abi.OutcomeError, Reason: abi.ReasonCanceled, Message: err.Error()}
	case err != nil:
		return abi.BranchResult{Outcome: abi.OutcomeError, Reason: abi.ReasonHostFault, Message: err.Error()}
	}
	res := abi.BranchResult{Status: r.Status, AppError: r.AppError, Message: r.Message, Payload: r.Payload,
		ContentType: r.ContentType, Metadata: r.Metadata}
	if r.Status == abi.StatusRequestTimeout { // the remote executor's execution timeout cut it
		res.Outcome = abi.OutcomeTimedOut
	}
	return res
}

// remoteTopic is the request topic of command on executor.
func remoteTopic(pattern, executor, command string) (string, error) {
	p, err := rpc.ParseTopic("", pattern, map[string]string{"executorId": executor, "commandName": command})
	if err != nil {
		return "", err
	}
	topic := p.Filter()
	if strings.Contains(topic, "+") {
		return "", fmt.Errorf("topic pattern %q has tokens other than {executorId} and {commandName}", pattern)
	}
	return topic, nil
}
