package statestore

import (
	"context"
	"encoding/hex"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/ratelog"
	"github.com/cmdhost/cmdhost/internal/state"
)

// notifyRoot starts every notify topic: clients/statestore/v1/<id>/.
const notifyRoot = "clients/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/"

// NotifyTopic is the topic of the notifications of key to the client
// clientID: notifyRoot, the client id and the key in upper-case hex
// (the Rust SDK decodes only upper case), /command/notify/ between them.
func NotifyTopic(clientID string, key []byte) string {
	return notifyPrefix(clientID) + hexUpper(key)
}

// NotifyFilter is the filter of every notify topic of the client
// clientID.
func NotifyFilter(clientID string) string { return notifyPrefix(clientID) + "+" }

func notifyPrefix(clientID string) string {
	return notifyRoot + hexUpper([]byte(clientID)) + "/command/notify/"
}

func hexUpper(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) }

// keyNotify registers the caller for key's notifications: +OK, again
// for a key registered already. A registration is the client's that the
// broker says sent the request (abi.Caller.ClientID), never one a
// request claims (__srcId).
func (s *Server) keyNotify(c abi.Caller, r *request) []byte {
	if s.cfg.Publish == nil {
		return errorReply("notifications are not served here")
	}
	if c.ClientID == "" {
		return errorReply("notifications need the client id the broker vouches for, and this broker gives none")
	}
	if !s.regs.add(c.ClientID, string(r.key), s.cfg.MaxClientRegistrations, s.cfg.MaxRegistrations) {
		return errorReply(MsgQuota)
	}
	if s.cfg.Reach != nil {
		if err := s.cfg.Reach(c.ClientID, NotifyFilter(c.ClientID)); err != nil {
			s.log.Debug("state store protocol: a registration of a client that is gone dropped", "client", cleanLine(c.ClientID, 128), "err", err)
			s.regs.remove(c.ClientID, string(r.key))
			return replyOK // nobody is there to read the reply either
		}
	}
	if s.cfg.Connected != nil && !s.cfg.Connected(c.ClientID) {
		// It went as the registration was made, and its ClientGone may
		// have come first.
		s.regs.remove(c.ClientID, string(r.key))
	}
	return replyOK
}

// keyNotifyStop ends the caller's registration for key: +OK, or :0 when
// there was none.
func (s *Server) keyNotifyStop(c abi.Caller, r *request) []byte {
	if c.ClientID != "" && s.regs.remove(c.ClientID, string(r.key)) {
		return replyOK
	}
	return replyNone
}

// ClientGone drops the registrations of a client that disconnected (the
// broker tells; the client registers again after it reconnects).
func (s *Server) ClientGone(clientID string) { s.regs.drop(clientID) }

// Stats are the server's counters.
type Stats struct {
	Registrations int    // KEYNOTIFY registrations now
	Published     uint64 // notifications published
	Dropped       uint64 // notifications dropped: the queue was full
	Failed        uint64 // notifications whose publish failed
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	return Stats{Registrations: s.regs.len(), Published: s.queue.published.Load(), Dropped: s.queue.dropped.Load(),
		Failed: s.queue.failed.Load()}
}

// changed queues the notifications of a commit's or a sweep's changes.
// It runs on the store's writer: it takes a read lock and never waits
// for room (a full queue drops).
func (s *Server) changed(changes []state.Change) {
	if s.regs.len() == 0 {
		return
	}
	for _, c := range changes {
		key, ok := state.ProtocolKeyOf(c.NS, c.Key)
		if !ok {
			continue
		}
		clients := s.regs.clients(string(key))
		if len(clients) == 0 {
			continue
		}
		payload := notifyDelete
		if !c.Deleted {
			payload = notifySet(c.Value)
		}
		ts := versionString(c.Version, s.cfg.NodeID)
		for _, id := range clients {
			s.queue.put(key, notice{topic: NotifyTopic(id, key), payload: payload, ts: ts})
		}
	}
}

// registry holds the KEYNOTIFY registrations, by key and by client.
type registry struct {
	mu       sync.RWMutex
	byKey    map[string]map[string]struct{} // key → client ids
	byClient map[string]map[string]struct{} // client id → keys
	n        atomic.Int64
}

// add registers client for key within the bounds; false when past them.
func (r *registry) add(client, key string, maxClient, maxTotal int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := r.byClient[client]
	if _, ok := keys[key]; ok {
		return true
	}
	if len(keys) >= maxClient || r.n.Load() >= int64(maxTotal) {
		return false
	}
	if r.byKey == nil {
		r.byKey, r.byClient = map[string]map[string]struct{}{}, map[string]map[string]struct{}{}
	}
	if keys == nil {
		keys = map[string]struct{}{}
		r.byClient[client] = keys
	}
	keys[key] = struct{}{}
	ids := r.byKey[key]
	if ids == nil {
		ids = map[string]struct{}{}
		r.byKey[key] = ids
	}
	ids[client] = struct{}{}
	r.n.Add(1)
	return true
}

