package cache

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/internal/state"
)

// The outbox in Redis. The messages a non-idempotent call published
// (state.Commit.Messages) are added to a Redis Stream by the script that
// records the call's outcome and commits its writes (stateCommitScript):
// they are in Redis if and only if the outcome is, and never for a call
// that failed. Each host set (the replicas of one executor id) has one
// stream per namespace, in that namespace's hash tag, so that on a Redis
// Cluster the commit touches one slot:
//
//	cmdhost:state:{T}:q:GROUP    the stream: entries i (the message's
//	                             id) and b (its body), in commit order
//	cmdhost:state:{T}:qb:GROUP   the bytes it holds (ids and bodies)
//	cmdhost:outbox:GROUP         the host set's streams (a set), which
//	                             its senders read
//
// Senders read a stream through its consumer group (XREADGROUP, group
// redisOutboxGroup), each replica a consumer named after its MQTT client
// id: a message read is pending with its reader until the reader, once
// the broker acknowledged it (PUBACK), takes it out (XACK and XDEL, with
// its bytes). A reader that fails to send reads its pending messages
// again first (they are its to send, in order); a process that restarts
// with the same client id finds its own at once. The messages of a
// replica that died are taken over by another one (XAUTOCLAIM) once they
// have been pending ClaimIdle: so with two replicas each message goes out
// once normally, and more than once only when a reader died (or stalled
// for ClaimIdle) between the broker's acknowledgement and its XACK —
// always with the same id, which a receiver checks (docs/messages.md).
//
// A stream is bounded (MaxMessages, MaxBytes): a commit that would pass
// a bound is refused whole (a *state.QuotaError, "outbox messages" or
// "outbox bytes": nothing applied), and a guest that publishes into an
// outbox the sender last found full is told at once (state.Txn.Publish,
// RedisState.OutboxBytesIn).
type RedisOutbox struct {
	link  *redisLink
	cfg   RedisOutboxConfig
	index string
	ready chan struct{}

	// mu guards the maps and lastClaim: commits (prepare, bytesIn) run on
	// the executor's goroutines, Queued and Dequeue on the sender's (one
	// goroutine, package outbox).
	mu sync.Mutex
	// streams are the streams this process committed to or found in the
	// index; bytes and count what each held at the last read.
	streams    map[string]bool
	bytes      map[string]int64
	count      map[string]int64
	registered map[string]bool // on a cluster: streams added to the index by this process
	lastClaim  time.Time       // the last XAUTOCLAIM round (claimDue)

	takenOver atomic.Uint64
}

// RedisOutboxConfig configures a RedisOutbox.
type RedisOutboxConfig struct {
	// Group is the host set whose messages these are (its executor id):
	// its replicas share them.
	Group string
	// Consumer is this process among them: its MQTT client id, the same
	// at a restart (it then finds its own messages at once).
	Consumer string
	// MaxMessages and MaxBytes bound a namespace's stream: 0 takes
	// DefaultOutboxMessages and state.DefaultMaxOutboxBytes.
	MaxMessages int64
	MaxBytes    int64
	// ClaimIdle is how long a message stays pending with a reader before
	// another replica takes it over; 0: DefaultOutboxClaimIdle; Off
	// (negative, package setting): never (a reader's messages wait for
	// it to restart with the same Consumer).
	ClaimIdle time.Duration
}

// The outbox's defaults and bounds.
const (
	DefaultOutboxMessages  = 100_000
	DefaultOutboxClaimIdle = 30 * time.Second
	redisOutboxGroup       = "cmdhost"
	redisOutboxIndex       = "cmdhost:outbox:"
	// redisConsumerForget is how long a reader with nothing pending stays
	// in a group without reading before it is removed (a replica gone).
	redisConsumerForget = time.Hour
)

