package cache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// A claim whose replicas are slow. A claim's pipeline ends with a WAIT of
// redisWaitTimeout (redis_durable.go); on a loaded machine a healthy
// replica — connected, no lag — can take longer than that to acknowledge
// (seen: the first requests after a start refused "0 of 1 replicas").
// Refusing then would make a healthy store refuse. So a claim the
// primary took, and no replica confirmed in that first WAIT, is not
// refused at once: it is confirmed again, round after round (its claim
// script run again — it finds its own claim and writes it again, so that
// the round's WAIT covers it on whatever connection the round gets — and
// a WAIT of redisWaitTimeout), until
//
//   - a replica confirms it: it counts, and the request runs;
//   - the store stops waiting for replicas (Sentinel's default, the
//     heartbeat having found the replica gone: waitingFor is 0): it
//     counts, as a claim made then would;
//   - fewer replicas are connected than a strict Replicas asks for: no
//     WAIT can succeed, so it is refused (503, not run) at once;
//   - redisConfirmMax has passed since the claim was sent, or the
//     request's expiry has come: it is refused (503, not run) and its
//     claim released.
//
// A round that finds the key holding another claim (the claim was lost
// in a failover, and another process claimed the request since) is
// refused too: that process runs it. The executor acks the request (202)
// before the claim (internal/rpc), so an invoker does not take a host
// that waits for its replica for absent.

// redisConfirmMax bounds how long a claim waits for its replicas, from
// when it was sent (see above): a replica slower than that is taken for
// lagging, and requests are refused until it keeps up.
const redisConfirmMax = 5 * time.Second

// unconfirmed is a claim the primary took that no replica has confirmed
// yet.
type unconfirmed struct {
	k, claim string
	keep     int64     // its key's PXAT (unix ms)
	until    time.Time // when to stop waiting (see redisConfirmMax)
	err      error     // why it does not count yet; nil once it does
}

// confirmUntil is when a claim sent at sent, of a request expiring at
// expiry (zero: none), stops waiting for its replicas.
func confirmUntil(sent, expiry time.Time) time.Time {
	until := sent.Add(redisConfirmMax)
	if !expiry.IsZero() && expiry.Before(until) {
		return expiry
	}
	return until
}

// errClaimLost is a claim whose key holds another's claim or an outcome
// when it is confirmed again: it was lost (a failover), and another
// process took the request.
var errClaimLost = errors.New("the claim was lost before a replica confirmed it, and another process holds the request")

// confirm waits, round after round, until each of cs counts or is
// refused (see above); each one's err says which. Only claims whose err
// is errNotReplicated are waited for.
func (s *redisLink) confirm(cs []*unconfirmed) {
	for {
		var pending []*unconfirmed
		var last time.Time
		now := time.Now()
		for _, c := range cs {
			if errors.Is(c.err, errNotReplicated) && now.Before(c.until) {
				pending = append(pending, c)
				last = maxTime(last, c.until)
			}
		}
		if len(pending) == 0 {
			return
		}
		n := s.waitingFor()
		if n <= 0 {
			for _, c := range pending {
				c.err = nil
			}
			return
		}
		if online := int(s.online.Load()); s.strict && online < n {
			for _, c := range pending {
				c.err = fmt.Errorf("%w: %d replicas connected, %d wanted", errNotReplicated, online, n)
			}
			return
		}
		s.confirmRound(pending, n, min(redisWaitTimeout, last.Sub(now)))
	}
}

// confirmRound writes each claim of cs again and waits up to wait for n
// replicas to confirm them, in one round trip.
func (s *redisLink) confirmRound(cs []*unconfirmed, n int, wait time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(cs))
	for i, c := range cs {
		// By its text: a round is rare, and a new primary may lack it.
		cmds[i] = claimScript.Eval(ctx, pipe, []string{c.k}, c.claim, c.claim, c.keep)
	}
	w := &waitOp{n: n, cmd: pipe.Do(ctx, "WAIT", n, max(wait, time.Millisecond).Milliseconds())}
	_, _ = pipe.Exec(ctx)
	werr := s.waited(w)
	for i, c := range cs {
		switch held, err := cmds[i].Text(); {
		case err != nil:
			s.failed(err)
			c.err = err
		case held != "":
			c.err = errClaimLost
		default:
			c.err = werr
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// redisStartConfirm bounds how long a store waits, at its start, for its
// replicas to confirm a write (prepare).
const redisStartConfirm = 10 * time.Second

// prepare readies the store before its process takes requests, so that
// being ready means serving: the scripts of the claims, outcomes and
// releases loaded (the first requests pay no NOSCRIPT round trip), and,
// when the store waits for replicas, one write (the heartbeat) confirmed
// by them — round after round of redisWaitTimeout, up to
// redisStartConfirm (a replica still syncing). A replica that does not
// confirm by then does not stop the start: it is logged, and claims
// follow their rule (redis_confirm.go). An error is Redis's answer, or
// its silence.
func (s *RedisDedup[V]) prepare() error {
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	for _, script := range []*redis.Script{claimScript, settleScript, releaseScript} {
		if err := script.Load(ctx, s.rdb).Err(); err != nil {
			return fmt.Errorf("loading its scripts: %w", err)
		}
	}
	start := time.Now()
	for {
		n := s.waitingFor()
		if n <= 0 {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
		pipe := s.rdb.Pipeline()
		set := pipe.Set(ctx, redisOwnerPrefix+s.instance, "1", redisHeartbeatTTL)
		w := s.waitCmd(ctx, pipe)
		info := pipe.Info(ctx, "replication")
		_, _ = pipe.Exec(ctx)
		cancel()
		if err := set.Err(); err != nil {
			return err
		}
		if text, err := info.Result(); err == nil {
			s.online.Store(int32(connectedReplicas(text)))
		}
		switch err := s.waited(w); {
		case err == nil:
			s.log.Info("dedup store: the replicas confirm writes", "replicas", n, "after", time.Since(start).Round(time.Millisecond))
			return nil
		case !errors.Is(err, errNotReplicated):
			return err
		case time.Since(start) >= redisStartConfirm:
			s.log.Warn("dedup store: no replica confirmed a write since the start: each claim waits for one up to claim_wait, then its request (to a non-idempotent command) is refused, 503 not run",
				"waited", redisStartConfirm, "claim_wait", redisConfirmMax, "replicas_wanted", n, "replicas_connected", s.online.Load())
			return nil
		}
	}
}
