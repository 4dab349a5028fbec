package cache

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Durability of claims and outcomes through a failover. Redis replicates
// asynchronously: a primary that fails right after a write may take it
// with it, and the replica Sentinel promotes never saw it. A lost claim
// lets a replay run a request again; a lost outcome leaves a claim whose
// owner no longer knows its request. So with replicas (Sentinel's
// default, RedisConfig.Replicas), every pipeline that writes claims or
// outcomes ends with WAIT: a claim counts only once a replica holds it
// (a slow replica is waited for a while, redis_confirm.go; else the
// request is refused, not run, and the claim released), and an
// outcome or a state commit is taken for stored only then (a slow
// replica is waited for as a claim's is, redis_confirm_write.go; past
// that an outcome is kept here and stored again until a replica
// confirms it, while the request's reply goes out — its claim,
// confirmed, keeps every replay from running it — and a commit's answer
// is taken for lost and settled).
// A pipeline runs on one connection, so its WAIT covers all its writes.
//
// Through Sentinel by default (Replicas 0), the store waits for one
// replica while the primary has one connected (the heartbeat reads INFO
// replication), and for none while it has none: a primary alone has no
// replica for Sentinel to promote in its place, so a failover cannot
// lose what it took (a primary that fails alone loses its writes as a
// single Redis does). So the service goes on with one replica left after
// a failover. A replica connected but still syncing counts (Sentinel may
// promote it): until it is in sync, WAIT fails, and claims wait for it
// (redisConfirmMax), then are refused (503, not run). Replicas > 0 waits
// for that many always: with fewer online, requests to non-idempotent
// commands are refused (503, not run). The
// Redis setting min-replicas-to-write makes the primary itself refuse
// writes without replicas (docs/operations.md).

// redisWaitTimeout bounds a WAIT: a replica that takes longer is taken
// for lagging, and the writes for unconfirmed.
const redisWaitTimeout = 500 * time.Millisecond

// redisLink is a store's way to Redis: its client, and how many replicas
// its writes wait for (WAIT): all of replicas if strict, else at most as
// many as the primary has connected (online, read by the dedup store's
// heartbeat, which recount asks to read again at once). The dedup store
// and the state store on its Redis (RedisDedup.State) share one.
type redisLink struct {
	rdb      redis.UniversalClient
	cluster  bool // a Redis Cluster: a script's keys are in one slot
	replicas int
	strict   bool
	online   atomic.Int32
	recount  atomic.Bool
	// down is set when Redis failed to answer, and cleared by the dedup
	// store's next heartbeat that gets through: while it is set, a claim
	// or a state call fails at once instead of making each wait for a
	// timeout. onDown sets it (RedisDedup.markDown).
	down   atomic.Bool
	onDown func(error)
	// upSince is when the store was last found up after being down (unix
	// ns): see inGrace.
	upSince atomic.Int64
}

// failed tells the link a call failed with err: when Redis did not
// answer, it is down.
func (s *redisLink) failed(err error) {
	if redisDown(err) && s.onDown != nil {
		s.onDown(err)
	}
}

// waitingFor is how many replicas a WAIT asks for now.
func (s *redisLink) waitingFor() int {
	if s.strict {
		return s.replicas
	}
	return min(s.replicas, int(s.online.Load()))
}

// waitCmd adds a WAIT (waitingFor) to pipe; nil when s waits for none.
func (s *redisLink) waitCmd(ctx context.Context, pipe redis.Pipeliner) *waitOp {
	n := s.waitingFor()
	if n <= 0 {
		return nil
	}
	return &waitOp{n: n, cmd: pipe.Do(ctx, "WAIT", n, redisWaitTimeout.Milliseconds())}
}

type waitOp struct {
	n   int
	cmd *redis.Cmd
}

// waited is the error of a pipeline's WAIT: nil when enough replicas
// confirmed its writes (or none were asked for). A WAIT that falls short
// has the heartbeat count the replicas online again at once (a failover
// may have left none).
func (s *redisLink) waited(w *waitOp) error {
	if w == nil {
		return nil
	}
	n, err := w.cmd.Int64()
	if err != nil {
		return err
	}
	if n < int64(w.n) {
		s.recount.Store(true)
		return fmt.Errorf("%w: %d of %d replicas", errNotReplicated, n, w.n)
	}
	return nil
}

// connectedReplicas counts the replicas connected, in sync or syncing,
// in the text of INFO replication ("slaveN:ip=…,port=…,state=…,…").
func connectedReplicas(info string) int {
	n := 0
	for _, line := range strings.Split(info, "\n") {
		if strings.HasPrefix(line, "slave") && strings.Contains(line, ":ip=") {
			n++
		}
	}
	return n
}

// runScript runs script on key with args, followed by WAIT (waitCmd),
// in one round trip; it loads the script when Redis lacks it.
func (s *redisLink) runScript(ctx context.Context, script *redis.Script, k string, args ...any) (string, error) {
	cmd, werr := s.evalWaited(ctx, script, []string{k}, args...)
	held, err := cmd.Text()
	if err != nil {
		return "", err
	}
	return held, werr
}

