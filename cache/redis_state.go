package cache

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/internal/state"
)

// RedisState is the handlers' state store (state.Backend) in the Redis of
// a dedup store (RedisDedup.State), on its client: replicas naming that
// Redis share their state, and the dedup store commits a call's writes in
// the script that stores its request's outcome (CommitOutcome,
// redis_effects.go). Its rules are the embedded store's (state.Disk):
// every op's condition, fence and quota is checked in order within the
// commit, which applies all or nothing; versions grow and say when
// (state.VersionOf of Redis's clock); a key's TTL ends it at its time.
//
// The keys of a namespace NS share one hash tag, so that a commit to one
// namespace touches one slot of a Redis Cluster (T is NS with '%' and
// '}' written %25 and %7D):
//
//	cmdhost:state:{T}:k:KEY   a key: a hash of v (value), m and c (its
//	                          version's milliseconds and counter), x (its
//	                          expiry, unix ms; PEXPIREAT then) and f (its
//	                          fencing token), each when it has one
//	cmdhost:state:{T}:i       the namespace's keys (a sorted set of score
//	                          0, listed by ZRANGEBYLEX: byte order)
//	cmdhost:state:{T}:x       its keys that expire, scored by when
//	cmdhost:state:{T}:s       their sizes (what their expiry gives back)
//	cmdhost:state:{T}:u       its usage: k keys, b bytes; m and c, the
//	                          last version it gave
//	cmdhost:state:{T}:d:ID    a commit's marker: its results, or ABORTED
//	cmdhost:state:o:SHA       an outcome recorded by Commit.Outcome
//
// A key that expired is gone at its time (Redis removes it); the next
// commit or list of its namespace gives back what it counted (the
// usage counts it until then). The store's total (Limits.MaxTotalBytes)
// is not counted: Redis's maxmemory bounds it, and a Redis out of
// memory refuses commits (ErrUnavailable), writing nothing.
//
// On a Redis Cluster a commit touches one namespace (a commit to two is
// ErrInvalid: they are in two slots), and an outcome recorded with it is
// stored after it, in its own slot.
type RedisState struct {
	link   *redisLink
	limits state.Limits
	closed atomic.Bool
	// outbox takes the messages commits carry (redis_outbox.go); nil
	// until RedisDedup.Outbox makes it, and then a commit with messages
	// is refused.
	outbox atomic.Pointer[RedisOutbox]
}

var _ state.Backend = (*RedisState)(nil)

// Bounds of the state store's Redis keys.
const (
	redisStatePrefix = "cmdhost:state:"
	// redisMarkerTTL is how long a commit's marker is kept: long enough
	// for the client's retries and for settling a commit whose answer
	// was lost (settleCommit).
	redisMarkerTTL = time.Minute
)

// newRedisState is the state store on link.
func newRedisState(link *redisLink, limits state.Limits) *RedisState {
	return &RedisState{link: link, limits: limits.WithDefaults()}
}

// Limits are the store's bounds, defaults resolved.
func (r *RedisState) Limits() state.Limits { return r.limits }

// redisSpace is a namespace's keys.
type redisSpace struct{ base string }

func spaceOf(ns string) redisSpace {
	t := strings.NewReplacer("%", "%25", "}", "%7D").Replace(ns)
	return redisSpace{base: redisStatePrefix + "{" + t + "}:"}
}

func (s redisSpace) item(key []byte) string { return s.base + "k:" + string(key) }
func (s redisSpace) keys() []string {
	return []string{s.base + "i", s.base + "x", s.base + "s", s.base + "u"}
}
func (s redisSpace) usage() string           { return s.base + "u" }
func (s redisSpace) marker(id string) string { return s.base + "d:" + id }

// redisOutcomeKey is the key of an outcome Commit.Outcome records.
func redisOutcomeKey(id state.OutcomeID) string {
	h := sha256.New()
	h.Write([]byte(id.Correlation))
	h.Write([]byte{0})
	h.Write([]byte(id.ResponseTopic))
	return redisStatePrefix + "o:" + hex.EncodeToString(h.Sum(nil))
}

// encodeStateOutcome is an outcome's value: its keep-until (unix ms: a
// key lives a second at least), its id (to tell two ids of one hash
// apart), then its value.
func encodeStateOutcome(o *state.Outcome) string {
	b := binary.BigEndian.AppendUint64(nil, uint64(o.KeepUntil.UnixMilli()))
	b = binary.AppendUvarint(b, uint64(len(o.ID.Correlation)))
	b = append(b, o.ID.Correlation...)
	b = binary.AppendUvarint(b, uint64(len(o.ID.ResponseTopic)))
	b = append(b, o.ID.ResponseTopic...)
	return string(append(b, o.Value...))
}

