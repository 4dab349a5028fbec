package cache

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/internal/logx"
	"github.com/cmdhost/cmdhost/internal/ratelog"
)

// RedisDedup is a dedup store in Redis, shared by every executor that
// names the same Redis: replicas of a host in a share group, and a host
// and its restarts. A request redelivered to another replica, or to the
// restarted host, after it was answered is answered from the store, not
// run again.
//
// One Redis key per request (its correlation data and response topic,
// hashed), holding either a claim or the outcome:
//
//   - The first receipt claims the key atomically (SET NX), naming this
//     process (its instance: the client id and a random suffix, new at
//     every start). The claim lives until the request's expiry.
//   - Its outcome, whatever it is (errors, 408, 499 included), replaces
//     the claim before the executor acks the request (Complete), and is
//     kept until the entry's keep-until.
//   - A duplicate anywhere finds the outcome, or waits for it: one loop
//     per process reads the keys its duplicates wait on every
//     redisPollInterval, in one round trip.
//   - Each process keeps a heartbeat key while it lives (renewed every
//     redisHeartbeat, gone redisHeartbeatTTL after its last renewal). A
//     claim whose process has no heartbeat will never get an outcome: an
//     idempotent request is claimed again and runs again; a
//     non-idempotent one gets RedisConfig.OwnerGone's outcome, stored in
//     place of the claim (so every duplicate gets the same), and never
//     runs a second time.
//
// Redis unreachable: Claim fails with ErrStoreUnavailable and records
// nothing (a claim Redis may have taken unanswered is released:
// redis_durable.go).
//
// The keys spread over the slots of a Redis Cluster (each is its own
// hash, no hash tag): each script reads and writes its one key, and the
// reads of many keys are pipelines of GETs, which the cluster client
// splits by node.
type RedisDedup[V any] struct {
	cfg RedisConfig[V]
	// redisLink is the client and the replicas its writes wait for
	// (redis_durable.go), shared with the state store on this Redis
	// (State).
	*redisLink
	instance string
	log      *slog.Logger

	mu sync.Mutex
	// local holds the entries of this process: first receipts not yet
	// completed and duplicates waiting on another process, by Redis key.
	local map[string]*redisEntry[V]
	// unsettled holds the outcomes of this process's first receipts that
	// Redis could not take (it was down): the duplicates' loop stores
	// them when it is back, and a duplicate here gets them meanwhile.
	unsettled map[string]unsettledOutcome[V]
	// releasing holds the claims to release, by key (release).
	releasing map[string]pendingRelease
	// relMu is held while releases are sent (forget).
	relMu sync.Mutex
	// releaseFull bounds the warnings of a full releasing.
	releaseFull ratelog.Limiter
	// alive caches the owners found alive by the duplicates' loop, to
	// the time they were checked: each owner is checked once per
	// redisOwnerCheck, however many duplicates wait on it.
	alive map[string]time.Time

	// settles batches the outcomes stored concurrently.
	settles groupCommit
	// reuse, when set, is the reuse cache whose calls the store carries
	// (redis_carry.go).
	reuse *RedisReuse[V]
	// state, when made (State), is the state store in this Redis, whose
	// writes the outcomes' scripts carry (redis_effects.go).
	state *RedisState

	stop chan struct{}
	done sync.WaitGroup
}