// Outbox returns the outbox of this store's Redis (see RedisOutbox):
// its state store's commits add their messages to it. The first call's
// cfg holds: one outbox per dedup store.
func (s *RedisDedup[V]) Outbox(cfg RedisOutboxConfig) *RedisOutbox {
	rs := s.State(state.Limits{})
	if o := rs.outbox.Load(); o != nil {
		return o
	}
	if cfg.MaxMessages <= 0 {
		cfg.MaxMessages = DefaultOutboxMessages
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = rs.limits.MaxOutboxBytes
	}
	if cfg.ClaimIdle == 0 {
		cfg.ClaimIdle = DefaultOutboxClaimIdle
	}
	o := &RedisOutbox{link: s.redisLink, cfg: cfg, index: redisOutboxIndex + cfg.Group, ready: make(chan struct{}, 1),
		streams: map[string]bool{}, bytes: map[string]int64{}, count: map[string]int64{}, registered: map[string]bool{}}
	if !rs.outbox.CompareAndSwap(nil, o) {
		return rs.outbox.Load()
	}
	return o
}

// streamOf is the stream and the bytes counter of ns's messages.
func (o *RedisOutbox) streamOf(ns string) (stream, counter string) {
	sp := spaceOf(ns)
	return sp.base + "q:" + o.cfg.Group, sp.base + "qb:" + o.cfg.Group
}

// outboxCall is the outbox part of a commit: its keys and arguments.
type outboxCall struct {
	ns            string
	keys          []string // the stream, its counter, and (not on a cluster) the index
	args          []any    // id, body per message
	n             int
	max, maxBytes int64
}

// prepare makes the outbox part of a commit of msgs into ns's stream;
// on a cluster it adds the stream to the index first (the index is in
// another slot than the commit).
func (o *RedisOutbox) prepare(ctx context.Context, ns string, msgs []state.Message) (*outboxCall, error) {
	stream, counter := o.streamOf(ns)
	q := &outboxCall{ns: ns, keys: []string{stream, counter}, n: len(msgs), max: o.cfg.MaxMessages, maxBytes: o.cfg.MaxBytes}
	o.mu.Lock()
	o.streams[stream] = true
	known := o.registered[stream]
	o.mu.Unlock()
	if !o.link.cluster {
		q.keys = append(q.keys, o.index)
	} else if !known {
		ctx, cancel := context.WithTimeout(ctx, redisOpTimeout)
		err := o.link.rdb.SAdd(ctx, o.index, stream).Err()
		cancel()
		if err != nil {
			o.link.failed(err)
			return nil, stateUnavailable("adding a stream to the outbox's index", err)
		}
		o.mu.Lock()
		o.registered[stream] = true
		o.mu.Unlock()
	}
	for _, m := range msgs {
		q.args = append(q.args, m.ID, m.Body)
	}
	return q, nil
}

// signal tells the sender that messages joined the outbox.
func (o *RedisOutbox) signal() {
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

// OutboxReady is signalled when this process commits messages (those
// of other replicas are found at the sender's next poll).
func (o *RedisOutbox) OutboxReady() <-chan struct{} { return o.ready }

// OutboxBytes is what the host set's streams held at the last read.
func (o *RedisOutbox) OutboxBytes() int64 { return o.total(o.bytes) }

// OutboxMessages is the messages the host set's streams held at the
// last read.
func (o *RedisOutbox) OutboxMessages() int64 { return o.total(o.count) }

// total sums per-stream figures (bytes or count) under o.mu.
func (o *RedisOutbox) total(per map[string]int64) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var n int64
	for _, v := range per {
		n += v
	}
	return n
}

// bytesIn is what ns's stream held at the last read.
func (o *RedisOutbox) bytesIn(ns string) int64 {
	stream, _ := o.streamOf(ns)
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bytes[stream]
}

// TakenOver counts the messages this process took over from another
// reader (XAUTOCLAIM).
func (o *RedisOutbox) TakenOver() uint64 { return o.takenOver.Load() }

