package cache

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

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
// but one Redis answered with (a redis.Error), errNotReplicated,
// errClaimLost and errWriteLost — the network, a timeout, a closed
// connection, no Sentinel reachable.
func redisDown(err error) bool {
	var re redis.Error
	return err != nil && !errors.Is(err, errNotReplicated) && !errors.Is(err, errClaimLost) && !errors.Is(err, errWriteLost) && !errors.As(err, &re)
}

// errNotReplicated is a write the primary took but no replica confirmed
// in time (WAIT): lost if the primary fails now.
var errNotReplicated = errors.New("no replica confirmed the write in time (WAIT); a failover now could lose it")

// unavailable wraps err as ErrStoreUnavailable, saying whether Redis did
// not answer or what it answered; as ErrStoreFull when Redis is full.
func unavailable(what string, err error) error {
	switch {
	case redisDown(err):
		return fmt.Errorf("%w: %s: Redis did not answer (%v); the store counts as down until a heartbeat gets through", ErrStoreUnavailable, what, err)
	case redisFull(err):
		return fmt.Errorf("%w: %s: %v%s", ErrStoreFull, what, err, fullHint)
	}
	return fmt.Errorf("%w: %s: %v", ErrStoreUnavailable, what, err)
}

// redisFull reports whether err is Redis refusing a write for want of
// memory: its used memory is past maxmemory, and its maxmemory-policy
// evicts nothing (noeviction, or no key it may evict).
func redisFull(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && (strings.HasPrefix(re.Error(), "OOM ") || strings.Contains(re.Error(), "OOM command not allowed"))
}

// fullHint names the fix of a full Redis.
const fullHint = " (Redis is full: its used memory passed its maxmemory setting; raise maxmemory (CONFIG SET maxmemory, or redis.conf) or free memory in it; docs/operations.md sizes it)"

// hint names the fix of err, an error of the first call to the Redis c
// names: the URL form that fits (topologyHint), a full Redis, or a
// server that does not speak TLS to a rediss URL (tlsHint).
func (c redisConn) hint(err error) string {
	if h := topologyHint(err); h != "" {
		return h
	}
	if redisFull(err) {
		return fullHint
	}
	return c.tlsHint(err)
}

// tlsHint says so when the server of a rediss URL that did not answer
// speaks plain RESP: a TLS client waits for a handshake such a server
// never sends ("context deadline exceeded"), or reads its error reply as
// a bad record. It asks the URL's (first) server PING without TLS, and
// reads the first byte of the answer: a RESP reply ('+', '-') is a
// server without TLS.
func (c redisConn) tlsHint(err error) string {
	if !redisDown(err) || !strings.HasPrefix(c.url, "rediss") {
		return ""
	}
	addr := firstAddr(c.url)
	if addr == "" {
		return ""
	}
	conn, derr := net.DialTimeout("tcp", addr, tlsProbeTimeout)
	if derr != nil {
		return ""
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(tlsProbeTimeout))
	var b [1]byte
	if _, werr := conn.Write([]byte("PING\r\n")); werr != nil {
		return ""
	}
	if n, _ := conn.Read(b[:]); n == 1 && (b[0] == '+' || b[0] == '-') {
		return fmt.Sprintf(" (the server at %s does not speak TLS: use redis:// — drop the s — or enable TLS on the server: tls-port)", addr)
	}
	return ""
}

// tlsProbeTimeout bounds tlsHint's probe.
const tlsProbeTimeout = time.Second

// firstAddr is the HOST:PORT of the (first) server of a store URL; "" when
// it has none.
func firstAddr(rawURL string) string {
	topology, err := RedisTopology(rawURL)
	if err != nil {
		return ""
	}
	if topology == redisSingle {
		opt, err := redis.ParseURL(rawURL)
		if err != nil {
			return ""
		}
		return opt.Addr
	}
	m, err := parseMultiURL(rawURL, topology)
	if err != nil || len(m.addrs) == 0 {
		return ""
	}
	return m.addrs[0]
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