// RedisConfig configures a RedisDedup.
type RedisConfig[V any] struct {
	// URL is the Redis server: redis://[USER@]HOST:PORT/DB, or rediss://
	// over TLS; redis+sentinel://[USER@]HOST:PORT[,HOST:PORT…]/MASTER[/DB]
	// names the Sentinels of a master (the client follows failovers),
	// redis-cluster://[USER@]HOST:PORT[,HOST:PORT…] nodes of a Redis
	// Cluster (rediss+sentinel://, rediss-cluster:// over TLS). Its user
	// is the Redis ACL user (none: the default user); the Sentinels take
	// no password. Errors and logs show it without its password (package
	// redact).
	URL string
	// TLS, when set, is the TLS configuration of a rediss URL (its
	// roots, its client certificate); its ServerName defaults to the
	// URL's host (with several hosts, to the host each connection dials).
	// nil: the system's roots and no client certificate.
	TLS *tls.Config
	// Replicas is how many replicas must confirm a claim or an outcome
	// (WAIT) before it counts (redis_durable.go): 0, the default, is 1
	// through Sentinel and none otherwise; setting.Off (-1): none. A
	// cluster takes none (WAIT has no key to route by).
	Replicas int
	// Password, when set, returns the password of the URL's user at each
	// new connection, so that a password rotated in its file is used by
	// the next connection without a restart; it replaces a password in
	// the URL. Its error fails that connection and is reported as it is:
	// it must not hold the password.
	Password func() (string, error)
	// Name is this process's name in its claims (the MQTT client id); a
	// random suffix makes each start a new instance.
	Name string
	// Encode and Decode turn outcomes into bytes and back.
	Encode func(V) ([]byte, error)
	Decode func([]byte) (V, error)
	// OwnerGone is the outcome of a request whose first receipt's
	// process stopped without storing one. A non-idempotent request's is
	// stored: every duplicate gets it, and the request never runs again.
	// An idempotent request's goes only to the duplicates waiting then
	// (it should say "send it again"): sent again, the request is claimed
	// anew and runs.
	OwnerGone func(idempotent bool) V
	// Released is the outcome of a duplicate whose first receipt's claim
	// was released unrun (redis_durable.go): it should say "send it
	// again". nil: OwnerGone(true).
	Released func() V
	// Logger receives the store's troubles; nil discards them.
	Logger *slog.Logger
}

// Timing of the shared store.
const (
	redisPollInterval = 20 * time.Millisecond
	redisHeartbeat    = time.Second
	redisHeartbeatTTL = 3 * time.Second
	redisOpTimeout    = 2 * time.Second
	redisKeyPrefix    = "cmdhost:dedup:"
	redisOwnerPrefix  = "cmdhost:owner:"
	// redisDownProbe is how often a heartbeat tries while the store is
	// down: it is back this soon after Redis (or the new primary) is.
	redisDownProbe = 100 * time.Millisecond
	// redisOwnerCheck is how long an owner found alive is taken for alive
	// by the duplicates' loop (its heartbeat lives redisHeartbeatTTL).
	redisOwnerCheck = 250 * time.Millisecond
)

// The values of a request's key: a claim or an outcome, each with the
// first receipt's request expiry (unix ms) — "C<expiry>:<instance>",
// "R<expiry>:<outcome>" — so that a duplicate anywhere knows when the
// request it repeats expired. A key is kept one request window past that
// expiry (as DedupStore keeps its entries): a duplicate arriving then is
// dead on arrival, not a new request.
const (
	claimMark   = 'C'
	outcomeMark = 'R'
)

// redisValue is a key's value parsed.
type redisValue struct {
	mark   byte
	expiry time.Time
	rest   string // the instance of a claim, the encoded outcome
}

func parseRedisValue(v string) (redisValue, bool) {
	if len(v) < 2 || (v[0] != claimMark && v[0] != outcomeMark) {
		return redisValue{}, false
	}
	ms, rest, ok := strings.Cut(v[1:], ":")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil {
		return redisValue{}, false
	}
	return redisValue{mark: v[0], expiry: time.UnixMilli(n), rest: rest}, true
}

func formatRedisValue(mark byte, expiry time.Time, rest string) string {
	return string(mark) + strconv.FormatInt(expiry.UnixMilli(), 10) + ":" + rest
}

// keepUntil is how long a key of a request expiring at expiry is kept:
// one request window (from now) past it.
func keepUntil(expiry time.Time) time.Time { return expiry.Add(time.Until(expiry)) }

// unsettledOutcome is an outcome still to store in place of claim; or,
// with resolve, a commit whose answer was lost (CommitOutcome): resolve
// settles it, and entry is done then with the outcome it found (v when
// it cannot until keepTo).
type unsettledOutcome[V any] struct {
	claim          string
	v              V
	expiry, keepTo time.Time
	entry          *Entry[V]
	resolve        func() (V, error)
}

// redisEntry is an entry of this process with what the store needs to
// finish it.
type redisEntry[V any] struct {
	entry      *Entry[V]
	claim      string // the claim value this process wrote or waits on
	idempotent bool
	first      bool // this process's own first receipt
	settling   bool // its outcome is being stored (complete)
}

