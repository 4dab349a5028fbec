package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/cmdhost/cmdhost/internal/state"
)

// Effects commit with the outcome. A call's state writes, on the state
// store in the dedup store's Redis (State), are applied by the script
// that stores its request's outcome in place of its claim
// (CommitOutcome), and the messages it published join the outbox there
// (Outbox, redis_outbox.go): one round trip, the one the outcome costs
// anyway, and one atomic step, guarded by the claim. So:
//
//   - a request whose process died after that script has its outcome and
//     its writes: a duplicate gets the outcome;
//   - one whose process died before has neither: a duplicate finds the
//     claim of a process that is gone and gets OwnerGone's outcome, which
//     takes the claim's place, so the script can never apply after;
//   - a commit whose answer was lost (Redis did not answer, or no replica
//     confirmed it, even waited for: redis_confirm_write.go) is settled by the store when Redis answers again:
//     the outcome it finds (the script ran) or, in the claim's place, the
//     outcome given for that case (it did not: it never will). The
//     request gets what was settled, or no answer if it expired first.
//
// On a Redis Cluster the request's key and a namespace's keys are in two
// slots, so the writes are committed first (one namespace, atomically,
// with a marker named after the request, which makes a retry or a
// settling apply them once), and the outcome stored after them, in the
// settle's pipeline. A process that dies between the two leaves the
// writes applied and the claim unanswered: the request's duplicates get
// OwnerGone's outcome ("outcome unknown"), which is then not "nothing
// was written". Nothing applies twice: the request never runs again.

// StateCarrier is a Dedup whose Redis keeps the handlers' state too, and
// that commits a call's writes in its outcome's script.
type StateCarrier[V any] interface {
	// State is the state store in the dedup store's Redis, on its client,
	// bounded by limits (the first call's: one store per dedup store).
	State(limits state.Limits) *RedisState
	// CommitOutcome is Complete with state writes and messages: see
	// RedisDedup.
	CommitOutcome(e *Entry[V], v V, keepUntil time.Time, ops []state.Op, msgs []state.Message, unknown V) (V, error)
	// Outbox is the outbox the messages join, made by the first call
	// (see RedisOutbox).
	Outbox(cfg RedisOutboxConfig) *RedisOutbox
}

var _ StateCarrier[int] = (*RedisDedup[int])(nil)

// ErrOutcomeUnknown is CommitOutcome's error when the commit's answer
// was lost: the store settles it, and the entry is done then.
var ErrOutcomeUnknown = errors.New("the commit's answer was lost: it is settled when Redis answers")

// State returns the state store in this store's Redis (see RedisState).
func (s *RedisDedup[V]) State(limits state.Limits) *RedisState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == nil {
		s.state = newRedisState(s.redisLink, limits)
	}
	return s.state
}

// CommitOutcome stores v as the outcome of this process's first receipt
// e, as Complete does, and applies ops (writes of the store State
// returned) and adds msgs to the outbox (Outbox, which must be made) in
// the same script, all or nothing; it returns the outcome to answer e's
// request with:
//
//   - v, once both are stored (and confirmed by the replicas WAIT asks
//     for); e is done;
//   - another outcome, which was stored first (OwnerGone's, after this
//     process was taken for gone): nothing applied; e is done with it;
//   - an error of package state (ErrConflict, ErrQuota, ErrFenced,
//     ErrInvalid, ErrUnavailable): nothing applied, and e is not done:
//     run the call again, or Complete e;
//   - ErrOutcomeUnknown: the commit's answer was lost; the store settles
//     it when Redis answers (see above), unknown taking the claim's place
//     if the script did not run, and e is done then with the outcome
//     settled. Duplicates here wait for it meanwhile.
func (s *RedisDedup[V]) CommitOutcome(e *Entry[V], v V, keepUntil time.Time, ops []state.Op, msgs []state.Message, unknown V) (V, error) {
	var zero V
	k := redisKey(e.key)
	s.mu.Lock()
	le, rs := s.local[k], s.state
	if le == nil || le.entry != e || !le.first || le.settling || rs == nil {
		s.mu.Unlock()
		return zero, fmt.Errorf("%w: not a first receipt in progress here, or no state store", state.ErrInvalid)
	}
	le.settling = true
	s.mu.Unlock()
	unsettle := func() {
		s.mu.Lock()
		le.settling = false
		s.mu.Unlock()
	}
	if keepUntil.Before(e.expiry) {
		keepUntil = e.expiry
	}
	if err := rs.up(); err != nil {
		unsettle()
		return zero, err
	}
	if s.down.Load() {
		unsettle()
		return zero, fmt.Errorf("%w: Redis did not answer; the next heartbeat tries again", state.ErrUnavailable)
	}
	b, err := s.cfg.Encode(v)
	if err != nil {
		unsettle()
		return zero, fmt.Errorf("%w: encoding an outcome: %w", state.ErrUnavailable, err)
	}
	value := formatRedisValue(outcomeMark, e.expiry, string(b))
	c := &state.Commit{Ops: ops, Messages: msgs}
	if err := rs.limits.CheckCommit(c); err != nil {
		unsettle()
		return zero, err
	}
	if s.cluster {
		return s.commitThenSettle(e, le, rs, c, v, keepUntil, unknown)
	}
	call, err := rs.call(c, redisGuard{key: k, claim: le.claim, value: value, keep: keepUntil}, nil)
	if err != nil {
		unsettle()
		return zero, err
	}
	op := &settleOp{k: k, claim: le.claim, value: value, keep: keepUntil, commit: call}
	sent := time.Now()
	s.settles.do(op, s.sendSettles)
	if appliedOnPrimary(op.cmd) { // a slow replica is waited for (redis_confirm_write.go)
		op.werr = s.confirmWrite(op.werr, confirmUntil(sent, e.expiry), touch(k, func(v string) bool { return v == value }))
	}
	_, err = rs.answer(call, op.cmd, op.werr)
	var held *errHeld
	var refused *errRefused
	if errors.As(err, &refused) {
		// Nothing applied, unless an earlier try whose answer was lost
		// did: the key says.
		ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
		now, gerr := s.rdb.Get(ctx, k).Result()
		cancel()
		switch {
		case gerr == nil && now == le.claim:
			unsettle()
			return zero, stateUnavailable("committing", refused.err)
		case gerr == nil:
			err = &errHeld{held: &now}
		default:
			err = errCommitUnknown
		}
	}
	switch {
	case err == nil:
		s.markUp()
		rs.committed(call)
		s.finish(k, e, v)
		return v, nil
	case errors.As(err, &held) && held.held != nil && *held.held == value:
		s.markUp() // a retry of the script that applied
		rs.committed(call)
		s.finish(k, e, v)
		return v, nil
	case errors.As(err, &held):
		s.markUp()
		got := s.heldOutcome(k, le.claim, held.held, e.expiry, keepUntil, unknown)
		s.finish(k, e, got)
		return got, nil
	case errors.Is(err, errCommitUnknown):
		s.settleLost(k, e, le.claim, unknown, keepUntil, func() (V, error) {
			return s.settle(k, le.claim, unknown, e.expiry, keepUntil) // the script ran: the outcome it stored wins
		})
		return zero, ErrOutcomeUnknown
	}
	unsettle()
	return zero, err
}

