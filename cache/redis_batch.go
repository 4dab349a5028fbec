package cache

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Batching of the shared store's round trips. Every request costs Redis a
// claim and an outcome; sent one by one, the claims (made in the order
// requests arrive) are one round trip after another and cap the
// executor's throughput, and each outcome is a round trip of its own. So
// claims that arrive together go to Redis in one pipeline (ClaimAll), and
// outcomes stored while another pipeline of outcomes is out go together
// in the next one (group commit). Nothing waits for a timer: a request
// alone goes at once.

// ClaimRequest is one request of ClaimAll.
type ClaimRequest struct {
	Invoker    string
	Key        Key
	Expiry     time.Time
	Idempotent bool
	// Reuse, when not "", is the request's reuse key: a store that
	// carries the reuse cache (ReuseCarrier) looks it up in the claim's
	// round trip.
	Reuse string
}

// ClaimResult is what Claim returns, for one request of ClaimAll.
type ClaimResult[V any] struct {
	Entry *Entry[V]
	First bool
	Err   error
	// ReuseAsked says the reuse cache was asked for the request's Reuse
	// key (a first receipt's, by a ReuseCarrier): ReuseHit and Reused
	// are its answer, and the reuse cache need not be asked again.
	ReuseAsked bool
	ReuseHit   bool
	Reused     V
}

// BatchClaimer is a Dedup that claims many requests in one round trip.
type BatchClaimer[V any] interface {
	// ClaimAll is Claim for each request, in order: a later request with
	// the key of an earlier one is its duplicate.
	ClaimAll(reqs []ClaimRequest) []ClaimResult[V]
}

var _ BatchClaimer[int] = (*RedisDedup[int])(nil)

// ClaimAll claims reqs with one pipeline of claim scripts. A request
// whose key holds another process's claim (or any answer but "claimed"
// and an outcome) takes Claim's path alone, as does a later duplicate of
// a key of this batch.
func (s *RedisDedup[V]) ClaimAll(reqs []ClaimRequest) []ClaimResult[V] {
	res := make([]ClaimResult[V], len(reqs))
	if s.down.Load() {
		for i := range res {
			res[i].Err = errDown
		}
		return res
	}
	type sent struct {
		i     int
		k     string
		claim string
		cmd   *redis.Cmd
		keep  int64 // the claim's PXAT
		reuse reuseLookup
		asked bool
		// slow, when set, is the claim waiting for its replicas
		// (redis_confirm.go).
		slow *unconfirmed
	}
	var (
		batch []sent
		alone []int // Claim's path, after the pipeline
		seen  = make(map[string]bool, len(reqs))
	)
	s.mu.Lock()
	for i, r := range reqs {
		k := redisKey(r.Key)
		if seen[k] || s.local[k] != nil || hasKey(s.unsettled, k) {
			alone = append(alone, i)
		} else {
			batch = append(batch, sent{i: i, k: k, claim: formatRedisValue(claimMark, r.Expiry, s.instance)})
		}
		seen[k] = true
	}
	s.mu.Unlock()
	if len(batch) > 0 {
		sentAt := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
		pipe := s.rdb.Pipeline()
		for j := range batch {
			b := &batch[j]
			b.keep = keepUntil(reqs[b.i].Expiry).UnixMilli()
			b.cmd = claimScript.EvalSha(ctx, pipe, []string{b.k}, b.claim, "", b.keep)
			b.reuse, b.asked = s.lookupReuse(ctx, pipe, reqs[b.i].Reuse, &res[b.i])
		}
		w := s.waitCmd(ctx, pipe)
		_, err := pipe.Exec(ctx)
		werr := s.waited(w)
		cancel()
		if err != nil && !isScriptMissing(err) && allFailed(batch, func(b sent) error { return b.cmd.Err() }) {
			s.markDown(err)
			for _, b := range batch {
				s.release(b.k, b.claim, keepUntil(reqs[b.i].Expiry)) // Redis may hold it all the same
				res[b.i].Err = unavailable("the claim", b.cmd.Err())
			}
			batch = nil
		}
		if werr != nil {
			var slow []*unconfirmed
			for j := range batch {
				b := &batch[j]
				if held, err := b.cmd.Text(); err == nil && held == "" {
					b.slow = &unconfirmed{k: b.k, claim: b.claim, keep: b.keep, until: confirmUntil(sentAt, reqs[b.i].Expiry), err: werr}
					slow = append(slow, b.slow)
				}
			}
			s.confirm(slow)
		}
		for _, b := range batch {
			held, err := b.cmd.Text()
			switch {
			case err == nil && held == "" && b.slow != nil && b.slow.err != nil:
				// Claimed, but no replica confirmed it: not run.
				s.release(b.k, b.claim, keepUntil(reqs[b.i].Expiry))
				s.markDown(b.slow.err)
				res[b.i].Err = unavailable("the claim", b.slow.err)
			case err == nil && held == "":
				e := &Entry[V]{key: reqs[b.i].Key, expiry: reqs[b.i].Expiry, done: make(chan struct{})}
				s.track(b.k, &redisEntry[V]{entry: e, claim: b.claim, idempotent: reqs[b.i].Idempotent, first: true})
				res[b.i].Entry, res[b.i].First = e, true
				if b.asked {
					s.reuseAnswered(b.reuse, &res[b.i])
				}
			case err == nil && strings.HasPrefix(held, string(outcomeMark)):
				hv, ok := parseRedisValue(held)
				v, derr := s.cfg.Decode([]byte(hv.rest))
				if !ok || derr != nil {
					res[b.i].Err = fmt.Errorf("dedup store: key %s holds %.20q, not an outcome: %v", b.k, held, derr)
					continue
				}
				e := &Entry[V]{key: reqs[b.i].Key, expiry: hv.expiry, done: make(chan struct{}), value: v}
				close(e.done)
				res[b.i] = ClaimResult[V]{Entry: e}
			default: // a claim held elsewhere, the script not loaded yet, …
				res[b.i] = ClaimResult[V]{}
				alone = append(alone, b.i)
			}
		}
	}
	// In order: a duplicate of this batch finds its original tracked.
	slices.Sort(alone)
	for _, i := range alone {
		r := reqs[i]
		e, first, err := s.Claim(r.Invoker, r.Key, r.Expiry, r.Idempotent)
		res[i] = ClaimResult[V]{Entry: e, First: first, Err: err}
	}
	return res
}