// NewRedisDedup connects to cfg.URL, checks that Redis answers, readies
// the store (prepare: its scripts, its replicas confirming a write), and
// starts the heartbeat and the duplicates' loop.
func NewRedisDedup[V any](cfg RedisConfig[V]) (*RedisDedup[V], error) {
	conn := redisConn{url: cfg.URL, tls: cfg.TLS, password: cfg.Password}
	rdb, topology, err := newRedisClient(conn)
	if err != nil {
		return nil, fmt.Errorf("dedup store %s: %w", conn.redacted(), err)
	}
	replicas, strict := cfg.Replicas, cfg.Replicas > 0
	switch {
	case replicas == 0 && topology == redisSentinel:
		replicas = 1
	case replicas > 0 && topology == redisCluster:
		_ = rdb.Close()
		return nil, fmt.Errorf("dedup store %s: a cluster takes no Replicas to wait for", conn.redacted())
	case replicas < 0:
		replicas = 0
	}
	if cfg.Released == nil {
		cfg.Released = func() V { return cfg.OwnerGone(true) }
	}
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return nil, err
	}
	link := &redisLink{rdb: rdb, cluster: topology == redisCluster, replicas: replicas, strict: strict}
	s := &RedisDedup[V]{cfg: cfg, redisLink: link, instance: cfg.Name + "/" + hex.EncodeToString(suffix[:]),
		log: logx.OrDiscard(cfg.Logger), local: map[string]*redisEntry[V]{}, unsettled: map[string]unsettledOutcome[V]{},
		releasing: map[string]pendingRelease{}, releaseFull: ratelog.Limiter{Interval: time.Second}, alive: map[string]time.Time{}, stop: make(chan struct{})}
	link.onDown = s.markDown
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	err = s.beat(ctx)
	if err == nil {
		err = s.prepare()
	}
	if err != nil {
		_ = s.rdb.Close()
		return nil, fmt.Errorf("dedup store %s: %w%s", conn.redacted(), err, conn.hint(err))
	}
	s.done.Add(2)
	go s.heartbeat()
	go s.pollWaiters()
	return s, nil
}

// Close stops the heartbeat (other processes take this one for gone
// once its heartbeat expires) and the duplicates' loop.
func (s *RedisDedup[V]) Close() {
	close(s.stop)
	s.done.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	_ = s.rdb.Del(ctx, redisOwnerPrefix+s.instance).Err()
	_ = s.rdb.Close()
}

// redisKey is the Redis key of a request.
func redisKey(k Key) string {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(k.Correlation)))
	h.Write(n[:])
	h.Write([]byte(k.Correlation))
	h.Write([]byte(k.ResponseTopic))
	return redisKeyPrefix + hex.EncodeToString(h.Sum(nil))
}

// beat renews the heartbeat, and with replicas to wait for
// (redis_durable.go) reads how many the primary has connected, in the
// same round trip.
func (s *RedisDedup[V]) beat(ctx context.Context) error {
	if s.replicas == 0 {
		return s.rdb.Set(ctx, redisOwnerPrefix+s.instance, "1", redisHeartbeatTTL).Err()
	}
	pipe := s.rdb.Pipeline()
	set := pipe.Set(ctx, redisOwnerPrefix+s.instance, "1", redisHeartbeatTTL)
	info := pipe.Info(ctx, "replication")
	_, _ = pipe.Exec(ctx)
	if err := set.Err(); err != nil {
		return err
	}
	if text, err := info.Result(); err == nil {
		s.online.Store(int32(connectedReplicas(text)))
	}
	return nil
}

// heartbeat renews this process's heartbeat every redisHeartbeat, and
// every redisDownProbe while the store is down (the first that gets
// through ends it).
func (s *RedisDedup[V]) heartbeat() {
	var last time.Time
	s.every(redisDownProbe, func() {
		if !s.down.Load() && time.Since(last) < redisHeartbeat && !s.recount.Swap(false) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
		defer cancel()
		err := s.beat(ctx)
		switch {
		case err == nil:
			last = time.Now()
			s.markUp()
		case redisDown(err):
			if !s.down.Swap(true) {
				s.log.Warn("dedup store: Redis did not answer the heartbeat: requests to non-idempotent commands are refused (503, not run) until it does", "err", err)
			}
		case redisFull(err):
			s.log.Warn("dedup store: Redis is full (maxmemory): it refused the heartbeat; requests to non-idempotent commands are refused (503, not run) until memory is freed or maxmemory raised", "err", err)
		default:
			s.log.Warn("dedup store: Redis refused the heartbeat", "err", err)
		}
	})
}