// Queued returns messages for this process to send, each read into its
// pending list: first those pending with it already (a send that
// failed, a restart), then those it takes over from readers idle for
// ClaimIdle (checked every ClaimIdle/4), then new ones; up to limit of
// each, per stream.
func (o *RedisOutbox) Queued(ctx context.Context, limit int) ([]state.Queued, error) {
	if o.link.down.Load() {
		return nil, fmt.Errorf("%w: Redis did not answer; the next heartbeat tries again", state.ErrUnavailable)
	}
	ctx, cancel := context.WithTimeout(ctx, redisOpTimeout)
	defer cancel()
	streams, err := o.allStreams(ctx)
	if err != nil {
		return nil, err
	}
	claim := o.claimDue()
	type reads struct {
		stream   string
		own, new *redis.XStreamSliceCmd
		claimed  *redis.XAutoClaimCmd
		length   *redis.IntCmd
		counter  *redis.StringCmd
	}
	pipe := o.link.rdb.Pipeline()
	all := make([]*reads, 0, len(streams))
	for _, stream := range streams {
		r := &reads{stream: stream}
		read := func(from string) *redis.XStreamSliceCmd {
			return pipe.XReadGroup(ctx, &redis.XReadGroupArgs{Group: redisOutboxGroup, Consumer: o.cfg.Consumer,
				Streams: []string{stream, from}, Count: int64(limit), Block: -1})
		}
		r.own = read("0")
		if claim {
			r.claimed = pipe.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: stream, Group: redisOutboxGroup, Consumer: o.cfg.Consumer,
				MinIdle: o.cfg.ClaimIdle, Start: "0-0", Count: int64(limit)})
		}
		r.new = read(">")
		r.length = pipe.XLen(ctx, stream)
		r.counter = pipe.Get(ctx, counterOf(stream))
		all = append(all, r)
	}
	_, _ = pipe.Exec(ctx)
	var out []state.Queued
	var orphans []string // pending entries that were deleted: acknowledged below
	for _, r := range all {
		for _, cmd := range []*redis.XStreamSliceCmd{r.own, r.new} {
			res, err := cmd.Result()
			switch {
			case errors.Is(err, redis.Nil):
				continue
			case err != nil && strings.HasPrefix(err.Error(), "NOGROUP"):
				o.recreateGroup(ctx, r.stream)
				continue
			case err != nil:
				o.link.failed(err)
				return nil, stateUnavailable("reading the outbox", err)
			}
			for _, s := range res {
				out, orphans = appendQueued(out, orphans, r.stream, s.Messages)
			}
		}
		if r.claimed != nil {
			msgs, _, err := r.claimed.Result()
			if err == nil {
				o.takenOver.Add(uint64(len(msgs)))
				out, orphans = appendQueued(out, orphans, r.stream, msgs)
			}
		}
		o.mu.Lock()
		o.count[r.stream] = r.length.Val()
		o.bytes[r.stream], _ = strconv.ParseInt(r.counter.Val(), 10, 64)
		o.mu.Unlock()
	}
	if len(orphans) > 0 {
		o.ackOrphans(ctx, orphans)
	}
	if claim {
		o.forgetConsumers(ctx, streams)
	}
	return out, nil
}

// counterOf is the bytes counter of stream ("…{T}:q:G" → "…{T}:qb:G":
// the first "}:q:" ends the hash tag, where '}' is written %7D).
func counterOf(stream string) string {
	i := strings.Index(stream, "}:q:")
	if i < 0 {
		return stream + ":qb"
	}
	return stream[:i] + "}:qb:" + stream[i+4:]
}

// appendQueued adds a stream's entries to out; an entry without fields
// (deleted while pending) goes to orphans.
func appendQueued(out []state.Queued, orphans []string, stream string, msgs []redis.XMessage) ([]state.Queued, []string) {
	for _, m := range msgs {
		if len(m.Values) == 0 {
			orphans = append(orphans, stream+"\x00"+m.ID)
			continue
		}
		id, _ := m.Values["i"].(string)
		body, _ := m.Values["b"].(string)
		// The key says where it is and what it counts (Dequeue).
		key := stream + "\x00" + m.ID + "\x00" + strconv.Itoa(len(id)+len(body))
		out = append(out, state.Queued{Key: []byte(key), Message: state.Message{ID: id, Body: []byte(body)}})
	}
	return out, orphans
}

// allStreams is the host set's streams: the index's and this process's.
func (o *RedisOutbox) allStreams(ctx context.Context) ([]string, error) {
	members, err := o.link.rdb.SMembers(ctx, o.index).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		o.link.failed(err)
		return nil, stateUnavailable("reading the outbox's index", err)
	}
	o.mu.Lock()
	for _, m := range members {
		if strings.Contains(m, "}:q:") {
			o.streams[m] = true
		}
	}
	streams := make([]string, 0, len(o.streams))
	for s := range o.streams {
		streams = append(streams, s)
	}
	o.mu.Unlock()
	sort.Strings(streams)
	return streams, nil
}

