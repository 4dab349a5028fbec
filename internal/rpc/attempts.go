package rpc

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/httpout"
	"github.com/cmdhost/cmdhost/internal/state"
)

// Execution of one accepted request: its turn for a slot, the handler
// under its deadline, the on_timeout policy and the timeout events.
//
// A run's deadline is min(remaining expiry, slot grant + execution
// timeout). When the execution timeout cuts a run of a command whose
// policy is retry (Command.TimeoutRetries > 0, idempotent only) and the
// request's expiry leaves time, the request takes a new turn at the back
// of its command's line and runs again, as attempt 2, 3, ... on a fresh
// instance (abi.Request.Attempt); the last cut answers 408. Every timeout
// is an event (events.Event) naming what cut the call and the policy
// applied; a run still going at events.WarnFraction of its budget emits a
// budget warning.

// execute runs the request until a reply is known: attempts, each
// waiting for its turn; a request that expires while queued is not
// executed; a cancel of c, queued or running, ends it with 499.
func (e *Executor) execute(in *incoming, turn *turn, c *running) *reply {
	for attempt := 1; ; attempt++ {
		r, again := e.attempt(in, turn, c, attempt)
		if !again {
			return r
		}
		turn = in.route.slots.enqueue()
	}
}

// awaitTurn waits for the call's slot until the request expires or the
// call is cut or cancelled (then it leaves the queue and returns the
// reply owed, and false). A slot granted already costs no timer: the
// common case when the command is not saturated.
func (e *Executor) awaitTurn(in *incoming, turn *turn, c *running, attempt int) (*reply, bool) {
	select {
	case <-turn.granted:
		return nil, true
	default:
	}
	wait := time.NewTimer(in.expiry.Sub(e.cfg.Clock.Now()))
	defer wait.Stop()
	select {
	case <-turn.granted:
		return nil, true
	case <-c.ctx.Done():
		in.route.slots.leave(turn)
		if stoppedBy(c.ctx) {
			return notRunReply, false
		}
		return cancelledReply, false
	case <-wait.C:
		in.route.slots.leave(turn)
		e.expired(in, events.TypeQueue, attempt)
		return noReply, false
	}
}

// attempt waits for turn, then runs the handler once. again asks for
// another attempt (the retry policy).
func (e *Executor) attempt(in *incoming, turn *turn, c *running, attempt int) (out *reply, again bool) {
	r := in.route
	queuedFrom := in.received // the first attempt queued at its receipt
	if attempt > 1 {
		queuedFrom = time.Now()
	}
	queued, waited := e.awaitTurn(in, turn, c, attempt)
	e.traceQueue(in, queuedFrom, attempt, waited)
	if !waited {
		return queued, false
	}
	if c.ctx.Err() != nil {
		// Cut or cancelled while its slot was being granted: a call
		// never starts once that happened.
		r.slots.release()
		if stoppedBy(c.ctx) {
			return notRunReply, false
		}
		return cancelledReply, false
	}
	left := in.expiry.Sub(e.cfg.Clock.Now())
	if left <= 0 {
		r.slots.release()
		e.expired(in, events.TypeQueue, attempt)
		return noReply, false
	}
	deadline, byTimeout := time.Now().Add(left), false
	// The execution timeout runs from the grant of the slot, so that
	// requests granted in receipt order also time out in that order
	// (rather than in the order their goroutines got to run).
	if t := r.cmd.Timeout; t > 0 {
		if d := turn.at.Add(t); d.Before(deadline) {
			deadline, byTimeout = d, true
		}
	}
	ctx, cancel := context.WithDeadline(c.ctx, deadline)
	defer cancel()
	ctx, span := e.traceExecute(ctx, in, turn.at, attempt)
	if span != nil { // no closure on the path of an untraced request
		defer func() { endSpan(span, out) }()
	}
	req := *in.req // each attempt its own copy: a late run keeps reading its own
	req.Deadline, req.Attempt = deadline, attempt
	warning := e.warnAt(in, turn.at, deadline, attempt)
	if warning != nil {
		defer warning.t.Stop()
	}

	if !r.cmd.Idempotent {
		// Its HTTP requests get an Idempotency-Key, the same at every run
		// of this request (package httpout).
		ctx = httpout.WithRequestKey(ctx, in.correlation, in.responseTopic)
	}
	if in.txn != nil { // each attempt writes afresh, in its lane until the commit (commit.go)
		in.txn.Reset()
		ctx = state.WithTxn(ctx, in.txn)
		in.enterLane()
	}
	res := e.callHandler(ctx, r, &req, in.reserved)
	// A result that arrives at or after the deadline is after the cut and
	// dropped, even before the context's timer has fired: otherwise which
	// of two requests cut at nearly the same time answers depends on the
	// order their timers' goroutines run in (conformance case
	// DispatchConcurrencyBelowNeed_TimeoutErrors).
	cut := ctx.Err() != nil || !time.Now().Before(deadline)
	if cut && warning != nil && !cancelledBy(ctx) && !stoppedBy(ctx) {
		// Cut at its deadline, the run passed its warning's point too,
		// even when a busy machine ran the deadline's timer first.
		warning.fire()
	}
	switch {
	case cut && cancelledBy(ctx):
		return cancelledReply, false
	case cut && stoppedBy(ctx):
		return stoppedReply, false
	case cut && byTimeout:
		ran := time.Since(turn.at)
		if attempt <= r.cmd.TimeoutRetries && in.expiry.After(e.cfg.Clock.Now()) {
			e.timedOut(in, events.TypeExecution, events.PolicyRetry, attempt, r.cmd.Timeout, ran)
			return nil, true
		}
		e.timedOut(in, events.TypeExecution, events.PolicyFail, attempt, r.cmd.Timeout, ran)
		return timeoutReply(r.cmd.Timeout), false
	case cut:
		e.expired(in, events.TypeExpiry, attempt)
		return noReply, false
	case res.err == nil && res.resp != nil:
		out := fromResponse(res.resp)
		out.raw, out.ts = res.raw, res.ts
		return out, false
	case res.err == nil:
		return &reply{status: abi.StatusNoContent, handled: true}, false
	}
	var se *StatusError
	if errors.As(res.err, &se) {
		return se.reply(), false
	}
	e.log.Warn("handler failed", "command", r.cmd.Name, "err", res.err)
	return statusReply(abi.StatusInternalError, faultSummary(res.err), "", ""), false
}