// markDown marks the store down when err means Redis did not answer.
func (s *RedisDedup[V]) markDown(err error) {
	if redisDown(err) && !s.down.Swap(true) {
		s.log.Warn("dedup store: Redis did not answer: requests to non-idempotent commands are refused (503, not run) until a heartbeat gets through", "err", err)
	}
}

// markUp ends the store's being down: Redis answered.
func (s *RedisDedup[V]) markUp() {
	if s.down.Swap(false) {
		s.upSince.Store(time.Now().UnixNano())
		s.log.Info("dedup store: Redis answers again")
	}
}

// errDown is Claim's error while the store is down.
var errDown = fmt.Errorf("%w: Redis did not answer; the next heartbeat tries again", ErrStoreUnavailable)

// every calls f every d until Close.
func (s *RedisDedup[V]) every(d time.Duration, f func()) {
	defer s.done.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			f()
		}
	}
}

// claimScript sets KEYS[1] to ARGV[1] (a claim), kept until ARGV[3]
// (unix ms), unless it holds a value; then, or when it held ARGV[2] (a
// claim of a process that is gone, taken over), it returns ""; else it
// keeps the key at least until ARGV[3] (a duplicate with a later expiry
// protects it longer, as in DedupStore) and returns the value held.
var claimScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == false or (ARGV[2] ~= '' and v == ARGV[2]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[3])
  return ''
end
redis.call('PEXPIREAT', KEYS[1], ARGV[3], 'GT')
return v`)

// settleScript replaces the claim ARGV[1] held by KEYS[1] (or nothing)
// with the outcome ARGV[2], kept until ARGV[3] (unix ms), and returns the
// value KEYS[1] holds then: an outcome stored first by anyone wins. A
// value found is written again, unchanged, so that the WAIT after the
// script covers what it returns on this primary, whichever connection
// runs it (redis_confirm_write.go): an outcome stored by an earlier try
// whose WAIT fell short counts once a replica confirms this one.
var settleScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == false or v == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
  return ARGV[2]
end
redis.call('SET', KEYS[1], v, 'KEEPTTL')
return v`)

// Claim claims key in Redis for this process (see RedisDedup).
func (s *RedisDedup[V]) Claim(_ string, key Key, expiry time.Time, idempotent bool) (*Entry[V], bool, error) {
	k := redisKey(key)
	s.mu.Lock()
	if le := s.local[k]; le != nil { // a duplicate of a receipt this process holds
		s.mu.Unlock()
		return le.entry, false, nil
	}
	if u, ok := s.unsettled[k]; ok { // its outcome waits here for Redis
		s.mu.Unlock()
		e := &Entry[V]{key: key, expiry: u.expiry, done: make(chan struct{}), value: u.v}
		close(e.done)
		return e, false, nil
	}
	s.mu.Unlock()
	if s.down.Load() {
		return nil, false, errDown
	}

	claim := formatRedisValue(claimMark, expiry, s.instance)
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	var gone string // a claim of a gone process, to take over
	for range 3 {
		sent, keep := time.Now(), keepUntil(expiry).UnixMilli()
		held, err := s.runScript(ctx, claimScript, k, claim, gone, keep)
		if held == "" && errors.Is(err, errNotReplicated) { // wait for a slow replica (redis_confirm.go)
			u := &unconfirmed{k: k, claim: claim, keep: keep, until: confirmUntil(sent, expiry), err: err}
			s.confirm([]*unconfirmed{u})
			err = u.err
		}
		if err != nil {
			// Redis may hold the claim all the same: release it.
			s.release(k, claim, keepUntil(expiry))
			s.markDown(err)
			return nil, false, unavailable("the claim", err)
		}
		if held == "" {
			e := &Entry[V]{key: key, expiry: expiry, done: make(chan struct{})}
			s.track(k, &redisEntry[V]{entry: e, claim: claim, idempotent: idempotent, first: true})
			return e, true, nil
		}
		hv, ok := parseRedisValue(held)
		if !ok {
			return nil, false, fmt.Errorf("dedup store: key %s holds %.20q, not a claim or an outcome", k, held)
		}
		// The entry of a duplicate: the first receipt's expiry.
		e := &Entry[V]{key: key, expiry: hv.expiry, done: make(chan struct{})}
		if hv.mark == outcomeMark {
			v, err := s.cfg.Decode([]byte(hv.rest))
			if err != nil {
				return nil, false, fmt.Errorf("dedup store: a stored outcome: %w", err)
			}
			e.value = v
			close(e.done)
			return e, false, nil
		}
		if hv.rest == s.instance {
			// This process's claim with no receipt here: a Claim whose
			// answer Redis did not send (it went down after writing), so
			// the request was refused, not run. It is this receipt's.
			s.forget(k)
			gone = held
			continue
		}
		alive, err := s.ownerAlive(ctx, hv)
		if err != nil {
			s.markDown(err)
			return nil, false, unavailable("checking the owner of a claim", err)
		}
		switch {
		case alive:
			return s.wait(k, e, held, idempotent), false, nil
		case idempotent:
			gone = held // its process is gone: claim it again and run
			continue
		}
		v, err := s.settle(k, held, s.cfg.OwnerGone(false), hv.expiry, keepUntil(hv.expiry))
		if err != nil {
			return nil, false, err
		}
		e.value = v
		close(e.done)
		return e, false, nil
	}
	return nil, false, fmt.Errorf("%w: the claim of an idempotent request keeps changing hands", ErrStoreUnavailable)
}

