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
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/internal/logx"
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
// nothing.
type RedisDedup[V any] struct {
	cfg      RedisConfig[V]
	rdb      *redis.Client
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

	// down is set when Redis failed to answer, and cleared by the next
	// heartbeat that gets through: while it is set, Claim fails at once
	// instead of making every request wait for a timeout on the
	// executor's receive path.
	down atomic.Bool
	// settles batches the outcomes stored concurrently.
	settles groupCommit

	stop chan struct{}
	done sync.WaitGroup
}

// RedisConfig configures a RedisDedup.
type RedisConfig[V any] struct {
	// URL is the Redis server: redis://[USER@]HOST:PORT/DB, or rediss://
	// over TLS. Its user is the Redis ACL user (none: the default user).
	// Errors and logs show it without its password (package redact).
	URL string
	// TLS, when set, is the TLS configuration of a rediss:// URL (its
	// roots, its client certificate); its ServerName defaults to the
	// URL's host. nil: the system's roots and no client certificate.
	TLS *tls.Config
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

// unsettledOutcome is an outcome still to store in place of claim.
type unsettledOutcome[V any] struct {
	claim          string
	v              V
	expiry, keepTo time.Time
}

// redisEntry is an entry of this process with what the store needs to
// finish it.
type redisEntry[V any] struct {
	entry      *Entry[V]
	claim      string // the claim value this process wrote or waits on
	idempotent bool
	first      bool // this process's own first receipt
}

// NewRedisDedup connects to cfg.URL, checks that Redis answers, and
// starts the heartbeat and the duplicates' loop.
func NewRedisDedup[V any](cfg RedisConfig[V]) (*RedisDedup[V], error) {
	conn := redisConn{url: cfg.URL, tls: cfg.TLS, password: cfg.Password}
	rdb, err := newRedisClient(conn)
	if err != nil {
		return nil, fmt.Errorf("dedup store %s: %w", conn.redacted(), err)
	}
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return nil, err
	}
	s := &RedisDedup[V]{cfg: cfg, rdb: rdb, instance: cfg.Name + "/" + hex.EncodeToString(suffix[:]),
		log: logx.OrDiscard(cfg.Logger), local: map[string]*redisEntry[V]{}, unsettled: map[string]unsettledOutcome[V]{},
		stop: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	if err := s.beat(ctx); err != nil {
		_ = s.rdb.Close()
		return nil, fmt.Errorf("dedup store %s: %w", conn.redacted(), err)
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

func (s *RedisDedup[V]) beat(ctx context.Context) error {
	return s.rdb.Set(ctx, redisOwnerPrefix+s.instance, "1", redisHeartbeatTTL).Err()
}

func (s *RedisDedup[V]) heartbeat() {
	s.every(redisHeartbeat, func() {
		ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
		defer cancel()
		err := s.beat(ctx)
		if err != nil {
			s.log.Warn("dedup store: heartbeat", "err", err)
		}
		s.down.Store(err != nil)
	})
}

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
// value KEYS[1] holds then: an outcome stored first by anyone wins.
var settleScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == false or v == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
  return ARGV[2]
end
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
		return nil, false, fmt.Errorf("%w: it did not answer; the next heartbeat tries again", ErrStoreUnavailable)
	}

	claim := formatRedisValue(claimMark, expiry, s.instance)
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	var gone string // a claim of a gone process, to take over
	for range 3 {
		held, err := claimScript.Run(ctx, s.rdb, []string{k}, claim, gone, keepUntil(expiry).UnixMilli()).Text()
		if err != nil {
			s.down.Store(true)
			return nil, false, fmt.Errorf("%w: %v", ErrStoreUnavailable, err)
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
			gone = held
			continue
		}
		alive, err := s.ownerAlive(ctx, hv)
		if err != nil {
			return nil, false, fmt.Errorf("%w: %v", ErrStoreUnavailable, err)
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
	n, err := s.rdb.Exists(ctx, redisOwnerPrefix+v.rest).Result()
	return n > 0, err
}

// settle stores v, for a request expiring at expiry, in place of the
// claim held by key k (if it still holds it), kept until keep, and
// returns the outcome k holds then. Concurrent settles go to Redis
// together (groupCommit).
func (s *RedisDedup[V]) settle(k, claim string, v V, expiry, keep time.Time) (V, error) {
	var zero V
	b, err := s.cfg.Encode(v)
	if err != nil {
		return zero, fmt.Errorf("dedup store: encoding an outcome: %w", err)
	}
	if min := time.Now().Add(time.Second); keep.Before(min) {
		keep = min // PXAT in the past would delete the key at once
	}
	op := &settleOp{k: k, claim: claim, value: formatRedisValue(outcomeMark, expiry, string(b)), keep: keep}
	s.settles.do(op, s.sendSettles)
	held, err := op.held, op.err
	if err != nil {
		return zero, fmt.Errorf("%w: %v", ErrStoreUnavailable, err)
	}
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
	if e == nil {
		return
	}
	k := redisKey(e.key)
	s.mu.Lock()
	le := s.local[k]
	if le == nil || le.entry != e || !le.first {
		s.mu.Unlock()
		return
	}
	delete(s.local, k)
	s.mu.Unlock()
	if keepUntil.Before(e.expiry) {
		keepUntil = e.expiry
	}
	if stored, err := s.settle(k, le.claim, v, e.expiry, keepUntil); err != nil {
		s.log.Error("dedup store: the outcome is not stored yet: it is stored when Redis is back", "err", err)
		s.mu.Lock()
		s.unsettled[k] = unsettledOutcome[V]{claim: le.claim, v: v, expiry: e.expiry, keepTo: keepUntil}
		s.mu.Unlock()
	} else {
		v = stored
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
// are kept.
func (s *RedisDedup[V]) settleLater() {
	s.mu.Lock()
	pending := make(map[string]unsettledOutcome[V], len(s.unsettled))
	for k, u := range s.unsettled {
		pending[k] = u
	}
	s.mu.Unlock()
	for k, u := range pending {
		_, err := s.settle(k, u.claim, u.v, u.expiry, u.keepTo)
		if errors.Is(err, ErrStoreUnavailable) && time.Now().Before(u.keepTo) {
			return // still down: next tick
		}
		s.mu.Lock()
		delete(s.unsettled, k)
		s.mu.Unlock()
	}
}

// pollWaiters finishes the duplicates waiting on other processes: every
// redisPollInterval, one MGET of their keys; an outcome releases them, a
// claim whose process is gone is settled (see Claim).
func (s *RedisDedup[V]) pollWaiters() { s.every(redisPollInterval, s.pollOnce) }

func (s *RedisDedup[V]) pollOnce() {
	s.settleLater()
	s.mu.Lock()
	var keys []string
	for k, le := range s.local {
		if !le.first {
			keys = append(keys, k)
		}
	}
	s.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	vals, err := s.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		s.log.Warn("dedup store: reading the outcomes duplicates wait for", "err", err)
		return
	}
	for i, k := range keys {
		s.mu.Lock()
		le := s.local[k]
		s.mu.Unlock()
		if le == nil {
			continue
		}
		held, _ := vals[i].(string)
		hv, ok := parseRedisValue(held)
		var v V
		switch {
		case ok && hv.mark == outcomeMark:
			if v, err = s.cfg.Decode([]byte(hv.rest)); err != nil {
				s.log.Error("dedup store: a stored outcome", "err", err)
				continue
			}
		case ok && hv.mark == claimMark:
			alive, err := s.ownerAlive(ctx, hv)
			if err != nil || alive {
				s.mu.Lock()
				le.claim = held // a take-over's claim: wait for its outcome
				s.mu.Unlock()
				continue
			}
			if le.idempotent { // sent again, it is claimed and runs
				v = s.cfg.OwnerGone(true)
			} else if v, err = s.settle(k, held, s.cfg.OwnerGone(false), hv.expiry, keepUntil(hv.expiry)); err != nil {
				continue
			}
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