func decodeStateOutcome(b []byte) (state.OutcomeID, time.Time, []byte, bool) {
	if len(b) < 8 {
		return state.OutcomeID{}, time.Time{}, nil, false
	}
	keep := time.UnixMilli(int64(binary.BigEndian.Uint64(b)))
	b = b[8:]
	var parts [2]string
	for i := range parts {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return state.OutcomeID{}, time.Time{}, nil, false
		}
		parts[i] = string(b[w : w+int(n)])
		b = b[w+int(n):]
	}
	return state.OutcomeID{Correlation: parts[0], ResponseTopic: parts[1]}, keep, b, true
}

// up returns ErrUnavailable once the store is closed, or while Redis is
// down (the dedup store's heartbeat finds it back).
func (r *RedisState) up() error {
	switch {
	case r.closed.Load():
		return fmt.Errorf("%w: the store is closed", state.ErrUnavailable)
	case r.link.down.Load():
		return fmt.Errorf("%w: Redis did not answer; the next heartbeat tries again", state.ErrUnavailable)
	}
	return nil
}

// unavailable wraps a Redis error as state.ErrUnavailable; when Redis did
// not answer, the store is down.
func (r *RedisState) unavailable(doing string, err error) error {
	r.link.failed(err)
	return stateUnavailable(doing, err)
}