// ownerAlive reports whether the process of the claim v still has a
// heartbeat.
func (s *RedisDedup[V]) ownerAlive(ctx context.Context, v redisValue) (bool, error) {
	if s.inGrace() {
		return true, nil
	}
	n, err := s.rdb.Exists(ctx, redisOwnerPrefix+v.rest).Result()
	return n > 0, err
}

// inGrace reports whether Redis came back less than redisHeartbeatTTL
// ago: every process lost it too (a failover, a restart), and their
// heartbeats, which may have expired meanwhile, are not renewed yet. No
// owner is taken for gone then.
func (s *RedisDedup[V]) inGrace() bool {
	return time.Since(time.Unix(0, s.upSince.Load())) < redisHeartbeatTTL
}

// settle stores v, for a request expiring at expiry, in place of the
// claim held by key k (if it still holds it), kept until keep, and
// returns the outcome k holds then. Concurrent settles go to Redis
// together (groupCommit). An outcome no replica confirmed in its WAIT
// fails (its callers store it again later).
func (s *RedisDedup[V]) settle(k, claim string, v V, expiry, keep time.Time) (V, error) {
	return s.settleSharing(k, claim, v, expiry, keep, nil, false)
}

// settleSharing is settle, storing share (a reply for the reuse cache)
// in the same round trip. With confirm (Complete: its request's reply
// waits for it), an outcome the primary took and no replica confirmed in
// its WAIT is confirmed in rounds (redis_confirm_write.go) up to
// redisConfirmMax or expiry before it fails.
func (s *RedisDedup[V]) settleSharing(k, claim string, v V, expiry, keep time.Time, share *reuseShare, confirm bool) (V, error) {
	var zero V
	b, err := s.cfg.Encode(v)
	if err != nil {
		return zero, fmt.Errorf("dedup store: encoding an outcome: %w", err)
	}
	if min := time.Now().Add(time.Second); keep.Before(min) {
		keep = min // PXAT in the past would delete the key at once
	}
	op := &settleOp{k: k, claim: claim, value: formatRedisValue(outcomeMark, expiry, string(b)), keep: keep, share: share}
	sent := time.Now()
	s.settles.do(op, s.sendSettles)
	if confirm && op.held == op.value {
		op.err = s.confirmWrite(op.err, confirmUntil(sent, expiry), touch(k, func(v string) bool { return v == op.value }))
	}
	if share != nil {
		s.reuse.stored(share.set.Err())
	}
	held, err := op.held, op.err
	if err != nil {
		s.markDown(err)
		return zero, unavailable("storing an outcome", err)
	}
	s.markUp()
	hv, ok := parseRedisValue(held)
	if !ok || hv.mark != outcomeMark {
		return zero, fmt.Errorf("dedup store: key holds %.20q, not an outcome", held)
	}
	return s.cfg.Decode([]byte(hv.rest))
}

