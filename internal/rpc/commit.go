package rpc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/state"
)

// Effects commit with the outcome. A call stages its state writes in a
// state.Txn (its handler's context carries it to the engine's host
// functions); when the call is over, the executor decides its terminal
// state first (a cancel that won applies nothing), then commits the
// writes with the request's outcome, in one atomic commit: in the state
// store, when the dedup store keeps outcomes there (StateStores); in the
// script that stores the outcome in place of the request's claim, when
// the state store is in the dedup store's Redis (RedisStores with
// RedisConfig.State: cache.StateCarrier), which costs no round trip more
// than the outcome. The messages the call published (for the outbox)
// commit with its writes, even when it wrote nothing. So a request whose
// outcome is found again (a duplicate, a redelivery after a restart,
// another replica) never writes twice, and a call that failed writes and
// sends nothing:
//
//   - the writes commit when the handler answered below 400 (or, with the
//     command's CommitErrors, answered at all); a trap, a cut, a cancel or
//     the host's own refusal commits none;
//   - a commit refused for a condition that no longer holds (another call
//     wrote a key this one read), or a namespace that filled meanwhile,
//     runs the call again from the start, alone: every call of a command
//     runs and commits in its lane shared (a read lock), and a call run
//     again after a conflict takes the lane to itself, so that no other
//     call of its command can write between its reads and its commit
//     (calls of other commands, other hosts, and the state store protocol
//     still can); up to maxStateRuns runs while the request's expiry
//     leaves time; then it is answered 503, nothing written;
//   - a store that cannot write answers 503, nothing written; one that
//     stopped answering once the commit was sent, or applied part of it
//     (a store without transactions: package stateaio), 500 outcome
//     unknown;
//   - on Redis, a commit whose answer was lost (Redis did not answer or
//     confirm) is settled by the dedup store when Redis answers: the
//     request is answered what was settled (its outcome, if the script
//     ran; else unconfirmedReply, nothing written), or nothing if it
//     expires first.

// maxStateRuns is how many times a call whose commit conflicts runs.
const maxStateRuns = 5

// newTxn is a call's staging area; nil without a state store.
func (e *Executor) newTxn() *state.Txn {
	if e.cfg.State == nil {
		return nil
	}
	return state.NewTxn(e.cfg.State, e.cfg.StateLimits, e.cfg.Clock.Now)
}

// runCommitted runs a first receipt (execute), settles it against a
// cancel, and commits what it wrote; false when a cancel won.
func (e *Executor) runCommitted(in *incoming, turn *turn, c *running, entry *cache.Entry[*reply]) (*reply, bool) {
	in.txn = e.newTxn()
	defer in.leaveLane()
	for run := 1; ; run++ {
		in.alone = run > 1
		r, ok := c.settle(e.execute(in, turn, c))
		if !ok { // a cancel won: the run's writes go, its outcome is the cancel's
			_, _ = e.commit(in, entry, r, false)
			return r, false
		}
		r, err := e.commit(in, entry, r, r.handled && (r.status < 400 || in.route.cmd.CommitErrors))
		in.leaveLane()
		if err == nil {
			return r, true
		}
		again := errors.Is(err, state.ErrConflict) || errors.Is(err, state.ErrFenced) || errors.Is(err, state.ErrQuota)
		if again && run < maxStateRuns && in.expiry.After(e.cfg.Clock.Now()) && c.rerun() {
			e.log.Debug("state commit refused; running the call again", "command", in.route.cmd.Name, "run", run, "err", err)
			turn = in.route.slots.enqueue()
			continue
		}
		return e.commitRefused(in, err, run), true
	}
}

// commit commits the call's writes (when writes) and, on a store that
// keeps outcomes, the request's outcome r, together; it returns the
// outcome to answer (r, but for a commit in the outcome's script:
// commitInOutcome).
func (e *Executor) commit(in *incoming, entry *cache.Entry[*reply], r *reply, writes bool) (*reply, error) {
	if writes && in.txn != nil && e.effects != nil && entry != nil {
		in.nameMessages()
		if ops, msgs := in.txn.Staged(), in.txn.StagedMessages(); len(ops) > 0 || len(msgs) > 0 {
			return e.commitInOutcome(in, entry, r, ops, msgs)
		}
	}
	var outcome *state.Outcome
	if e.keepsOutcomes && entry != nil && !in.route.cmd.Idempotent && durable(r) {
		b, err := encodeReply(r)
		if err != nil {
			return r, fmt.Errorf("%w: encoding the outcome: %w", state.ErrUnavailable, err)
		}
		outcome = &state.Outcome{ID: state.OutcomeID(entry.Key()), Value: b, KeepUntil: keepUntil(in)}
	}
	switch {
	case writes && in.txn != nil:
		in.nameMessages()
		_, err := in.txn.Commit(context.Background(), outcome, 0)
		return r, err
	case outcome != nil:
		_, err := e.cfg.State.Commit(context.Background(), &state.Commit{Outcome: outcome})
		return r, err
	}
	return r, nil
}