func hasKey[M ~map[string]T, T any](m M, k string) bool {
	_, ok := m[k]
	return ok
}

func allFailed[T any](xs []T, err func(T) error) bool {
	for _, x := range xs {
		if err(x) == nil {
			return false
		}
	}
	return true
}

func isScriptMissing(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") }

// settleOp is one outcome to store in place of a claim (see settle).
type settleOp struct {
	k, claim, value string
	keep            time.Time
	share           *reuseShare // a reply for the reuse cache, stored with it
	// commit, when set, is a call's state writes guarded by the claim
	// (CommitOutcome): its script replaces the settle's; cmd is its
	// reply, werr its WAIT's error.
	commit *stateCall
	cmd    *redis.Cmd
	werr   error
	held   string // the outcome the key holds after it
	err    error
	done   chan struct{}
}

// groupCommit runs the settle operations of concurrent callers in
// pipelines: a caller whose operation finds no pipeline out sends it, and
// then, in one more pipeline each time, whatever the others queued
// meanwhile, until none is left; the others wait for theirs.
type groupCommit struct {
	mu      sync.Mutex
	queued  []*settleOp
	sending bool
}

func (g *groupCommit) do(op *settleOp, send func([]*settleOp)) {
	op.done = make(chan struct{})
	g.mu.Lock()
	g.queued = append(g.queued, op)
	if g.sending {
		g.mu.Unlock()
		<-op.done
		return
	}
	g.sending = true
	for len(g.queued) > 0 {
		batch := g.queued
		g.queued = nil
		g.mu.Unlock()
		send(batch)
		for _, o := range batch {
			close(o.done)
		}
		g.mu.Lock()
	}
	g.sending = false
	g.mu.Unlock()
}

// sendSettles stores a pipeline of outcomes, with its WAIT (an outcome
// no replica confirmed fails: it is stored again later); an operation
// whose script was not loaded (Redis restarted) is sent again alone,
// with the script.
func (s *RedisDedup[V]) sendSettles(ops []*settleOp) {
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(ops))
	for i, o := range ops {
		if o.commit != nil {
			cmds[i] = stateCommitScript.EvalSha(ctx, pipe, o.commit.keys, o.commit.args...)
			continue
		}
		cmds[i] = settleScript.EvalSha(ctx, pipe, []string{o.k}, o.claim, o.value, o.keep.UnixMilli())
		if o.share != nil {
			o.share.set = pipe.Set(ctx, o.share.key, o.share.value, o.share.ttl)
		}
	}
	w := s.waitCmd(ctx, pipe)
	_, _ = pipe.Exec(ctx)
	werr := s.waited(w)
	for i, o := range ops {
		if o.commit != nil {
			o.cmd, o.werr = cmds[i], werr
			if isScriptMissing(o.cmd.Err()) {
				o.cmd, o.werr = s.evalOnce(ctx, stateCommitScript, true, o.commit.keys, o.commit.args...)
			}
			continue
		}
		o.held, o.err = cmds[i].Text()
		switch {
		case isScriptMissing(o.err):
			o.held, o.err = s.runScript(ctx, settleScript, o.k, o.claim, o.value, o.keep.UnixMilli())
		case o.err == nil && werr != nil:
			o.err = werr
		}
	}
}
