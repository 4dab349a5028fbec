package session

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/packets"
	pahosession "github.com/eclipse/paho.golang/paho/session"

	"github.com/cmdhost/cmdhost/internal/redact"
)

// What keeps a reply from holding a send slot for good, and how the host
// notices a broker that no longer acknowledges.
//
// Each reply is a QoS 1 PUBLISH, and paho sends at most the broker's
// Receive Maximum of them before their PUBACKs (its send quota). paho
// keeps a PUBLISH, and its slot, until the broker acks it, however long
// that takes: a broker that never does (mochi drops a client's PUBLISH to
// `$SYS/…` without a word) took one slot per such reply, and a thousand of
// them stopped every reply for good while the connection stayed up.
//
// So the session watches its replies (replyWatch, fed by watchedSession,
// which wraps the client's session), unless Config.ReplyAckTimeout is
// negative (the invoker's, whose requests are its own to give up):
//
//   - A reply not acknowledged within its bound is abandoned: its slot is
//     released and it is not sent again after a reconnect (paho's
//     State.Abandon, a cmdhost change in third_party). The bound is the
//     reply's own message expiry (after it the broker would drop the reply
//     anyway, and its invoker has stopped waiting), at most
//     Config.ReplyAckTimeout (30 s): a broker that took longer to ack one
//     PUBLISH is not acking, and a reply whose PUBACK a dropped connection
//     lost is sent again only after a reconnect within that time (beyond
//     it, the invoker resends its request and the dedup store answers).
//     Counted (Stats.RepliesAbandoned) and logged, once per check.
//   - The broker is silent when replies have been waiting and none has
//     been acknowledged for a while. Silent for a third of ReplyAckTimeout:
//     the session is not ready (Ready; the executor's Ready and /readyz
//     503, naming how many replies wait and for how long). Silent for
//     ReplyAckTimeout: the connection is dropped (Stats.ConnectionsRecycled)
//     and autopaho connects again; a new connection starts with a fresh
//     send quota.
//
// The ages are read on Config.Clock, so tests drive them with a fake clock;
// a ticker on the real clock runs the check (replyCheckInterval), and so
// does Ready.

// DefaultReplyAckTimeout is Config.ReplyAckTimeout when it is not set.
const DefaultReplyAckTimeout = 30 * time.Second

// replyCheckInterval is how often the session checks its replies.
const replyCheckInterval = time.Second

// watchedSession is the client's session, telling w when a reply goes
// out, when the broker acks one and when a connection starts.
type watchedSession struct {
	pahosession.SessionManager
	w *replyWatch
}

func (s *watchedSession) AddToSession(ctx context.Context, packet pahosession.Packet, resp chan<- packets.ControlPacket) error {
	err := s.SessionManager.AddToSession(ctx, packet, resp)
	if p, ok := packet.(*packets.Publish); ok && err == nil {
		s.w.sent(p) // before paho writes it: its PUBACK cannot come first
	}
	return err
}

func (s *watchedSession) PacketReceived(recv *packets.ControlPacket, pubs chan<- *packets.Publish) error {
	if pa, ok := recv.Content.(*packets.Puback); ok {
		s.w.acked(pa.PacketID)
	}
	return s.SessionManager.PacketReceived(recv, pubs)
}

func (s *watchedSession) ConAckReceived(conn io.Writer, cp *packets.Connect, ca *packets.Connack) error {
	err := s.SessionManager.ConAckReceived(conn, cp, ca)
	s.w.connected(ca.SessionPresent)
	return err
}

// outstanding is a reply waiting for its PUBACK.
type outstanding struct {
	sent   time.Time // when paho took it
	giveUp time.Time // when it is abandoned
}

// replyWatch keeps the replies waiting for their PUBACK. Its methods are
// called from paho's goroutines (sent from the publishers', acked from the
// reader, connected from the connecting one) and from the check; mu
// guards all of it.
type replyWatch struct {
	now        func() time.Time
	ackTimeout time.Duration

	mu      sync.Mutex
	waiting map[uint16]outstanding
	// silentSince is when the broker's current silence began: the oldest
	// reply sent since its last PUBACK (or since the connection began)
	// that is still waiting or was abandoned; zero when there is none.
	silentSince time.Time
}

