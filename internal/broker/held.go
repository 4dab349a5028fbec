package broker

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/ratelog"
)

// What the broker holds for the clients over TCP, and for how long.
//
// mochi keeps each QoS 1/2 message it sends a client until the client
// acknowledges it, for as long as the client's session lasts, connected
// or not: up to Config.MaxInflight (1,024) per client whatever their
// size, for the session expiry the client chose. A client with Receive
// Maximum 1 and a one-hour session that sent 300 requests of 1 MiB and
// acknowledged none of the replies grew the host from 27 to 1,050 MiB,
// and kept them after it left. So what each TCP client holds is counted
// (a heldLedger per connection, kept by mochi's hooks below) and bounded
// in bytes and in time:
//
//   - Per client: once a client's unacknowledged messages reach
//     Config.MaxInflightBytes, messages for it are dropped until it
//     acknowledges (admit, asked by the guard's OnACLCheck before mochi
//     keeps a message; it is not told the message's size, so the message
//     that crosses the bound is still delivered).
//   - All clients: once what the TCP clients hold (unacknowledged, and
//     queued for their sockets: tcpconn.go) reaches Config.MaxHeldBytes,
//     the client holding the most is disconnected and what it holds
//     dropped (makeRoom). The host's own clients (in process) are not
//     counted and never lose.
//   - In time: a connected client that holds messages and acknowledges
//     none for Config.AckTimeout is disconnected as not acknowledging
//     (DISCONNECT 0x97), and what it holds dropped. A request (a message
//     with a response topic and an expiry) is acknowledged by its
//     executor only once it has answered (PROTOCOL.md): until the latest
//     such request held expires, the wait does not count. A session whose
//     client left keeps what it holds for disconnectedHold, so an invoker
//     that reconnects within it gets its replies, then loses it and is
//     sent nothing more. The time a client held messages in silence
//     before it left counts when it comes back: leaving and coming back
//     does not start its ack timeout anew.
//
// Each drop is counted (Stats.MessagesDropped, Stats.ClientsDropped) and
// logged, rate-limited, with the client, its user and why.
//
// Concurrency: a ledger's lock guards the ledger; holdings.mu guards the
// set of ledgers holding messages and the sweep's timer, and is taken
// under a ledger's lock, never the other way round. No lock of this file
// is held while mochi is called (its calls run the hooks below, which
// take a ledger's lock), except Inflight.Get in reconcile, which runs no
// hook. total is atomic.

// disconnectedHold is how long a session whose client left keeps the
// messages held for it: as long as the client id stays its user's
// (leftIDHold).
const disconnectedHold = leftIDHold

// sweepInterval is how often the ledgers holding messages are checked
// against the time bounds (while any holds one).
const sweepInterval = time.Second

// notAcknowledging and holdsTheMost are the DISCONNECTs of a client whose
// messages are dropped.
var (
	notAcknowledging = packets.Code{Code: packets.ErrQuotaExceeded.Code, Reason: "the client does not acknowledge what it is sent"}
	holdsTheMost     = packets.Code{Code: packets.ErrQuotaExceeded.Code, Reason: "the broker holds too much for its clients, and the most for this one"}
)

// holdings is the hook that keeps the ledgers, and their bounds.
type holdings struct {
	mqtt.HookBase
	srv   *mqtt.Server
	cfg   *Config
	stats *stats
	log   *slog.Logger
	clock clock.Clock

	// total is what the TCP clients' ledgers hold plus what is queued for
	// their sockets (boundedConn), in bytes.
	total atomic.Int64

	// drops rate-limits the log of drops apart from the refusals' (one
	// line a second, with the number left out): a flood of refused
	// deliveries must not hide who lost what it held.
	drops ratelog.Limiter

	mu      sync.Mutex
	holding map[*heldLedger]bool // the ledgers holding messages
	timer   clock.Timer          // the next sweep; nil when none is armed
	closed  bool

	room sync.Mutex // one makeRoom at a time

	// sentOnQuota is, for the clients in process (which have no ledger),
	// what a ledger's sentOnQuota is for a TCP client: the messages mochi
	// sent once the client's Receive Maximum let it, until their PUBACK
	// gives the quota back (heldhooks.go). The trigger session, in process
	// with a Receive Maximum of 64, stalled without it.
	quotaMu     sync.Mutex
	sentOnQuota map[*mqtt.Client]map[uint16]bool
}

func newHoldings(srv *mqtt.Server, cfg *Config, st *stats, log *slog.Logger, clk clock.Clock) *holdings {
	return &holdings{srv: srv, cfg: cfg, stats: st, log: log, clock: clk, holding: map[*heldLedger]bool{},
		drops: ratelog.Limiter{Interval: time.Second}}
}

func (h *holdings) ID() string { return "cmdhost-holdings" }