// nameMessages gives the messages the call staged their ids: the same
// at every run (the outbox's receivers drop a repeat).
func (in *incoming) nameMessages() {
	if in.txn.Messages() > 0 {
		corr, topic := string(in.correlation), in.responseTopic
		in.txn.NameMessages(func(i int) string { return state.MessageID(corr, topic, i) })
	}
}

// unconfirmedReply is the outcome of a request whose commit's answer was
// lost and which the dedup store found not run: it never will.
var unconfirmedReply = statusReply(abi.StatusServiceUnavailable,
	"the state store did not confirm the commit: nothing was written; send the request again", "", "")

// commitInOutcome commits ops and msgs (the outbox's) in the script that
// stores r as entry's outcome (cache.StateCarrier): the entry is complete
// after, and the
// outcome to answer is r, or the one stored first (the dedup store took
// this executor for gone), or, when the answer was lost, the one the
// store settles (awaitSettled).
func (e *Executor) commitInOutcome(in *incoming, entry *cache.Entry[*reply], r *reply, ops []state.Op, msgs []state.Message) (*reply, error) {
	got, err := e.effects.CommitOutcome(entry, r, keepUntil(in), ops, msgs, unconfirmedReply)
	if errors.Is(err, cache.ErrOutcomeUnknown) {
		e.log.Warn("the state store did not answer or confirm a commit: the request is answered once it is settled", "command", in.route.cmd.Name)
		return e.awaitSettled(in, entry), nil
	}
	return got, err
}

// awaitSettled waits for the outcome the dedup store settles for entry,
// until the request expires (then no answer: a duplicate gets it).
func (e *Executor) awaitSettled(in *incoming, entry *cache.Entry[*reply]) *reply {
	wait := in.expiry.Sub(e.cfg.Clock.Now())
	if in.expiry.IsZero() {
		wait = time.Minute
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-entry.Done():
		return entry.Value()
	case <-t.C:
		return noReply
	}
}

// durable reports whether r is an outcome to keep through a restart: not
// one that says the request did not run to its end here (the host
// stopping), and not the absence of an answer.
func durable(r *reply) bool { return !r.none && r != notRunReply && r != stoppedReply }

// commitRefused is the reply of a call whose commit failed for good.
func (e *Executor) commitRefused(in *incoming, err error, runs int) *reply {
	if errors.Is(err, state.ErrUnknown) {
		e.log.Error("the state store did not answer a commit: its writes may have applied (500)", "command", in.route.cmd.Name, "err", err)
		return statusReply(abi.StatusInternalError, "outcome unknown: the state store did not answer the commit, or applied only part of it; its writes may have applied", "", "")
	}
	if errors.Is(err, state.ErrUnavailable) {
		e.log.Error("the state store cannot commit: the call's writes are dropped (503)", "command", in.route.cmd.Name, "err", err)
		return statusReply(abi.StatusServiceUnavailable, "the state store is unavailable: nothing was written; send the request again", "", "")
	}
	e.log.Warn("state commit refused: the call's writes are dropped (503)", "command", in.route.cmd.Name, "runs", runs, "err", err)
	what := "conflict, not applied"
	if !errors.Is(err, state.ErrConflict) && !errors.Is(err, state.ErrFenced) && !errors.Is(err, state.ErrQuota) {
		what = "not applied" // a bound, a commit the store cannot take (two namespaces on a Redis Cluster)
	}
	return statusReply(abi.StatusServiceUnavailable,
		fmt.Sprintf("%s: %s (after %d runs); nothing was written, send the request again", what, cleanText(err.Error(), 256), runs), "", "")
}

// enterLane takes the call's lane for a run: shared, or to itself when it
// runs again after a conflict (alone). A lane already held (an earlier
// attempt of the run, cut by its timeout) is left first.
func (in *incoming) enterLane() {
	in.leaveLane()
	lane := &in.route.lane
	if in.alone {
		lane.Lock()
		in.unlane = lane.Unlock
		return
	}
	lane.RLock()
	in.unlane = lane.RUnlock
}

// leaveLane releases the lane the run holds, if any.
func (in *incoming) leaveLane() {
	if in.unlane != nil {
		in.unlane()
		in.unlane = nil
	}
}

// State is the handlers' state store the executor commits its calls'
// writes to: Config.State, the state store of StateStores, or the one in
// the dedup store's Redis (RedisStores with RedisConfig.State); nil
// without one. The host gives it to its triggers (package trigger), so
// that a trigger's writes and messages go where a command's do.
func (e *Executor) State() state.Backend { return e.cfg.State }

// RedisOutbox is the outbox in the dedup store's Redis, which the
// messages of non-idempotent calls join in their outcome's script, made
// by the first call with cfg (cache.RedisOutbox); nil when the state
// store is not in that Redis (RedisStores with RedisConfig.State).
func (e *Executor) RedisOutbox(cfg cache.RedisOutboxConfig) *cache.RedisOutbox {
	if e.effects == nil {
		return nil
	}
	return e.effects.Outbox(cfg)
}