// claimDue reports whether a round of takeovers is due (every
// ClaimIdle/4; never when ClaimIdle is Off), and starts it.
func (o *RedisOutbox) claimDue() bool {
	if o.cfg.ClaimIdle < 0 {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if time.Since(o.lastClaim) < o.cfg.ClaimIdle/4 {
		return false
	}
	o.lastClaim = time.Now()
	return true
}

// recreateGroup makes a stream's group again when it was removed (not
// the stream: a stream that is gone stays gone).
func (o *RedisOutbox) recreateGroup(ctx context.Context, stream string) {
	_ = o.link.rdb.XGroupCreate(ctx, stream, redisOutboxGroup, "0").Err()
}

// ackOrphans acknowledges pending entries that were deleted.
func (o *RedisOutbox) ackOrphans(ctx context.Context, orphans []string) {
	for _, k := range orphans {
		stream, id, _ := strings.Cut(k, "\x00")
		_ = o.link.rdb.XAck(ctx, stream, redisOutboxGroup, id).Err()
	}
}

// forgetConsumers removes the readers of streams that have nothing
// pending and have not read for redisConsumerForget (replicas gone), so
// that a group's readers stay bounded.
func (o *RedisOutbox) forgetConsumers(ctx context.Context, streams []string) {
	for _, stream := range streams {
		cs, err := o.link.rdb.XInfoConsumers(ctx, stream, redisOutboxGroup).Result()
		if err != nil {
			continue
		}
		for _, c := range cs {
			if c.Name != o.cfg.Consumer && c.Pending == 0 && c.Idle > redisConsumerForget {
				_ = o.link.rdb.XGroupDelConsumer(ctx, stream, redisOutboxGroup, c.Name).Err()
			}
		}
	}
}

// Dequeue takes the messages under keys (from Queued), which the broker
// acknowledged, out of the outbox: acknowledged in the group and
// deleted, their bytes given back. One lost here (Redis did not answer)
// is sent again, with its id.
func (o *RedisOutbox) Dequeue(ctx context.Context, keys [][]byte) error {
	byStream := map[string][]any{}
	var order []string
	for _, k := range keys {
		stream, rest, ok := strings.Cut(string(k), "\x00")
		id, size, ok2 := strings.Cut(rest, "\x00")
		if !ok || !ok2 {
			continue
		}
		if _, seen := byStream[stream]; !seen {
			order = append(order, stream)
		}
		byStream[stream] = append(byStream[stream], id, size)
	}
	ctx, cancel := context.WithTimeout(ctx, redisOpTimeout)
	defer cancel()
	pipe := o.link.rdb.Pipeline()
	cmds := make([]*redis.Cmd, 0, len(order))
	for _, stream := range order {
		args := append([]any{redisOutboxGroup}, byStream[stream]...)
		cmds = append(cmds, outboxAckScript.EvalSha(ctx, pipe, []string{stream, counterOf(stream)}, args...))
	}
	_, _ = pipe.Exec(ctx)
	for i, cmd := range cmds {
		err := cmd.Err()
		if isScriptMissing(err) {
			stream := order[i]
			args := append([]any{redisOutboxGroup}, byStream[stream]...)
			err = outboxAckScript.Run(ctx, o.link.rdb, []string{stream, counterOf(stream)}, args...).Err()
		}
		if err != nil {
			o.link.failed(err)
			return stateUnavailable("taking sent messages out of the outbox", err)
		}
	}
	return nil
}

// outboxAckScript takes sent messages out of a stream (KEYS[1]) and
// their bytes out of its counter (KEYS[2]): ARGV[1] the group, then an
// entry id and its bytes per message. An entry deleted already (another
// reader took it over and sent it too) gives back nothing. It runs when
// Redis is out of memory (it frees some).
var outboxAckScript = redis.NewScript(`#!lua flags=allow-oom
local freed = 0
for j = 2, #ARGV, 2 do
  redis.call('XACK', KEYS[1], ARGV[1], ARGV[j])
  if redis.call('XDEL', KEYS[1], ARGV[j]) == 1 then freed = freed + tonumber(ARGV[j + 1]) end
end
if freed > 0 then
  if redis.call('DECRBY', KEYS[2], freed) < 0 then redis.call('SET', KEYS[2], 0) end
end
return freed`)
