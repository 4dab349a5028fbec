package rpc

import (
	"fmt"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/ratelog"
)

// DefaultMaxDedupBytes is the byte bound of the dedup store's replies
// when Config.MaxDedupBytes is 0.
const DefaultMaxDedupBytes = 256 << 20

// Why the dedup store is bounded in bytes: a reply is kept until its
// request expires (up to Config.MaxExpiry, an hour by default) so that a
// duplicate gets it again, and Config.MaxDedupEntries bounds how many
// replies, not how large: 250 requests for 4 MB replies with an hour's
// expiry would hold a gigabyte for that hour. Past Config.MaxDedupBytes
// the store keeps a reply's digest instead (cache.ByteBound): the status
// and size of the reply, as a 500 that says the reply is no longer held.
// A duplicate of that request gets the 500 and the command does not run
// again: forgetting the request would run a non-idempotent command twice.
// The first receipt's own reply is sent whole either way.

// replyOverhead approximates what a reply holds besides its strings,
// maps and payload (the struct, the map headers), so that many small
// replies are not counted as free.
const replyOverhead = 256

// digestThreshold: a reply of at most this many bytes (size) is kept
// whole even past the bound, as its digest would weigh as much. The
// bytes held may so pass the bound by at most MaxDedupEntries of these.
const digestThreshold = 512

// size is what r holds in the dedup store: its payload, its strings and
// its properties, and replyOverhead.
func (r *reply) size() int64 {
	n := replyOverhead + len(r.payload) + len(r.message) + len(r.propName) + len(r.propValue) + len(r.contentType) + len(r.ts)
	for k, v := range r.extra {
		n += len(k) + len(v)
	}
	for k, v := range r.metadata {
		n += len(k) + len(v)
	}
	return int64(n)
}

// digest is what the dedup store keeps of r when r does not fit its byte
// bound: r itself when it is small (none owed, or no more than
// digestThreshold bytes), else a 500 naming r's status and size.
func (r *reply) digest() *reply {
	if r.none || r.size() <= digestThreshold {
		return r
	}
	return statusReply(abi.StatusInternalError, fmt.Sprintf(
		"the reply to this request (status %d, %d bytes) is no longer held: the host keeps at most --max-dedup-bytes of replies for duplicates; the request was run once and is not run again",
		int(r.status), r.size()), "", "")
}

// dedupBound is the byte bound of the executor's dedup store in memory.
// Each reply kept as a digest is counted (Executor.DedupStats) and
// logged, at most once a minute with the count since the last line.
func dedupBound(cfg *Config) cache.ByteBound[*reply] {
	max := cfg.MaxDedupBytes
	switch {
	case max == 0:
		max = DefaultMaxDedupBytes
	case max < 0:
		max = 0 // no bound but the entries'
	}
	lines := &ratelog.Limiter{Interval: time.Minute}
	digest := func(r *reply) *reply {
		d := r.digest()
		if d == r {
			return r
		}
		if ok, leftOut := lines.Allow(cfg.Clock.Now()); ok {
			cfg.Logger.Warn("dedup store over --max-dedup-bytes: replies kept as a digest; a duplicate of their request gets 500, and the request is not run again",
				"replies", leftOut+1, "maxBytes", max, "replyBytes", r.size())
		}
		return d
	}
	return cache.ByteBound[*reply]{MaxBytes: max, Size: (*reply).size, Digest: digest}
}

// DedupStats returns the byte counters of the dedup store in memory (with
// RedisStores, zero: the replies are held in Redis).
func (e *Executor) DedupStats() cache.DedupStats { return e.dedup.Stats() }
