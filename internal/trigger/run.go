package trigger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/state"
)

// Effects commit with the outcome. Each run of a message stages its state
// writes and published messages in a state.Txn its handler's context
// carries; a run that completes (a status below 400 by its deadline)
// commits them, and, for a message with an id (msgKey) of a trigger that
// is not idempotent, the message's outcome with them, in one atomic
// commit. So a redelivered message whose outcome is found runs nothing,
// and a run that failed wrote nothing. Messages with one id are handled
// one at a time (keyLocks), so two deliveries of it at once run once.
//
// A commit refused for a condition that no longer holds (another run
// wrote a key this one read) runs the message again at once, with the
// trigger's lane to itself (as a command's call: rpc/commit.go), up to
// maxStateRuns runs; then the attempt failed.

// maxStateRuns is how many times a run whose commit conflicts runs.
const maxStateRuns = 5

// handle runs one message of t to its end: handled, a duplicate, or
// dropped, and acknowledged; or, when the receiver stops before its next
// attempt, left unacknowledged.
func (r *Receiver) handle(rt *route, t Trigger, msg *message) {
	if r.stopping.Load() {
		return // not started: the broker sends it again
	}
	req, key, problem := r.read(t, msg.m.Packet)
	if problem != "" {
		r.dropped(rt, t, msg, 0, problem)
		r.ack(msg.m)
		return
	}
	keeps := key.ok() && r.cfg.State != nil && !t.Idempotent
	if keeps {
		release, ok := r.keys.lock(key.id, r.stop)
		if !ok {
			return // stopping
		}
		defer release()
		if r.recorded(t, key) {
			rt.c.duplicates.Add(1)
			r.observe(t.Name, OutcomeDuplicate, msg)
			r.log.Debug("trigger message handled before: acknowledged, not run again", "trigger", t.Name, "id", key.id)
			r.ack(msg.m)
			return
		}
	}
	for attempt := 1; ; attempt++ {
		why, reason := r.attempt(rt, t, req, key, keeps, attempt)
		if why != "" && keeps && r.recorded(t, key) {
			// The commit failed as far as this run knows (its answer was
			// lost: state.ErrUnknown), and yet applied: the message is
			// handled, and another attempt would apply its writes twice.
			why = ""
		}
		if why == "" {
			rt.c.handled.Add(1)
			r.observe(t.Name, OutcomeHandled, msg)
			r.ack(msg.m)
			return
		}
		rt.c.failures.Add(1)
		if o := r.cfg.Observer; o != nil {
			o.TriggerFailure(t.Name, reason)
		}
		if attempt >= t.Attempts {
			r.dropped(rt, t, msg, attempt, why)
			r.ack(msg.m)
			return
		}
		r.log.Debug("trigger attempt failed; running it again", "trigger", t.Name, "attempt", attempt, "err", why)
		wait := min(r.cfg.Backoff<<(attempt-1), MaxBackoff)
		select {
		case <-time.After(wait):
		case <-r.stop:
			return // not acknowledged: the broker sends it again after the restart
		}
	}
}

// recorded reports whether the message of key has an outcome in the
// state store: it was handled, by an earlier delivery or by an attempt
// whose commit applied though its answer was lost. A store that cannot
// say counts as no.
func (r *Receiver) recorded(t Trigger, key msgKey) bool {
	done, _, err := r.cfg.State.Outcome(context.Background(), key.outcome(t.Name))
	return err == nil && done != nil
}

// attempt runs the message once (again after a commit conflict, alone,
// up to maxStateRuns) and commits what it wrote; it returns why it
// failed and the Observer's reason, or "".
func (r *Receiver) attempt(rt *route, t Trigger, req *abi.Request, key msgKey, keeps bool, attempt int) (why, reason string) {
	for run := 1; ; run++ {
		why, reason, err := r.run(rt, t, req, key, keeps, attempt, run > 1)
		if why != "" || err == nil {
			return why, reason
		}
		again := errors.Is(err, state.ErrConflict) || errors.Is(err, state.ErrFenced) || errors.Is(err, state.ErrQuota)
		if !again || run >= maxStateRuns {
			return "state commit: " + err.Error(), ReasonCommit
		}
		r.log.Debug("trigger state commit refused; running the message again", "trigger", t.Name, "run", run, "err", err)
	}
}