// finish ends e, this process's first receipt under key k, with v.
func (s *RedisDedup[V]) finish(k string, e *Entry[V], v V) {
	s.mu.Lock()
	delete(s.local, k)
	s.mu.Unlock()
	e.value = v
	close(e.done)
}

// settleLost has a lost commit settled (resolve) by the duplicates' loop,
// which ends e then.
func (s *RedisDedup[V]) settleLost(k string, e *Entry[V], claim string, unknown V, keep time.Time, resolve func() (V, error)) {
	s.mu.Lock()
	s.unsettled[k] = unsettledOutcome[V]{claim: claim, v: unknown, expiry: e.expiry, keepTo: keep, entry: e, resolve: resolve}
	s.mu.Unlock()
}

// heldOutcome is the outcome of a request whose key held held (nil:
// nothing) instead of its claim, when its commit was refused for it: an
// outcome stored first; else unknown, stored in its place (a key gone:
// Redis lost it), or, when another process's claim holds it (it took an
// idempotent request over), not stored.
func (s *RedisDedup[V]) heldOutcome(k, claim string, held *string, expiry, keep time.Time, unknown V) V {
	if held != nil {
		if hv, ok := parseRedisValue(*held); ok && hv.mark == outcomeMark {
			if v, err := s.cfg.Decode([]byte(hv.rest)); err == nil {
				return v
			}
		}
		return unknown
	}
	v, err := s.settle(k, claim, unknown, expiry, keep)
	if err != nil {
		return unknown
	}
	return v
}

// commitThenSettle is CommitOutcome on a Redis Cluster: the writes
// first, with a marker named after the request, then the outcome.
func (s *RedisDedup[V]) commitThenSettle(e *Entry[V], le *redisEntry[V], rs *RedisState, c *state.Commit, v V, keep time.Time, unknown V) (V, error) {
	var zero V
	k := redisKey(e.key)
	id := requestMarker(k)
	call, err := rs.call(c, redisGuard{marker: true, id: id, keep: keep}, nil)
	if err != nil {
		s.mu.Lock()
		le.settling = false
		s.mu.Unlock()
		return zero, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	cmd, werr := s.evalWaited(ctx, stateCommitScript, call.keys, call.args...)
	cancel()
	_, err = rs.answer(call, cmd, werr)
	var refused *errRefused
	if errors.As(err, &refused) {
		// Nothing applied, unless an earlier try whose answer was lost
		// did: its marker says.
		_, err = rs.afterRefusal(call, refused)
		if err != nil && !errors.Is(err, state.ErrUnavailable) {
			err = errCommitUnknown
		}
	}
	switch {
	case err == nil:
		s.markUp()
		rs.committed(call)
		s.mu.Lock()
		le.settling = false // complete takes it from here
		s.mu.Unlock()
		s.complete(e, v, keep, nil)
		return e.value, nil
	case errors.Is(err, errCommitUnknown):
		s.settleLost(k, e, le.claim, unknown, keep, func() (V, error) {
			ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
			defer cancel()
			marker, err := s.rdb.EvalSha(ctx, stateAbortScript.Hash(), []string{call.keys[0]}, redisKeep(keep)).Text()
			if isScriptMissing(err) {
				marker, err = stateAbortScript.Eval(ctx, s.rdb, []string{call.keys[0]}, redisKeep(keep)).Text()
			}
			if err != nil {
				s.markDown(err)
				return zero, unavailable("settling a commit", err)
			}
			if marker == markerAborted {
				return s.settle(k, le.claim, unknown, e.expiry, keep)
			}
			return s.settle(k, le.claim, v, e.expiry, keep)
		})
		return zero, ErrOutcomeUnknown
	}
	s.mu.Lock()
	le.settling = false
	s.mu.Unlock()
	return zero, err
}

// requestMarker names the marker of a request's commit on a cluster: its
// dedup key's hash.
func requestMarker(k string) string {
	h := sha256.Sum256([]byte(k))
	return "r" + hex.EncodeToString(h[:12])
}