func newReplyWatch(now func() time.Time, ackTimeout time.Duration) *replyWatch {
	return &replyWatch{now: now, ackTimeout: ackTimeout, waiting: map[uint16]outstanding{}}
}

func (w *replyWatch) sent(p *packets.Publish) {
	now := w.now()
	bound := w.ackTimeout
	if p.Properties != nil && p.Properties.MessageExpiry != nil && *p.Properties.MessageExpiry > 0 {
		bound = min(bound, time.Duration(*p.Properties.MessageExpiry)*time.Second)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waiting[p.PacketID] = outstanding{sent: now, giveUp: now.Add(bound)}
	if w.silentSince.IsZero() {
		w.silentSince = now
	}
}

func (w *replyWatch) acked(id uint16) {
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.waiting, id)
	w.restartSilence(now)
}

// connected starts a connection's watch: the replies a session that is
// not present held are gone (paho cleans its state), the others are sent
// again and wait anew.
func (w *replyWatch) connected(sessionPresent bool) {
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !sessionPresent {
		clear(w.waiting)
	}
	w.restartSilence(now)
}

// restartSilence: the broker just spoke (w.mu held).
func (w *replyWatch) restartSilence(now time.Time) {
	w.silentSince = time.Time{}
	if len(w.waiting) > 0 {
		w.silentSince = now
	}
}

// silence returns how long the broker has been silent with replies
// waiting, and how many wait (w.mu held).
func (w *replyWatch) silence(now time.Time) (time.Duration, int) {
	if w.silentSince.IsZero() {
		return 0, len(w.waiting)
	}
	return max(0, now.Sub(w.silentSince)), len(w.waiting)
}

// ready returns an error when the broker has been silent for a third of
// the ack timeout.
func (w *replyWatch) ready(now time.Time) error {
	w.mu.Lock()
	silent, n := w.silence(now)
	w.mu.Unlock()
	if silent < w.ackTimeout/3 {
		return nil
	}
	return fmt.Errorf("the broker has acknowledged none of the host's replies for %s (%d waiting for their PUBACK)",
		silent.Round(time.Second), n)
}

// verdict is what a check found.
type verdict struct {
	abandoned int           // replies given up now
	recycle   bool          // the broker is silent for the ack timeout: drop the connection
	silent    time.Duration // how long it has been silent
	waiting   int           // replies waiting (before this check's abandons)
}

// check abandons the replies past their bound (through abandon, paho's)
// and says whether the connection is to be dropped.
func (w *replyWatch) check(now time.Time, abandon func(uint16) bool) verdict {
	w.mu.Lock()
	defer w.mu.Unlock()
	var v verdict
	v.silent, v.waiting = w.silence(now)
	for id, o := range w.waiting {
		if now.Before(o.giveUp) {
			continue
		}
		delete(w.waiting, id)
		if abandon(id) { // false: acked or gone meanwhile
			v.abandoned++
		}
	}
	if v.silent >= w.ackTimeout {
		v.recycle = true
		w.silentSince = now // once per ack timeout, until a connection restarts it
	}
	return v
}

// checkReplies runs the check and acts on it; the watch loop calls it
// every replyCheckInterval.
func (s *Session) checkReplies() {
	v := s.watch.check(s.cfg.Clock.Now(), s.state.Abandon)
	if v.abandoned > 0 {
		s.stats.repliesAbandoned.Add(int64(v.abandoned))
		s.log.Warn("replies the broker did not acknowledge in time given up: their send slots are free again and they are not resent",
			"replies", v.abandoned, "bound", s.cfg.ReplyAckTimeout)
	}
	if v.recycle {
		s.stats.connectionsRecycled.Add(1)
		s.log.Error("the broker has acknowledged none of the host's replies for too long: dropping the connection to reconnect",
			"broker", redact.URL(s.attempted()), "silent", v.silent.Round(time.Second), "waiting", v.waiting)
		s.dropConnection()
	}
}

// watchReplies checks the replies every replyCheckInterval until
// Disconnect.
func (s *Session) watchReplies() {
	t := time.NewTicker(replyCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.checkReplies()
		case <-s.closed:
			return
		}
	}
}