// run runs the handler once under the trigger's deadline, in the
// trigger's lane (to itself when alone), and commits. why is a failure of
// the handler; err one of the commit.
func (r *Receiver) run(rt *route, t Trigger, req *abi.Request, key msgKey, keeps bool, attempt int, alone bool) (why, reason string, err error) {
	start := time.Now()
	deadline := start.Add(t.Timeout)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var txn *state.Txn
	if r.cfg.State != nil {
		txn = state.NewTxn(r.cfg.State, r.cfg.StateLimits, r.cfg.Clock.Now)
		ctx = state.WithTxn(ctx, txn)
	}
	if alone {
		rt.lane.Lock()
		defer rt.lane.Unlock()
	} else {
		rt.lane.RLock()
		defer rt.lane.RUnlock()
	}
	call := *req // each run its own copy
	call.Deadline, call.Attempt = deadline, attempt
	resp, herr := t.Handler(ctx, &call)
	cut := ctx.Err() != nil || !time.Now().Before(deadline)
	switch {
	case cut:
		policy := events.PolicyRetry
		if attempt >= t.Attempts {
			policy = events.PolicyFail
		}
		r.emit(events.Event{Kind: events.KindTimeout, Command: t.Name, Type: events.TypeExecution, Budget: t.Timeout,
			Elapsed: time.Since(start), Policy: policy, Attempt: attempt})
		return fmt.Sprintf("cut by its execution timeout (%v)", t.Timeout), ReasonTimeout, nil
	case herr != nil:
		line, _, _ := strings.Cut(herr.Error(), "\n")
		return session.CleanText(line, 512), ReasonError, nil
	case resp != nil && resp.Status >= 400:
		return session.CleanText(fmt.Sprintf("%d %s", resp.Status, resp.Message), 512), ReasonError, nil
	}
	return "", "", r.commit(t, txn, key, keeps)
}

// commit commits a run's writes and messages, and the message's outcome
// when keeps.
func (r *Receiver) commit(t Trigger, txn *state.Txn, key msgKey, keeps bool) error {
	var outcome *state.Outcome
	if keeps {
		outcome = &state.Outcome{ID: key.outcome(t.Name), Value: []byte(OutcomeHandled), KeepUntil: r.cfg.Clock.Now().Add(r.cfg.OutcomeTTL)}
	}
	switch {
	case txn != nil:
		if txn.Messages() > 0 {
			// Their ids: the same at every run of a message with an id (a
			// receiver of them drops a repeat), fresh for one without.
			id := key.outcome(t.Name)
			if !key.ok() {
				id.Correlation = "nonce:" + nonce()
			}
			txn.NameMessages(func(i int) string { return state.MessageID(id.Correlation, id.ResponseTopic, i) })
		}
		_, err := txn.Commit(context.Background(), outcome, 0)
		return err
	case outcome != nil:
		_, err := r.cfg.State.Commit(context.Background(), &state.Commit{Outcome: outcome})
		return err
	}
	return nil
}

// nonce is a random id.
func nonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// dropped counts a message dropped after attempts runs (0: before any)
// for why, and reports it, an event a second at most (the events sink
// logs it; the log without one): a flood of bad messages is no flood of
// lines. The counters and the Observer count every one.
func (r *Receiver) dropped(rt *route, t Trigger, msg *message, attempts int, why string) {
	rt.c.dropped.Add(1)
	r.observe(t.Name, OutcomeDropped, msg)
	ok, left := r.dropLog.Allow(time.Now())
	if !ok {
		return
	}
	if left > 0 {
		why += fmt.Sprintf(" (and %d more drops not reported since the last)", left)
	}
	if r.cfg.Events == nil {
		r.log.Warn("trigger message dropped", "trigger", t.Name, "plugin", t.Plugin, "topic", clip(msg.m.Packet.Topic),
			"attempts", attempts, "reason", why)
		return
	}
	r.emit(events.Event{Kind: events.KindTriggerDrop, Command: t.Name, Type: "trigger", Attempt: attempts, Reason: why})
}

// observe tells the Observer a message's outcome.
func (r *Receiver) observe(trigger, outcome string, msg *message) {
	if o := r.cfg.Observer; o != nil {
		o.TriggerMessage(trigger, outcome, r.cfg.Clock.Now().Sub(msg.received))
	}
}

func (r *Receiver) emit(ev events.Event) {
	if r.cfg.Events != nil {
		r.cfg.Events.Emit(events.Finish(ev))
	}
}

// keyLocks lets one message of an id run at a time: a second delivery
// waits for the first, then finds its outcome.
type keyLocks struct {
	mu   sync.Mutex
	busy map[string]chan struct{}
}

func (k *keyLocks) init() { k.busy = map[string]chan struct{}{} }

// lock waits until no message of id runs, or stop closes (false), and
// returns the function that releases id.
func (k *keyLocks) lock(id string, stop <-chan struct{}) (func(), bool) {
	for {
		k.mu.Lock()
		wait, busy := k.busy[id]
		if !busy {
			done := make(chan struct{})
			k.busy[id] = done
			k.mu.Unlock()
			return func() {
				k.mu.Lock()
				delete(k.busy, id)
				k.mu.Unlock()
				close(done)
			}, true
		}
		k.mu.Unlock()
		select {
		case <-wait:
		case <-stop:
			return nil, false
		}
	}
}
