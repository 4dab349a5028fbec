package cache

import (
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// What a Redis error means for the shared store. Only an error that
// says Redis did not answer — the network, a timeout, a closed
// connection — marks the store down (RedisDedup.down: requests are
// refused at once until a heartbeat gets through, rather than each
// waiting for a timeout). An error Redis answered with (OOM, NOREPLICAS,
// a script error, a MOVED the client could not follow) fails the one
// call, named in the log and in the request's refusal; the next request
// asks again. READONLY, LOADING, TRYAGAIN, CLUSTERDOWN, MOVED and ASK are
// retried or followed by the client first (newRedisClient).

// redisDown reports whether err means Redis did not answer: any error
// but one Redis answered with (a redis.Error) and errNotReplicated —
// the network, a timeout, a closed connection, no Sentinel reachable.
func redisDown(err error) bool {
	var re redis.Error
	return err != nil && !errors.Is(err, errNotReplicated) && !errors.As(err, &re)
}

// errNotReplicated is a write the primary took but no replica confirmed
// in time (WAIT): lost if the primary fails now.
var errNotReplicated = errors.New("no replica confirmed the write in time (WAIT); a failover now could lose it")

// unavailable wraps err as ErrStoreUnavailable, saying whether Redis did
// not answer or what it answered.
func unavailable(what string, err error) error {
	if redisDown(err) {
		return fmt.Errorf("%w: %s: Redis did not answer (%v); the store counts as down until a heartbeat gets through", ErrStoreUnavailable, what, err)
	}
	return fmt.Errorf("%w: %s: %v", ErrStoreUnavailable, what, err)
}

// topologyHint names the URL form that fits a server answering err: a
// cluster node (MOVED), a Sentinel (no SET), a replica (READONLY).
func topologyHint(err error) string {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "MOVED "), strings.HasPrefix(msg, "CLUSTERDOWN"):
		return " (a Redis Cluster node: use redis-cluster://HOST:PORT[,HOST:PORT…])"
	case strings.Contains(msg, "unknown command 'set'"):
		return " (a Sentinel: use redis+sentinel://HOST:PORT[,HOST:PORT…]/MASTER)"
	case strings.HasPrefix(msg, "READONLY"):
		return " (a replica: name the primary, or its Sentinels with redis+sentinel://)"
	}
	return ""
}
