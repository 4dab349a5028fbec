package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisQuota is a QuotaStore in Redis: the replicas naming one Redis
// count each caller's calls together. A key's count in a window is one
// Redis key, "cmdhost:quota:" + SHA-256 of the quota's key (the caller's
// name is client-chosen text of any length: hashed, it is bounded) + ":"
// + the window's start in milliseconds; it expires a window after its
// own ends. A Take is one round trip: INCR and PEXPIREAT in a MULTI.
//
// The windows come from each replica's clock (the now given to Take), so
// replicas whose clocks differ by d may count a call in neighbouring
// windows for d around each window's end: a quota of N/s then lets
// through at most 2N in such a second. Keep the replicas' clocks in sync
// (NTP: milliseconds).
type RedisQuota struct {
	rdb redis.UniversalClient
}

// NewRedisQuota returns a RedisQuota counting in rdb; the caller owns
// rdb (and closes it).
func NewRedisQuota(rdb redis.UniversalClient) *RedisQuota { return &RedisQuota{rdb: rdb} }

// redisQuotaPrefix prefixes the keys of RedisQuota.
const redisQuotaPrefix = "cmdhost:quota:"

// Take implements QuotaStore.
func (q *RedisQuota) Take(ctx context.Context, key string, limit int, per time.Duration, now time.Time) (bool, time.Duration, error) {
	end := windowOf(now, per)
	start := end.Add(-per)
	sum := sha256.Sum256([]byte(key + "\x00" + per.String()))
	k := redisQuotaPrefix + hex.EncodeToString(sum[:16]) + ":" + strconv.FormatInt(start.UnixMilli(), 10)
	var incr *redis.IntCmd
	_, err := q.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.Incr(ctx, k)
		p.PExpireAt(ctx, k, end.Add(per))
		return nil
	})
	if err != nil {
		return false, 0, fmt.Errorf("quota store: %w", err)
	}
	if incr.Val() > int64(limit) {
		return false, end.Sub(now), nil
	}
	return true, 0, nil
}
