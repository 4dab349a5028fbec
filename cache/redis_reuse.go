package cache

import (
	"context"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/internal/logx"
)

// RedisReuse is a reuse cache in two tiers: a ReuseCache in memory in
// front, Redis behind it, shared by every executor that names the same
// Redis. A reply computed by one replica is reused by the others, and by
// the host after a restart, for as long as its TTL lives.
//
// Get asks the local tier first and Redis on a miss; a reply found in
// Redis is kept locally for the rest of its TTL. Set stores the reply in
// both, Redis first and before Set returns, so that an equivalent request
// that follows the reply, on any replica, finds it.
//
// Reuse only saves work, so Redis failing costs executions, nothing else:
// a Redis call that fails is counted (ReuseStats.SharedErrors), and Redis
// is left alone for redisReuseBackoff, during which the cache is the
// local tier alone. The calls have a short timeout of their own, so a
// slow Redis delays a request by at most that.
//
// This process keeps at most the local tier's MaxBytes in Redis at any
// time (sharedBudget): past it, a reply is kept in memory only (counted
// in ReuseStats.SharedOverBudget), so the tier's size in Redis is bounded
// by replicas × MaxBytes whatever the clients send.
//
// Keys are the ReuseKey in hex under "cmdhost:reuse:", so the privacy of
// a reply (ReuseKey includes the invoker of a private request) is the
// same as in memory. Values are "<expiry unix ms>:<encoded reply>": the
// expiry is checked by the configured clock, as the local tier does, and
// Redis's own TTL reclaims the key.
type RedisReuse[V any] struct {
	local    *ReuseCache[V]
	rdb      redis.UniversalClient
	encode   func(V) ([]byte, error)
	decode   func([]byte) (V, error)
	now      func() time.Time
	log      *slog.Logger
	maxBytes int64
	budget   sharedBudget // this process's bytes in Redis
	// wall is the real clock, which Redis's TTLs and the back-off run on
	// (now is the configured one, which decides a reply's expiry); tests
	// replace it.
	wall           func() time.Time
	downUntil      atomic.Int64 // unix ns: Redis is skipped until then
	hits, failures atomic.Int64
	overBudget     atomic.Int64 // replies kept in memory only: the budget was spent
}

// RedisReuseConfig configures a RedisReuse.
type RedisReuseConfig[V any] struct {
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
	// Local configures the tier in memory; its MaxBytes also bounds the
	// size of one reply stored in Redis.
	Local ReuseConfig
	// Encode and Decode turn replies into bytes and back.
	Encode func(V) ([]byte, error)
	Decode func([]byte) (V, error)
	// Logger receives the cache's troubles; nil discards them.
	Logger *slog.Logger
}

const (
	redisReusePrefix = "cmdhost:reuse:"
	// redisReuseTimeout bounds one Redis call of the reuse cache: a reply
	// that takes longer to fetch than this is cheaper to compute again.
	redisReuseTimeout = 250 * time.Millisecond
	// redisReuseBackoff is how long Redis is left alone after a failure.
	redisReuseBackoff = time.Second
)