func (s *RedisDedup[V]) track(k string, le *redisEntry[V]) {
	s.mu.Lock()
	s.local[k] = le
	s.mu.Unlock()
}

// wait makes e a duplicate waiting on claim, which another live process
// holds; the duplicates' loop finishes it.
func (s *RedisDedup[V]) wait(k string, e *Entry[V], claim string, idempotent bool) *Entry[V] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if le := s.local[k]; le != nil {
		return le.entry
	}
	s.local[k] = &redisEntry[V]{entry: e, claim: claim, idempotent: idempotent}
	return e
}

// Complete stores v as the outcome of this process's first receipt e,
// replacing its claim, kept until the later of keepUntil and the
// request's expiry, and releases e's waiters here. An outcome someone
// stored first (OwnerGone, after this process was taken for gone) wins.
func (s *RedisDedup[V]) Complete(e *Entry[V], v V, keepUntil time.Time) {
	s.complete(e, v, keepUntil, nil)
}

// complete is Complete, storing share with the outcome.
func (s *RedisDedup[V]) complete(e *Entry[V], v V, keepUntil time.Time, share *reuseShare) {
	if e == nil {
		return
	}
	k := redisKey(e.key)
	s.mu.Lock()
	le := s.local[k]
	if le == nil || le.entry != e || !le.first || le.settling {
		s.mu.Unlock()
		return
	}
	// The entry stays until the outcome is stored or kept in unsettled:
	// a duplicate arriving meanwhile (a settle can take redisOpTimeout)
	// waits for it here, rather than find this process's claim with no
	// receipt for it and take it for a lost Claim's (and run it again).
	le.settling = true
	s.mu.Unlock()
	if keepUntil.Before(e.expiry) {
		keepUntil = e.expiry
	}
	stored, err := s.settleSharing(k, le.claim, v, e.expiry, keepUntil, share, true)
	s.mu.Lock()
	if err != nil {
		s.unsettled[k] = unsettledOutcome[V]{claim: le.claim, v: v, expiry: e.expiry, keepTo: keepUntil}
	} else {
		v = stored
	}
	delete(s.local, k)
	s.mu.Unlock()
	if err != nil {
		s.log.Error("dedup store: the outcome is not stored yet: it is stored again until Redis takes it", "err", err)
	}
	e.value = v
	close(e.done)
}

// Lookup returns the entry of key this process holds, or one for the
// outcome Redis holds; nil otherwise.
func (s *RedisDedup[V]) Lookup(key Key) *Entry[V] {
	k := redisKey(key)
	s.mu.Lock()
	le := s.local[k]
	s.mu.Unlock()
	if le != nil {
		return le.entry
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	held, err := s.rdb.Get(ctx, k).Result()
	hv, ok := parseRedisValue(held)
	if err != nil || !ok || hv.mark != outcomeMark {
		return nil
	}
	v, err := s.cfg.Decode([]byte(hv.rest))
	if err != nil {
		return nil
	}
	e := &Entry[V]{key: key, expiry: hv.expiry, done: make(chan struct{}), value: v}
	close(e.done)
	return e
}

// Len is the number of entries this process holds: first receipts in
// progress and duplicates waiting.
func (s *RedisDedup[V]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.local) + len(s.unsettled)
}

// Stats is zero: the outcomes are held in Redis, not in this process
// (bounded by Redis's own maxmemory; see docs/operations.md), but for
// the few Redis could not take while it was down (unsettled).
func (s *RedisDedup[V]) Stats() DedupStats { return DedupStats{} }