func (h *holdings) Provides(b byte) bool {
	switch b {
	case mqtt.OnQosPublish, mqtt.OnQosComplete, mqtt.OnQosDropped, mqtt.OnPacketSent, mqtt.OnPacketRead, mqtt.OnPublishDropped,
		mqtt.OnSessionEstablish, mqtt.OnDisconnect, mqtt.OnClientExpired, mqtt.OnPublish:
		return true
	}
	return false
}

// heldLedger is what the broker holds for one TCP connection's client:
// the PUBLISHes mochi keeps until the client acknowledges them.
type heldLedger struct {
	mu    sync.Mutex
	cl    *mqtt.Client     // the client, set at its first message
	msgs  map[uint16]int64 // by packet id: the message's size (messageBytes)
	bytes int64            // the sum of msgs
	// since is when the client last acknowledged a message, or began to
	// hold messages if later.
	since time.Time
	// silentBefore is how long the client had held messages without
	// acknowledging any while connected, when it resumed its session
	// (OnSessionEstablish): its first message here counts from then, so
	// that leaving and coming back does not start its ack timeout anew.
	silentBefore time.Duration
	// requestsUntil is the latest expiry of the requests it holds (zero
	// once it holds nothing): until then its silence does not count.
	requestsUntil time.Time
	// dirty: mochi dropped one of msgs without a hook (its packet queue
	// for the client was full); the next sweep finds which.
	dirty bool
	// sentOnQuota holds the messages mochi sent once the client's Receive
	// Maximum let it and forgot at once (OnPacketSent): the client's
	// PUBACK for one must still return its quota (OnPacketRead).
	sentOnQuota map[uint16]bool
	left        time.Time // when its connection ended; zero while it lasts
	// dropped: what it held was dropped, and it is sent nothing more (a
	// client that comes back has a new connection, and a new ledger).
	dropped bool
}

// ledgerOf returns the ledger of cl, nil for a client in process.
func ledgerOf(cl *mqtt.Client) *heldLedger {
	if c, ok := cl.Net.Conn.(*boundedConn); ok {
		return &c.held
	}
	return nil
}

// queuedOf returns the bytes queued for cl's socket.
func queuedOf(cl *mqtt.Client) int64 {
	if c, ok := cl.Net.Conn.(*boundedConn); ok {
		return c.queuedBytes()
	}
	return 0
}

// messageOverhead is what mochi keeps per message beside its strings: the
// packet itself.
const messageOverhead = int64(unsafe.Sizeof(packets.Packet{}))

// messageBytes is what mochi keeps of pk in memory.
func messageBytes(pk *packets.Packet) int64 {
	n := messageOverhead + int64(len(pk.TopicName)+len(pk.Payload)+len(pk.Properties.ResponseTopic)+
		len(pk.Properties.CorrelationData)+len(pk.Properties.ContentType))
	for _, u := range pk.Properties.User {
		n += int64(len(u.Key) + len(u.Val))
	}
	return n
}

// add counts message id of size on l.
func (h *holdings) add(l *heldLedger, cl *mqtt.Client, id uint16, size int64, requestUntil time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.msgs == nil {
		l.msgs = map[uint16]int64{}
	}
	old, had := l.msgs[id]
	if len(l.msgs) == 0 {
		l.cl, l.since = cl, h.clock.Now().Add(-l.silentBefore)
		l.silentBefore = 0
		h.track(l)
	}
	l.msgs[id] = size
	l.bytes += size - old
	h.total.Add(size - old)
	if !had && requestUntil.After(l.requestsUntil) {
		l.requestsUntil = requestUntil
	}
}

// remove uncounts message id of l; acked: the client acknowledged it
// (mochi also says so of its own PUBACK to a client's publish, whose id
// is not among the messages held).
func (h *holdings) remove(l *heldLedger, id uint16, acked bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, held := l.msgs[id]; held && acked {
		l.since = h.clock.Now()
	}
	h.forget(l, []uint16{id})
}

// forget uncounts ids of l. l.mu is held.
func (h *holdings) forget(l *heldLedger, ids []uint16) {
	for _, id := range ids {
		size, ok := l.msgs[id]
		if !ok {
			continue
		}
		delete(l.msgs, id)
		l.bytes -= size
		h.total.Add(-size)
		if len(l.msgs) == 0 {
			l.requestsUntil = time.Time{}
			h.untrack(l)
		}
	}
}

// track adds l to the ledgers holding messages, and arms the sweep if
// none is armed. l.mu is held.
func (h *holdings) track(l *heldLedger) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holding[l] = true
	if h.timer == nil && !h.closed {
		h.timer = h.clock.AfterFunc(sweepInterval, h.sweep)
	}
}

// untrack removes l from the ledgers holding messages. l.mu is held.
func (h *holdings) untrack(l *heldLedger) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.holding, l)
}

// close stops the sweeps.
func (h *holdings) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
}