// stateUnavailable wraps a Redis error as state.ErrUnavailable.
func stateUnavailable(doing string, err error) error {
	if redisDown(err) {
		return fmt.Errorf("%s: %w: Redis did not answer: %w", doing, state.ErrUnavailable, err)
	}
	if strings.HasPrefix(err.Error(), "OOM") {
		return fmt.Errorf("%s: %w: Redis is out of memory (its maxmemory): %w", doing, state.ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w: %w", doing, state.ErrUnavailable, err)
}

// Get returns the item under key in ns.
func (r *RedisState) Get(ctx context.Context, ns string, key []byte) (state.Item, error) {
	if err := state.CheckNamespace(ns); err != nil {
		return state.Item{}, err
	}
	if err := r.limits.CheckKey(key); err != nil {
		return state.Item{}, err
	}
	if err := r.up(); err != nil {
		return state.Item{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, redisOpTimeout)
	defer cancel()
	h, err := r.link.rdb.HMGet(ctx, spaceOf(ns).item(key), "v", "m", "c", "x", "f").Result()
	if err != nil {
		return state.Item{}, r.unavailable("reading a key", err)
	}
	v, ok := h[0].(string)
	if !ok {
		return state.Item{}, state.ErrNotFound
	}
	it := state.Item{Key: bytes.Clone(key), Value: []byte(v), Fence: str(h[4])}
	ms, _ := strconv.ParseInt(str(h[1]), 10, 64)
	c, _ := strconv.ParseUint(str(h[2]), 10, 16)
	it.Version = state.VersionOf(ms, uint16(c))
	if x, err := strconv.ParseInt(str(h[3]), 10, 64); err == nil {
		it.Expires = time.UnixMilli(x) // Redis removes it then, by its clock
	}
	return it, nil
}

// str is a reply's string, "" for nil.
func str(v any) string {
	s, _ := v.(string)
	return s
}

// List returns up to limit keys of ns that start with prefix and sort
// after after, and whether more follow.
func (r *RedisState) List(ctx context.Context, ns string, prefix, after []byte, limit int) ([][]byte, bool, error) {
	if err := state.CheckNamespace(ns); err != nil {
		return nil, false, err
	}
	if limit <= 0 {
		return nil, false, fmt.Errorf("%w: a list of %d keys", state.ErrInvalid, limit)
	}
	if err := r.up(); err != nil {
		return nil, false, err
	}
	min := "[" + string(prefix)
	switch {
	case len(after) > 0 && bytes.Compare(after, prefix) >= 0:
		min = "(" + string(after)
	case len(prefix) == 0:
		min = "-"
	}
	max := "+"
	if end := prefixEnd(prefix); end != nil {
		max = "(" + string(end)
	}
	ctx, cancel := context.WithTimeout(ctx, redisOpTimeout)
	defer cancel()
	cmd, _ := r.link.evalWaited(ctx, stateListScript, spaceOf(ns).keys(), min, max, limit+1)
	vals, err := cmd.Slice()
	if err != nil {
		return nil, false, r.unavailable("listing keys", err)
	}
	if len(vals) == 0 {
		return nil, false, stateUnavailable("listing keys", errors.New("an empty reply"))
	}
	cut, _ := vals[0].(int64)
	keys := make([][]byte, 0, len(vals)-1)
	for _, v := range vals[1:] {
		keys = append(keys, []byte(str(v)))
	}
	more := cut == 1
	if len(keys) > limit {
		keys, more = keys[:limit], true
	}
	return keys, more, nil
}

// prefixEnd is the first key after every key that starts with p; nil
// when there is none (p is empty or all 0xff).
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// Usage returns what ns holds (keys that expired since its last commit
// or list included).
func (r *RedisState) Usage(ctx context.Context, ns string) (state.Usage, error) {
	if err := state.CheckNamespace(ns); err != nil {
		return state.Usage{}, err
	}
	if err := r.up(); err != nil {
		return state.Usage{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, redisOpTimeout)
	defer cancel()
	h, err := r.link.rdb.HMGet(ctx, spaceOf(ns).usage(), "k", "b").Result()
	if err != nil {
		return state.Usage{}, r.unavailable("reading a namespace's usage", err)
	}
	k, _ := strconv.ParseInt(str(h[0]), 10, 64)
	b, _ := strconv.ParseInt(str(h[1]), 10, 64)
	return state.Usage{Keys: k, Bytes: b}, nil
}

// Outcome returns the outcome Commit recorded under id while it is kept.
func (r *RedisState) Outcome(ctx context.Context, id state.OutcomeID) ([]byte, bool, error) {
	if err := r.up(); err != nil {
		return nil, false, err
	}
	ctx, cancel := context.WithTimeout(ctx, redisOpTimeout)
	defer cancel()
	v, err := r.link.rdb.Get(ctx, redisOutcomeKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, r.unavailable("reading an outcome", err)
	}
	got, keep, value, ok := decodeStateOutcome(v)
	if !ok || got != id || !time.Now().Before(keep) {
		return nil, false, nil
	}
	return value, true, nil
}

// Close closes the store: later calls return ErrUnavailable. The client
// is the dedup store's, closed with it.
func (r *RedisState) Close() error {
	r.closed.Store(true)
	return nil
}

// Commit applies c all or nothing, in one script (on a Redis Cluster, an
// outcome is stored after it), and returns once Redis and the replicas
// the dedup store waits for have it. A commit whose answer was lost
// (Redis did not answer, or no replica confirmed it) is settled before
// Commit returns: found applied, or marked so that it never applies
// (its marker). Only when Redis stays unreachable meanwhile is its fate
// unknown: state.ErrUnknown.
func (r *RedisState) Commit(ctx context.Context, c *state.Commit) ([]state.Result, error) {
	if err := r.limits.CheckCommit(c); err != nil {
		return nil, err
	}
	if err := r.up(); err != nil {
		return nil, err
	}
	if len(c.Ops) == 0 && len(c.Messages) == 0 {
		if c.Outcome == nil {
			return nil, nil
		}
		return nil, r.storeOutcome(c.Outcome, deadlineOf(ctx))
	}
	var extra []redisSet
	if c.Outcome != nil && !r.link.cluster {
		extra = append(extra, outcomeSet(c.Outcome))
	}
	call, err := r.call(c, redisGuard{marker: true, keep: time.Now().Add(redisMarkerTTL)}, extra)
	if err != nil {
		return nil, err
	}
	sent := time.Now()
	opCtx, cancel := context.WithTimeout(ctx, redisOpTimeout)
	cmd, werr := r.link.evalWaited(opCtx, stateCommitScript, call.keys, call.args...)
	cancel()
	if appliedOnPrimary(cmd) && werr != nil { // a slow replica is waited for (redis_confirm_write.go)
		werr = r.link.confirmWrite(werr, confirmUntil(sent, deadlineOf(ctx)), touch(call.keys[0], isAppliedMarker))
		if errors.Is(werr, errNotReplicated) {
			// The last round found it applied on the primary, and the
			// replicas had their time: settling it (settleCommit) could
			// only find the same.
			r.committed(call)
			return nil, fmt.Errorf("%w: the commit applied on the primary, and no replica confirmed it in time: a failover now could lose it: %w", state.ErrUnknown, werr)
		}
	}
	res, err := r.answer(call, cmd, werr)
	var refused *errRefused
	switch {
	case errors.As(err, &refused):
		res, err = r.afterRefusal(call, refused)
	case errors.Is(err, errCommitUnknown):
		res, err = r.settleCommit(call)
	}
	if err != nil {
		return nil, err
	}
	r.committed(call)
	if c.Outcome != nil && r.link.cluster {
		if err := r.storeOutcome(c.Outcome, deadlineOf(ctx)); err != nil {
			return nil, fmt.Errorf("the writes are committed, but %w", err)
		}
	}
	return res, nil
}

// committed tells the outbox's sender that call's messages are in.
func (r *RedisState) committed(call *stateCall) {
	if call.outbox != nil {
		if o := r.outbox.Load(); o != nil {
			o.signal()
		}
	}
}

// OutboxBytesIn is what the outbox of ns held at its sender's last read
// (state.Txn.Publish refuses a message that would pass its bound).
func (r *RedisState) OutboxBytesIn(ns string) int64 {
	if o := r.outbox.Load(); o != nil {
		return o.bytesIn(ns)
	}
	return 0
}

// outcomeSet is the extra key of a recorded outcome.
func outcomeSet(o *state.Outcome) redisSet {
	return redisSet{key: redisOutcomeKey(o.ID), value: encodeStateOutcome(o), at: redisKeep(o.KeepUntil)}
}

// redisKeep is a PXAT for a key kept until t: at least a second from now
// (a PXAT in the past deletes the key at once).
func redisKeep(t time.Time) int64 {
	if min := time.Now().Add(time.Second); t.Before(min) {
		t = min
	}
	return t.UnixMilli()
}

// storeOutcome records o alone, for a request whose context ends at
// deadline (zero: none), which bounds how long a slow replica is waited
// for (redis_confirm_write.go).
func (r *RedisState) storeOutcome(o *state.Outcome, deadline time.Time) error {
	sent := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	pipe := r.link.rdb.Pipeline()
	s := outcomeSet(o)
	set := pipe.Do(ctx, "SET", s.key, s.value, "PXAT", s.at)
	w := r.link.waitCmd(ctx, pipe)
	_, _ = pipe.Exec(ctx)
	if err := set.Err(); err != nil {
		return r.unavailable("recording an outcome", err)
	}
	// A round sets the same value again: on any primary, the outcome is
	// stored once a replica confirms the round.
	again := func(ctx context.Context, pipe redis.Pipeliner) func() error {
		return pipe.Do(ctx, "SET", s.key, s.value, "PXAT", s.at).Err
	}
	if err := r.link.confirmWrite(r.link.waited(w), confirmUntil(sent, deadline), again); err != nil {
		return r.unavailable("recording an outcome", err)
	}
	return nil
}

// afterRefusal is the fate of a commit Redis refused (out of memory):
// nothing applied unless an earlier try of the client's, whose answer
// was lost, did (its marker says).
func (r *RedisState) afterRefusal(call *stateCall, refused *errRefused) ([]state.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	v, err := r.link.rdb.Get(ctx, call.keys[0]).Result()
	switch {
	case errors.Is(err, redis.Nil), err == nil && v == markerAborted:
		return nil, stateUnavailable("committing", refused.err)
	case err == nil:
		return parseMarker(v, len(call.ops))
	}
	return r.settleCommit(call)
}

// settleCommit settles a commit whose answer was lost, with its marker
// (stateAbortScript): its results if it applied, ErrUnavailable (nothing
// applied, and it never will) if not. It tries for a few seconds.
func (r *RedisState) settleCommit(call *stateCall) ([]state.Result, error) {
	var last error
	for try := range 5 {
		if try > 0 {
			time.Sleep(time.Duration(try) * 100 * time.Millisecond) // the client's back-off between tries
		}
		if r.link.down.Load() {
			last = errors.New("the store takes Redis for down until a heartbeat gets through")
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
		cmd, werr := r.link.evalWaited(ctx, stateAbortScript, []string{call.keys[0]}, call.guard.keep.UnixMilli())
		cancel()
		v, err := cmd.Text()
		switch {
		case err != nil:
			r.link.failed(err)
			last = err
		case werr != nil:
			last = werr
		case v == markerAborted:
			return nil, fmt.Errorf("%w: Redis did not confirm the commit in time; nothing was written", state.ErrUnavailable)
		default:
			return parseMarker(v, len(call.ops))
		}
	}
	return nil, fmt.Errorf("%w: Redis did not answer: the commit may have applied: %w", state.ErrUnknown, last)
}

// markerAborted is the marker of a commit settled unapplied.
const markerAborted = "ABORTED"

// isAppliedMarker reports whether v is the marker of a commit that
// applied: its results ("OK,existed,ms,counter,…", parseMarker).
func isAppliedMarker(v string) bool { return v == "OK" || strings.HasPrefix(v, "OK,") }

// newCommitID names a commit's marker.
func newCommitID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
