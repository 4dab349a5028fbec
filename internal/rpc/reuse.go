package rpc

import (
	"sort"
	"strings"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
)

// Reuse of idempotent replies (PROTOCOL.md "Dedup and reuse"). An
// equivalent request (same command, topic tokens, content type and payload,
// new correlation data) of an idempotent command with a response TTL may be
// answered from a cost-weighted cache instead of running again. The cache
// may forget anything at any time: only efficiency is lost. Deduplication
// does not depend on it: the strict dedup store is separate and never
// touched by its size pressure.

// DefaultReuseMaxBytes bounds the reuse cache when Config says nothing.
const DefaultReuseMaxBytes = 64 << 20

// reusable reports whether a route's replies may be reused at all.
func (r *route) reusable() bool { return r.cmd.Idempotent && r.cmd.ResponseTTL > 0 }

// reuseKey is the equivalence class of a request, worked out once (the
// claim queue asks for it, then the run). A request addressed to
// this executor specifically (its topic names the executor, and no share
// group makes that name a service's) is private to its invoker: its key
// includes the invoker's identity, its __srcId or, without one, its
// response topic, so its reply never reaches another invoker.
func (e *Executor) reuseKey(in *incoming) (string, bool) {
	if e.reuse == nil || !in.route.reusable() {
		return "", false
	}
	if in.reuseKey == "" {
		in.reuseKey = e.newReuseKey(in)
	}
	return in.reuseKey, true
}

func (e *Executor) newReuseKey(in *incoming) string {
	req := in.req
	tokens := make([]string, 0, len(req.TopicTokens))
	for k, v := range req.TopicTokens {
		tokens = append(tokens, k+"="+v)
	}
	sort.Strings(tokens)
	// A handler may answer each verified caller its own way (it sees
	// req.Caller): a reply is reused only for the caller it was made for.
	identity := req.Caller.User + "\x00" + req.Caller.ClientID
	if in.route.private {
		if req.InvokerID != "" {
			identity += "\x00" + req.InvokerID
		} else {
			identity += "\x00topic:" + in.responseTopic
		}
	}
	return cache.ReuseKey([]byte(req.Command), []byte(strings.Join(tokens, "\x00")),
		[]byte(req.ContentType), []byte{byte(req.Format)}, req.Payload, []byte(identity))
}

// remember keeps a successful reply for reuse, for the command's declared
// response TTL or the shorter one the handler gave this reply (0: not at
// all). Error replies are never reused.
func (e *Executor) remember(key string, in *incoming, r *reply) {
	ttl, ok := reuseTTL(in, r)
	if ok && e.reuse.Set(key, r, r.cost(), ttl) {
		// ristretto applies sets asynchronously: flush before the reply is
		// published, so an equivalent request that follows it finds it.
		e.reuse.Wait()
	}
}

// rememberCarried is remember and complete in one, when the dedup store
// carries the reuse cache's calls (cache.ReuseCarrier): the reply goes
// to Redis in the outcome's round trip (a reply not to reuse, the outcome
// alone). It reports whether it completed the entry.
func (e *Executor) rememberCarried(key string, in *incoming, entry *cache.Entry[*reply], r *reply) bool {
	if e.carrier == nil || entry == nil {
		return false
	}
	ttl, _ := reuseTTL(in, r) // 0 (an error reply, no reply): the outcome alone
	e.carrier.CompleteReusing(entry, r, keepUntil(in), cache.ReuseSet{Key: key, Cost: r.cost(), TTL: ttl})
	return true
}

// reuseTTL is how long a reply may be reused: the command's declared
// response TTL or the shorter one the handler gave; not at all (false)
// for an error reply, no reply or a TTL of 0.
func reuseTTL(in *incoming, r *reply) (time.Duration, bool) {
	if r.none || r.status != abi.StatusOK && r.status != abi.StatusNoContent {
		return 0, false
	}
	ttl := in.route.cmd.ResponseTTL
	if r.ttl != nil && *r.ttl < ttl {
		ttl = *r.ttl
	}
	return ttl, ttl > 0
}

// cost is what a reply weighs in the reuse cache: its bytes.
func (r *reply) cost() int64 {
	n := len(r.payload) + len(r.contentType) + len(r.message)
	for k, v := range r.metadata {
		n += len(k) + len(v)
	}
	return int64(n)
}

// ReuseStats returns the reuse cache's counters (zero when it is off).
func (e *Executor) ReuseStats() cache.ReuseStats {
	if e.reuse == nil {
		return cache.ReuseStats{}
	}
	return e.reuse.Stats()
}