// remove ends client's registration for key; false when there was none.
func (r *registry) remove(client, key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byClient[client][key]; !ok {
		return false
	}
	r.unlink(client, key)
	if len(r.byClient[client]) == 0 {
		delete(r.byClient, client)
	}
	return true
}

// drop ends every registration of client.
func (r *registry) drop(client string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key := range r.byClient[client] {
		r.unlink(client, key)
	}
	delete(r.byClient, client)
}

// unlink removes one registration; r.mu is held.
func (r *registry) unlink(client, key string) {
	delete(r.byClient[client], key)
	if ids := r.byKey[key]; ids != nil {
		delete(ids, client)
		if len(ids) == 0 {
			delete(r.byKey, key)
		}
	}
	r.n.Add(-1)
}

// clients are the clients registered for key.
func (r *registry) clients(key string) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ids := r.byKey[key]
	if len(ids) == 0 {
		return nil
	}
	out := make([]string, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	return out
}

func (r *registry) len() int { return int(r.n.Load()) }

// notice is a notification to publish.
type notice struct {
	topic   string
	payload []byte
	ts      string
}

func (n *notice) size() int64 { return int64(len(n.topic) + len(n.payload) + len(n.ts)) }

// queueShards is how many publishers publish at once. A key's
// notifications all go through one of them (by the key's hash), so they
// are published in the order of its changes.
const queueShards = 4

// publishTimeout bounds one notification's publish.
const publishTimeout = 10 * time.Second

// queue holds the notifications waiting to be published, bounded in
// count and bytes; its publishers publish them.
type queue struct {
	shards  []chan notice
	seed    maphash.Seed
	bytes   atomic.Int64
	max     int64
	publish func(ctx context.Context, topic string, payload []byte, ts string) error
	log     *slog.Logger
	lines   ratelog.Limiter // the lines of drops and failed publishes
	ctx     context.Context
	cancel  context.CancelFunc
	done    sync.WaitGroup

	published, dropped, failed atomic.Uint64
}

func newQueue(n int, maxBytes int64, publish func(context.Context, string, []byte, string) error, log *slog.Logger) *queue {
	q := &queue{seed: maphash.MakeSeed(), max: maxBytes, publish: publish, log: log, lines: ratelog.Limiter{Interval: time.Second}}
	q.ctx, q.cancel = context.WithCancel(context.Background())
	if publish == nil {
		return q
	}
	for range queueShards {
		ch := make(chan notice, max(1, n/queueShards))
		q.shards = append(q.shards, ch)
		q.done.Add(1)
		go q.run(ch)
	}
	return q
}

// put queues n, a notification of key, or drops it when the queue is
// full.
func (q *queue) put(key []byte, n notice) {
	if len(q.shards) == 0 {
		return
	}
	size := n.size()
	if q.bytes.Add(size) > q.max {
		q.bytes.Add(-size)
		q.drop("bytes")
		return
	}
	select {
	case q.shards[maphash.Bytes(q.seed, key)%queueShards] <- n:
	default:
		q.bytes.Add(-size)
		q.drop("notifications")
	}
}

func (q *queue) drop(full string) {
	q.dropped.Add(1)
	if ok, leftOut := q.lines.Allow(time.Now()); ok {
		q.log.Warn("state store protocol: a notification dropped: the queue is full of "+full, "dropped_not_logged", leftOut)
	}
}

// run publishes what one shard holds, in order.
func (q *queue) run(ch chan notice) {
	defer q.done.Done()
	for n := range ch {
		if q.ctx.Err() != nil {
			q.bytes.Add(-n.size())
			continue // closing: dropped
		}
		ctx, cancel := context.WithTimeout(q.ctx, publishTimeout)
		err := q.publish(ctx, n.topic, n.payload, n.ts)
		cancel()
		q.bytes.Add(-n.size()) // held until published: the bound counts what is on its way
		if err != nil {
			q.failed.Add(1)
			if ok, leftOut := q.lines.Allow(time.Now()); ok {
				q.log.Warn("state store protocol: a notification not published", "topic", cleanLine(n.topic, 160), "err", err, "not_logged", leftOut)
			}
			continue
		}
		q.published.Add(1)
	}
}

// close stops the publishers: what is queued is dropped.
func (q *queue) close() {
	q.cancel()
	for _, ch := range q.shards {
		close(ch)
	}
	q.done.Wait()
}