// settleLater stores the outcomes Complete could not, while their keys
// are kept; not while the store is down (the heartbeat finds it back).
func (s *RedisDedup[V]) settleLater() {
	if s.down.Load() {
		return
	}
	s.mu.Lock()
	pending := make(map[string]unsettledOutcome[V], len(s.unsettled))
	for k, u := range s.unsettled {
		pending[k] = u
	}
	s.mu.Unlock()
	for k, u := range pending {
		var v V
		var err error
		if u.resolve != nil {
			v, err = u.resolve()
		} else {
			_, err = s.settle(k, u.claim, u.v, u.expiry, u.keepTo)
		}
		if errors.Is(err, ErrStoreUnavailable) && time.Now().Before(u.keepTo) {
			return // still down: next tick
		}
		s.mu.Lock()
		delete(s.unsettled, k)
		if u.entry != nil {
			delete(s.local, k)
		}
		s.mu.Unlock()
		if u.entry != nil {
			if err != nil {
				s.log.Error("dedup store: a commit whose answer was lost could not be settled; its request is answered as unknown", "err", err)
				v = u.v
			}
			u.entry.value = v
			close(u.entry.done)
		}
	}
}

// pollWaiters finishes the duplicates waiting on other processes: every
// redisPollInterval, one pipeline reads their keys and checks the owners
// of the claims they wait on (each owner once, and not again for
// redisOwnerCheck once found alive); an outcome releases them, a claim
// whose process is gone is settled (see Claim). The same tick stores
// the outcomes and sends the releases that wait for Redis.
func (s *RedisDedup[V]) pollWaiters() { s.every(redisPollInterval, s.pollOnce) }

func (s *RedisDedup[V]) pollOnce() {
	s.settleLater()
	s.releaseQueued()
	now := time.Now()
	s.mu.Lock()
	var keys []string
	owners := map[string]bool{}
	for k, le := range s.local {
		if le.first {
			continue
		}
		keys = append(keys, k)
		if hv, ok := parseRedisValue(le.claim); ok && now.Sub(s.alive[hv.rest]) >= redisOwnerCheck {
			owners[hv.rest] = true
		}
	}
	for o, at := range s.alive {
		if now.Sub(at) >= redisOwnerCheck {
			delete(s.alive, o)
		}
	}
	s.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	pipe := s.rdb.Pipeline()
	gets := make([]*redis.StringCmd, len(keys))
	for i, k := range keys {
		gets[i] = pipe.Get(ctx, k)
	}
	exists := make(map[string]*redis.IntCmd, len(owners))
	for o := range owners {
		exists[o] = pipe.Exists(ctx, redisOwnerPrefix+o)
	}
	_, _ = pipe.Exec(ctx)
	gone := map[string]bool{}
	s.mu.Lock()
	for o, cmd := range exists {
		switch n, err := cmd.Result(); {
		case err != nil:
		case n > 0:
			s.alive[o] = now
		case !s.inGrace():
			gone[o] = true
		}
	}
	s.mu.Unlock()
	for i, k := range keys {
		s.mu.Lock()
		le := s.local[k]
		s.mu.Unlock()
		if le == nil {
			continue
		}
		held, err := gets[i].Result()
		if err != nil && err != redis.Nil {
			s.log.Warn("dedup store: reading the outcome a duplicate waits for", "err", err)
			continue
		}
		hv, ok := parseRedisValue(held)
		var v V
		switch {
		case ok && hv.mark == outcomeMark:
			if v, err = s.cfg.Decode([]byte(hv.rest)); err != nil {
				s.log.Error("dedup store: a stored outcome", "err", err)
				continue
			}
		case ok && hv.mark == claimMark:
			if !gone[hv.rest] || held != le.claim {
				s.mu.Lock()
				le.claim = held // a take-over's claim: its owner is checked next
				s.mu.Unlock()
				continue
			}
			if le.idempotent { // sent again, it is claimed and runs
				v = s.cfg.OwnerGone(true)
			} else if v, err = s.settle(k, held, s.cfg.OwnerGone(false), hv.expiry, keepUntil(hv.expiry)); err != nil {
				continue
			}
		case err == redis.Nil && now.Before(le.entry.expiry):
			// Released unrun (redis_durable.go) before the request
			// expired: sent again, it is claimed and runs.
			v = s.cfg.Released()
		default:
			// Gone: the request expired without an outcome.
			v = s.cfg.OwnerGone(le.idempotent)
		}
		s.mu.Lock()
		delete(s.local, k)
		s.mu.Unlock()
		le.entry.value = v
		close(le.entry.done)
	}
}

var _ Dedup[int] = (*RedisDedup[int])(nil)