// NewRedisReuse returns an empty local tier in front of the Redis at
// cfg.URL, once Redis answers.
func NewRedisReuse[V any](cfg RedisReuseConfig[V]) (*RedisReuse[V], error) {
	conn := redisConn{url: cfg.URL, tls: cfg.TLS, password: cfg.Password}
	rdb, _, err := newRedisClient(conn)
	if err != nil {
		return nil, fmt.Errorf("reuse cache %s: %w", conn.redacted(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("reuse cache %s: %w", conn.redacted(), err)
	}
	local, err := NewReuseCache[V](cfg.Local)
	if err != nil {
		_ = rdb.Close()
		return nil, err
	}
	c := &RedisReuse[V]{local: local, rdb: rdb, encode: cfg.Encode, decode: cfg.Decode,
		now: local.now, log: logx.OrDiscard(cfg.Logger), maxBytes: local.maxBytes, budget: sharedBudget{max: local.maxBytes}, wall: time.Now}
	return c, nil
}

func redisReuseKey(key string) string { return redisReusePrefix + hex.EncodeToString([]byte(key)) }

// Get returns the reply under key from the local tier, or else from
// Redis (see RedisReuse).
func (c *RedisReuse[V]) Get(key string) (V, bool) {
	if v, ok := c.local.Get(key); ok || !c.up() {
		return v, ok
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisReuseTimeout)
	defer cancel()
	held, err := c.rdb.Get(ctx, redisReuseKey(key)).Result()
	return c.fetched(key, held, err)
}

// fetched is Get's answer once Redis answered GET key with held or err
// (here, or in the dedup store's round trip: redis_carry.go).
func (c *RedisReuse[V]) fetched(key, held string, err error) (V, bool) {
	var zero V
	if err == redis.Nil {
		return zero, false
	}
	if err != nil {
		c.failed("reading a reply", err)
		return zero, false
	}
	ms, enc, ok := strings.Cut(held, ":")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil {
		c.log.Error("reuse cache: a stored reply without its expiry", "key", redisReuseKey(key))
		return zero, false
	}
	left := time.UnixMilli(n).Sub(c.now())
	if left <= 0 {
		return zero, false
	}
	v, err := c.decode([]byte(enc))
	if err != nil {
		c.log.Error("reuse cache: a stored reply", "err", err)
		return zero, false
	}
	c.hits.Add(1)
	c.local.Set(key, v, int64(len(enc)), left)
	return v, true
}

// Set stores v under key for ttl in Redis, then in the local tier, and
// returns what the local tier's Set returns (see ReuseCache.Set).
func (c *RedisReuse[V]) Set(key string, v V, cost int64, ttl time.Duration) bool {
	if ttl <= 0 {
		return false
	}
	if cost <= c.maxBytes && c.up() {
		c.share(key, v, ttl)
	}
	return c.local.Set(key, v, cost, ttl)
}

// share stores v in Redis under key for ttl, within this process's
// budget there (sharedBudget).
func (c *RedisReuse[V]) share(key string, v V, ttl time.Duration) {
	rk, val, ok := c.prepare(key, v, ttl)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisReuseTimeout)
	defer cancel()
	c.stored(c.rdb.Set(ctx, rk, val, ttl).Err())
}

// prepare returns the Redis key and value that share stores for v,
// once they fit this process's budget there; false when v is not to be
// stored in Redis.
func (c *RedisReuse[V]) prepare(key string, v V, ttl time.Duration) (rk, val string, ok bool) {
	enc, err := c.encode(v)
	if err != nil {
		c.log.Error("reuse cache: encoding a reply", "err", err)
		return "", "", false
	}
	val = strconv.FormatInt(c.now().Add(ttl).UnixMilli(), 10) + ":" + string(enc)
	if now := c.wall(); !c.budget.take(int64(len(val)), now, now.Add(ttl)) {
		c.overBudget.Add(1)
		return "", "", false
	}
	return redisReuseKey(key), val, true
}

// stored takes the answer to a SET of share's.
func (c *RedisReuse[V]) stored(err error) {
	if err != nil {
		c.failed("storing a reply", err)
	}
}

// up reports whether Redis is to be asked: not within redisReuseBackoff
// of a failure.
func (c *RedisReuse[V]) up() bool { return c.wall().UnixNano() >= c.downUntil.Load() }

// failed counts a failed Redis call and leaves Redis alone for a while.
// It logs the failures of calls made while Redis was taken for up: at
// most one per redisReuseBackoff.
func (c *RedisReuse[V]) failed(what string, err error) {
	c.failures.Add(1)
	now := c.wall()
	if c.downUntil.Swap(now.Add(redisReuseBackoff).UnixNano()) <= now.UnixNano() {
		c.log.Warn("reuse cache: Redis failed; the local tier serves alone for a while", "op", what, "err", err)
	}
}

// Wait waits for the local tier's Sets (see ReuseCache.Wait); Redis's
// are done when Set returns.
func (c *RedisReuse[V]) Wait() { c.local.Wait() }

// Stats returns the local tier's counters, with the replies found in
// Redis counted as hits (and in SharedHits) and the failed Redis calls in
// SharedErrors.
func (c *RedisReuse[V]) Stats() ReuseStats {
	s := c.local.Stats()
	shared := c.hits.Load()
	s.Hits += shared
	s.Misses -= shared
	s.SharedHits, s.SharedErrors, s.SharedOverBudget = shared, c.failures.Load(), c.overBudget.Load()
	return s
}

// Close closes the local tier and the Redis client; Redis keeps the
// replies for the other executors.
func (c *RedisReuse[V]) Close() {
	c.local.Close()
	_ = c.rdb.Close()
}

var _ Reuse[int] = (*RedisReuse[int])(nil)