// handlerResult is what a handler returned.
type handlerResult struct {
	resp *abi.Response
	err  error
	// raw: a raw handler's (raw.go), whose reply's __ts is ts.
	raw bool
	ts  string
}

// callHandler calls r's handler and releases the slot it holds when the
// handler returns. A handler that keeps its deadline is called here; any
// other runs in a goroutine of its own and is left running at the cut,
// its late result dropped (its slot stays taken until it returns).
func (e *Executor) callHandler(ctx context.Context, r *route, req *abi.Request, reserved map[string]string) handlerResult {
	if r.cmd.KeepsDeadline {
		defer r.slots.release()
		return r.cmd.call(ctx, req, reserved)
	}
	done := make(chan handlerResult, 1)
	go func() {
		defer r.slots.release()
		done <- r.cmd.call(ctx, req, reserved)
	}()
	select {
	case res := <-done:
		return res
	case <-ctx.Done():
		return handlerResult{err: ctx.Err()}
	}
}

// maxFaultSummary bounds the part of a host fault's error that its 500
// quotes, in bytes.
const maxFaultSummary = 512

// faultSummary is the status message of a host fault: the first line of
// err, and where the rest is. A guest's trap comes with its wasm stack
// trace, and a Go guest's panic or fatal error with its goroutines' stacks
// (on its stderr): those go to the host log, never into a reply.
func faultSummary(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	return cleanText(strings.TrimSpace(line), maxFaultSummary) + " (details in the host log)"
}

// budgetWarning is a run's budget warning: its event goes once, from its
// timer or from the cut of a run its timer had not yet warned of.
type budgetWarning struct {
	t    *time.Timer
	once sync.Once
	emit func()
}

func (w *budgetWarning) fire() { w.once.Do(w.emit) }

// warnAt arms the budget warning of a run that started at start and is
// cut at deadline: an event if it still runs at events.WarnFraction of
// its budget. nil when there is no one to tell.
func (e *Executor) warnAt(in *incoming, start, deadline time.Time, attempt int) *budgetWarning {
	if e.cfg.Events == nil {
		return nil
	}
	budget := deadline.Sub(start)
	if budget <= 0 {
		return nil
	}
	typ := events.TypeExecution
	if t := in.route.cmd.Timeout; t <= 0 || start.Add(t).After(deadline) {
		typ = events.TypeExpiry // the request's expiry is the tighter budget
	}
	w := &budgetWarning{emit: func() {
		e.cfg.Events.Emit(events.Finish(events.Event{
			Kind: events.KindBudgetWarning, Command: in.route.cmd.Name, Correlation: CorrelationString(in.correlation),
			Type: typ, Budget: budget, Elapsed: time.Since(start), Attempt: attempt,
		}))
	}}
	w.t = time.AfterFunc(time.Duration(float64(budget)*events.WarnFraction), w.fire)
	return w
}

// expired reports that the request's expiry ended it (typ: queued or
// running): its budget was the whole expiry, nobody waits any more.
func (e *Executor) expired(in *incoming, typ string, attempt int) {
	e.timedOut(in, typ, events.PolicyNone, attempt, in.expiry.Sub(in.received), e.cfg.Clock.Now().Sub(in.received))
}

// timedOut reports a timeout of type typ, with the policy applied, to the
// events sink (which logs it too, in serve), or to the log when there is
// none.
func (e *Executor) timedOut(in *incoming, typ string, policy events.Policy, attempt int, budget, elapsed time.Duration) {
	name := in.route.cmd.Name
	if e.cfg.Events == nil {
		e.log.Info("timeout", "command", name, "type", typ, "policy", policy, "budget", budget, "attempt", attempt)
		return
	}
	e.cfg.Events.Emit(events.Finish(events.Event{
		Kind: events.KindTimeout, Command: name, Correlation: CorrelationString(in.correlation),
		Type: typ, Budget: budget, Elapsed: elapsed, Policy: policy, Attempt: attempt,
	}))
}