// evalWaited runs script on keys with args, followed by WAIT (waitCmd),
// in one round trip, loading the script when Redis lacks it; it returns
// the script's command and the WAIT's error.
func (s *redisLink) evalWaited(ctx context.Context, script *redis.Script, keys []string, args ...any) (*redis.Cmd, error) {
	cmd, werr := s.evalOnce(ctx, script, false, keys, args...)
	if isScriptMissing(cmd.Err()) {
		return s.evalOnce(ctx, script, true, keys, args...)
	}
	return cmd, werr
}

// evalOnce is evalWaited by the script's digest, or with its text (load).
func (s *redisLink) evalOnce(ctx context.Context, script *redis.Script, load bool, keys []string, args ...any) (*redis.Cmd, error) {
	pipe := s.rdb.Pipeline()
	var cmd *redis.Cmd
	if load {
		cmd = script.Eval(ctx, pipe, keys, args...)
	} else {
		cmd = script.EvalSha(ctx, pipe, keys, args...)
	}
	w := s.waitCmd(ctx, pipe)
	_, _ = pipe.Exec(ctx)
	if cmd.Err() != nil {
		return cmd, nil
	}
	return cmd, s.waited(w)
}

// releaseScript deletes KEYS[1] if it holds the claim ARGV[1].
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

// A claim whose answer this process did not get (Redis did not answer in
// time, or no replica confirmed it) may be in Redis all the same: the
// request was refused "not run", and a duplicate sent again to another
// process would find the claim of a live owner that knows nothing of it
// and wait in vain. So such a claim is released: deleted, if it still
// holds this claim, as soon as Redis answers (the duplicates' loop, every
// redisPollInterval), with the same WAIT as the writes. A duplicate that
// waited on it finds the key gone and is answered "send it again"
// (RedisConfig.Released); sent again, it is claimed and runs once.

// Bounds of the releases: at most maxReleasing queued (beyond, a claim
// is left to its expiry: its duplicates elsewhere wait until then), at
// most releaseBatch sent in one round trip.
const (
	maxReleasing = 100_000
	releaseBatch = 1000
)

// release queues the release of claim, held (maybe) by key k, kept
// until until.
func (s *RedisDedup[V]) release(k, claim string, until time.Time) {
	s.mu.Lock()
	full := len(s.releasing) >= maxReleasing
	if !full {
		s.releasing[k] = pendingRelease{claim: claim, until: until}
	}
	s.mu.Unlock()
	if !full {
		return
	}
	if ok, leftOut := s.releaseFull.Allow(time.Now()); ok {
		s.log.Warn("dedup store: too many claims to release: this one is left to its request's expiry", "queued", maxReleasing, "left_out", leftOut)
	}
}

type pendingRelease struct {
	claim string
	until time.Time
}

// forget drops a queued release of k: its claim is being taken back by a
// receipt here (Claim), which must not lose it to the release. Releases
// are sent under relMu, so once forget returns none of k is in flight.
func (s *RedisDedup[V]) forget(k string) {
	s.relMu.Lock()
	defer s.relMu.Unlock()
	s.mu.Lock()
	delete(s.releasing, k)
	s.mu.Unlock()
}

// releaseQueued sends queued releases (releaseBatch at most) in one
// pipeline, unless the store is down (the heartbeat finds it back);
// those Redis confirmed, or whose keys are past their keep-until, are
// done.
func (s *RedisDedup[V]) releaseQueued() {
	if s.down.Load() {
		return
	}
	s.relMu.Lock()
	defer s.relMu.Unlock()
	s.mu.Lock()
	pending := make(map[string]pendingRelease, min(len(s.releasing), releaseBatch))
	for k, r := range s.releasing {
		if len(pending) == releaseBatch {
			break
		}
		pending[k] = r
	}
	s.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	var cmds map[string]*redis.Cmd
	var werr error
	// By the script's digest (not its text for each key), loaded when
	// Redis lacks it, as runScript does.
	for _, load := range []bool{false, true} {
		pipe := s.rdb.Pipeline()
		cmds = make(map[string]*redis.Cmd, len(pending))
		for k, r := range pending {
			if load {
				cmds[k] = releaseScript.Eval(ctx, pipe, []string{k}, r.claim)
			} else {
				cmds[k] = releaseScript.EvalSha(ctx, pipe, []string{k}, r.claim)
			}
		}
		w := s.waitCmd(ctx, pipe)
		_, _ = pipe.Exec(ctx)
		werr = s.waited(w)
		if load || !anyScriptMissing(cmds) {
			break
		}
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, cmd := range cmds {
		if (cmd.Err() == nil && werr == nil) || now.After(pending[k].until) {
			delete(s.releasing, k)
		}
	}
}

// anyScriptMissing reports whether one of cmds failed for want of its
// script (NOSCRIPT): the pipeline is sent again with the script's text.
func anyScriptMissing(cmds map[string]*redis.Cmd) bool {
	for _, c := range cmds {
		if isScriptMissing(c.Err()) {
			return true
		}
	}
	return false
}
