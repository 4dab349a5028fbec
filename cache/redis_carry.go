package cache

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// The reuse cache's Redis calls, carried by the dedup store's round trips.
// An idempotent request with a reply TTL costs Redis a claim, a reuse
// lookup, a reuse store and an outcome: made one by one, four round
// trips. Carried, the lookup goes in the claims' pipeline (ClaimAll,
// ClaimRequest.Reuse) and the store in the outcomes' (CompleteReusing):
// two, as a request to a non-idempotent command.

// ReuseCarrier is a Dedup that carries a shared reuse cache's calls.
type ReuseCarrier[V any] interface {
	// CarryReuse makes the store carry r's calls; false when r is not a
	// shared cache it can carry (then nothing changes).
	CarryReuse(r Reuse[V]) bool
	// CompleteReusing is Complete, offering v to the reuse cache as
	// Reuse.Set(set.Key, v, set.Cost, set.TTL) does.
	CompleteReusing(e *Entry[V], v V, keepUntil time.Time, set ReuseSet)
}

// ReuseSet is a reply offered to the reuse cache (Reuse.Set's arguments).
type ReuseSet struct {
	Key  string
	Cost int64
	TTL  time.Duration
}

var _ ReuseCarrier[int] = (*RedisDedup[int])(nil)

// CarryReuse carries r's calls when it is a RedisReuse.
func (s *RedisDedup[V]) CarryReuse(r Reuse[V]) bool {
	rr, ok := r.(*RedisReuse[V])
	if ok {
		s.reuse = rr
	}
	return ok
}

// reuseLookup is a reuse lookup carried by ClaimAll.
type reuseLookup struct {
	key string
	get *redis.StringCmd // nil: answered by the local tier, or not asked
}

// lookupReuse asks the local tier for key, and else adds its GET to
// pipe; it reports whether the reuse cache was asked.
func (s *RedisDedup[V]) lookupReuse(ctx context.Context, pipe redis.Pipeliner, key string, res *ClaimResult[V]) (reuseLookup, bool) {
	if s.reuse == nil || key == "" {
		return reuseLookup{}, false
	}
	if v, ok := s.reuse.local.Get(key); ok {
		res.Reused, res.ReuseHit, res.ReuseAsked = v, true, true
		return reuseLookup{}, true
	}
	if !s.reuse.up() {
		res.ReuseAsked = true // the local tier alone: a miss
		return reuseLookup{}, true
	}
	return reuseLookup{key: key, get: pipe.Get(ctx, redisReuseKey(key))}, true
}

// reuseAnswered fills res with a carried lookup's answer.
func (s *RedisDedup[V]) reuseAnswered(l reuseLookup, res *ClaimResult[V]) {
	if l.get == nil {
		return
	}
	held, err := l.get.Result()
	res.Reused, res.ReuseHit = s.reuse.fetched(l.key, held, err)
	res.ReuseAsked = true
}

// CompleteReusing is Complete, with v offered to the reuse cache: its
// local tier now, Redis in the outcome's round trip.
func (s *RedisDedup[V]) CompleteReusing(e *Entry[V], v V, keepUntil time.Time, set ReuseSet) {
	if s.reuse == nil || set.TTL <= 0 {
		s.Complete(e, v, keepUntil)
		return
	}
	var share *reuseShare
	if set.Cost <= s.reuse.maxBytes && s.reuse.up() {
		if rk, val, ok := s.reuse.prepare(set.Key, v, set.TTL); ok {
			share = &reuseShare{key: rk, value: val, ttl: set.TTL}
		}
	}
	if s.reuse.local.Set(set.Key, v, set.Cost, set.TTL) {
		s.reuse.Wait() // visible before the reply goes out
	}
	s.complete(e, v, keepUntil, share)
}

// reuseShare is a reply to store in Redis with an outcome (settleOp).
type reuseShare struct {
	key, value string
	ttl        time.Duration
	set        *redis.StatusCmd
}
