// Package rpctest is a packet-level fake MQTT v5 broker for driving a paho /
// autopaho client in tests, the way the METL executor tests drive theirs: the
// test delivers requests itself (Deliver), sees every packet the client sends
// (Published, Acks, Subscriptions), injects failed or missing acknowledgements
// (PushPublishAcks and friends) and cuts the network (Disconnect).
//
// It is not a router: a client's PUBLISH is recorded and acknowledged, never
// forwarded, and Deliver sends to the connected client whatever its
// subscriptions (so a test can check that the client filters topics itself).
// It speaks QoS 0 and 1 only and says so in its CONNACK (Maximum QoS 1).
//
// Wire it in with autopaho.ClientConfig.AttemptConnection = broker.Dial. Each
// Dial is a new net.Pipe "network connection"; sessions (subscriptions and
// unacknowledged deliveries) are kept per client id like a real broker: a
// reconnect with clean start false and session expiry > 0 gets SessionPresent
// and the unacknowledged QoS 1 deliveries again, with DUP set and the same
// packet ids.
//
// The broker serves one client at a time: a new CONNECT takes the connection
// slot over (closing the previous connection, as a session take-over would).
//
// The Wait methods observe the broker's side: WaitSubscribed returns once the
// SUBSCRIBE is recorded, which can be before the client has read its SUBACK.
// Disconnecting in that gap leaves paho's Subscribe waiting for its context
// (paho does not release an unanswered SUBSCRIBE on connection loss), so a
// test that disconnects should first see the client's Subscribe return.
package rpctest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"sync"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/packets"
)

var (
	// ErrNotConnected is returned by Deliver when there is nobody to deliver to:
	// no connection for QoS 0, and no session (connected or kept) for QoS 1.
	ErrNotConnected = errors.New("rpctest: no client connected")
	// ErrClosed is returned by Dial and Deliver after Close.
	ErrClosed = errors.New("rpctest: broker closed")
	// ErrRefused is returned by Dial while RefuseConnections(true) is in force.
	ErrRefused = errors.New("rpctest: connection refused (RefuseConnections)")
)

// Reason codes used by the fake broker's acknowledgements.
const (
	ReasonSuccess             byte = 0x00
	ReasonNoSubscriptionFound byte = 0x11 // UNSUBACK for a filter that was not subscribed
	ReasonUnspecifiedError    byte = 0x80
)

// Ack says how the broker answers one PUBLISH (QoS 1), SUBSCRIBE or UNSUBSCRIBE
// from the client: with success (the zero Ack), with a failure reason code, or
// not at all (Drop). It mirrors METL's push-acks kinds success / fail / drop.
type Ack struct {
	Drop   bool // send no acknowledgement at all
	Reason byte // reason code to answer with; 0 is success, >= 0x80 a failure
}

var (
	// AckSuccess acknowledges with success (what happens when no Ack is queued).
	AckSuccess = Ack{}
	// AckDrop sends no acknowledgement.
	AckDrop = Ack{Drop: true}
	// AckFail acknowledges with "unspecified error" (0x80), METL's "fail".
	AckFail = Ack{Reason: ReasonUnspecifiedError}
)

// AckWithReason acknowledges with the given reason code (e.g. 0x87 not authorized).
func AckWithReason(reason byte) Ack { return Ack{Reason: reason} }

// Broker is the fake broker. Create it with NewBroker; all methods are safe for
// concurrent use.
type Broker struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every state change (waiters select on it)
	closed  bool

	conns    map[*conn]struct{} // every live connection (for Close)
	current  *conn              // the connection that completed CONNECT last and is still up
	sessions map[string]*session
	last     *session // session of the last client that connected (target of Deliver while disconnected)
	assigned int      // counter for assigned client ids

	connects []*packets.Connect
	pubs     []*packets.Publish
	acks     []uint16

	pubAcks, subAcks, unsubAcks []Ack // queues: head answers the next packet of that kind

	noRedeliver bool
	refuse      bool   // Dial fails (the broker is "unreachable")
	maxPacket   uint32 // Maximum Packet Size in CONNACKs; 0: none
	receiveMax  uint16 // Receive Maximum in CONNACKs; 0: none (65,535)
}

// NewBroker returns a broker with no sessions and no queued faults.
func NewBroker() *Broker {
	return &Broker{
		changed:  make(chan struct{}),
		conns:    map[*conn]struct{}{},
		sessions: map[string]*session{},
	}
}

type session struct {
	clientID string
	expiry   uint32   // session expiry interval from CONNECT/DISCONNECT; 0 ends the session with the connection
	subs     []string // topic filters in subscription order, share-group prefix as given
	unacked  []*delivery
	inUse    map[uint16]bool
	nextID   uint16
}

// delivery is a QoS 1 PUBLISH sent (or queued) to the client and not yet acknowledged.
type delivery struct {
	id   uint16
	wire []byte // encoded packet, DUP clear
	sent bool   // has been written to some connection (so a resend must carry DUP)
}

func (s *session) allocID() (uint16, bool) {
	for range 65535 {
		s.nextID++
		if s.nextID == 0 {
			s.nextID = 1
		}
		if !s.inUse[s.nextID] {
			s.inUse[s.nextID] = true
			return s.nextID, true
		}
	}
	return 0, false
}

// Dial has the signature of autopaho.ClientConfig.AttemptConnection. It
// returns the client end of a fresh net.Pipe, wrapped so that concurrent
// writes keep packets whole (paho writes one packet in several writes; see
// packets.NewThreadSafeConn), and starts serving the other end.
func (b *Broker) Dial(_ context.Context, _ autopaho.ClientConfig, _ *url.URL) (net.Conn, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	if b.refuse {
		return nil, ErrRefused
	}
	srv, cli := net.Pipe()
	c := &conn{b: b, nc: srv, wake: make(chan struct{}, 1), done: make(chan struct{})}
	b.conns[c] = struct{}{}
	go c.writeLoop()
	go c.readLoop()
	return packets.NewThreadSafeConn(cli), nil
}

// Close drops every connection and refuses further Dials.
func (b *Broker) Close() error {
	b.mu.Lock()
	b.closed = true
	conns := make([]*conn, 0, len(b.conns))
	for c := range b.conns {
		conns = append(conns, c)
	}
	b.mu.Unlock()
	for _, c := range conns {
		b.drop(c)
	}
	return nil
}

// Disconnect closes the current connection abruptly, like a network failure:
// no DISCONNECT packet, the session is kept (if its expiry is > 0) with its
// unacknowledged deliveries. It does nothing when no client is connected.
func (b *Broker) Disconnect() {
	b.mu.Lock()
	c := b.current
	b.mu.Unlock()
	if c != nil {
		b.drop(c)
	}
}

// Flush waits until every packet the broker has queued for the current
// connection (acknowledgements, deliveries) has been written to it; net.Pipe
// writes return once the client has read them. A test calls it before
// Disconnect to cut the network only after what the broker already answered
// has arrived, as METL's mock client (whose acks are synchronous) does;
// otherwise a PUBACK still in the queue is lost and the client rightly
// publishes again after reconnecting. It returns at once when no client is
// connected.
func (b *Broker) Flush(ctx context.Context) error {
	return b.wait(ctx, "the connection's queue to be written", func() bool {
		c := b.current
		if c == nil {
			return true
		}
		c.qmu.Lock()
		defer c.qmu.Unlock()
		return c.unwritten == 0
	})
}

// Deliver sends p to the connected client as the broker would forward a
// message: QoS 1 gets a fresh packet id (returned) and is remembered until the
// client acknowledges it; QoS 0 gets none (0 is returned). p itself is not
// kept or modified. A QoS 1 message delivered while the client is disconnected
// but its session is kept is queued and sent on reconnect.
func (b *Broker) Deliver(p *packets.Publish) (uint16, error) {
	if p.QoS > 1 {
		return 0, fmt.Errorf("rpctest: Deliver: QoS %d is not supported", p.QoS)
	}
	out := *p
	out.Duplicate = false
	out.PacketID = 0
	if out.Properties == nil {
		out.Properties = &packets.Properties{}
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, ErrClosed
	}
	c := b.current
	if out.QoS == 0 {
		if c == nil {
			return 0, ErrNotConnected
		}
		c.send(encode(&out))
		return 0, nil
	}
	s := b.last
	if c != nil {
		s = c.sess
	}
	if s == nil {
		return 0, ErrNotConnected
	}
	id, ok := s.allocID()
	if !ok {
		return 0, errors.New("rpctest: Deliver: all 65535 packet ids are awaiting acknowledgement")
	}
	out.PacketID = id
	d := &delivery{id: id, wire: encode(&out)}
	s.unacked = append(s.unacked, d)
	if c != nil {
		c.send(d.wire)
		d.sent = true
	}
	b.notifyLocked()
	return id, nil
}

// SetRedeliverOnReconnect chooses whether unacknowledged QoS 1 deliveries are
// sent again (with DUP) when the client resumes its session. On by default, as
// a real broker does; METL's mock client does not redeliver, so a METL runner
// turns it off and delivers again itself when a case says so.
func (b *Broker) SetRedeliverOnReconnect(on bool) {
	b.mu.Lock()
	b.noRedeliver = !on
	b.mu.Unlock()
}

// SetMaximumPacketSize makes later CONNACKs carry a Maximum Packet Size of
// n bytes (0: none). The broker only announces it: a test checks what the
// client sends.
func (b *Broker) SetMaximumPacketSize(n uint32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.maxPacket = n
}

// SetReceiveMaximum makes later CONNACKs carry a Receive Maximum of n (0:
// none, which means 65,535): the client may have n QoS 1 PUBLISHes
// unacknowledged at once.
func (b *Broker) SetReceiveMaximum(n uint16) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.receiveMax = n
}

// RefuseConnections makes Dial fail while on, so a client stays disconnected
// (after Disconnect) until it is turned off again.
func (b *Broker) RefuseConnections(on bool) {
	b.mu.Lock()
	b.refuse = on
	b.mu.Unlock()
}

// PushPublishAcks queues how the next QoS 1 PUBLISHes from the client are
// answered, in order; once the queue is empty they are acknowledged with success.
func (b *Broker) PushPublishAcks(acks ...Ack) { b.push(&b.pubAcks, acks) }

// PushSubscribeAcks queues how the next SUBSCRIBEs are answered (a failure
// reason applies to every topic filter of that SUBSCRIBE).
func (b *Broker) PushSubscribeAcks(acks ...Ack) { b.push(&b.subAcks, acks) }

// PushUnsubscribeAcks queues how the next UNSUBSCRIBEs are answered.
func (b *Broker) PushUnsubscribeAcks(acks ...Ack) { b.push(&b.unsubAcks, acks) }

// DropNextPubacks leaves the next n QoS 1 PUBLISHes from the client unacknowledged.
func (b *Broker) DropNextPubacks(n int) {
	for range n {
		b.PushPublishAcks(AckDrop)
	}
}

// FailNextPuback answers the next QoS 1 PUBLISH with a PUBACK carrying reason.
func (b *Broker) FailNextPuback(reason byte) { b.PushPublishAcks(AckWithReason(reason)) }

// FailNextSuback answers the next SUBSCRIBE with reason for every filter.
func (b *Broker) FailNextSuback(reason byte) { b.PushSubscribeAcks(AckWithReason(reason)) }

// FailNextUnsuback answers the next UNSUBSCRIBE with reason for every filter.
func (b *Broker) FailNextUnsuback(reason byte) { b.PushUnsubscribeAcks(AckWithReason(reason)) }

func (b *Broker) push(q *[]Ack, acks []Ack) {
	b.mu.Lock()
	*q = append(*q, acks...)
	b.mu.Unlock()
}

func pop(q *[]Ack) Ack {
	if len(*q) == 0 {
		return AckSuccess
	}
	a := (*q)[0]
	*q = (*q)[1:]
	return a
}

// Connected reports whether a client connection is up (CONNACK sent).
func (b *Broker) Connected() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.current != nil
}

// Connects is the number of CONNECTs accepted so far.
func (b *Broker) Connects() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.connects)
}

// ConnectPackets returns every accepted CONNECT, in order.
func (b *Broker) ConnectPackets() []*packets.Connect {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.connects)
}

// Published returns every PUBLISH received from the client, in arrival order,
// resends (DUP) included.
func (b *Broker) Published() []*packets.Publish {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.pubs)
}

// Acks returns the packet ids of every PUBACK received from the client, in
// arrival order.
func (b *Broker) Acks() []uint16 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.acks)
}

// Unacked returns the packet ids of QoS 1 deliveries not yet acknowledged, in
// delivery order (those of the current session, or of the last one if the
// client is disconnected).
func (b *Broker) Unacked() []uint16 {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.sessionLocked()
	if s == nil {
		return nil
	}
	ids := make([]uint16, len(s.unacked))
	for i, d := range s.unacked {
		ids[i] = d.id
	}
	return ids
}

// Subscriptions returns the topic filters currently subscribed (successfully),
// in subscription order, with any $share/group/ prefix as the client gave it.
func (b *Broker) Subscriptions() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.sessionLocked(); s != nil {
		return slices.Clone(s.subs)
	}
	return nil
}

func (b *Broker) sessionLocked() *session {
	if b.current != nil {
		return b.current.sess
	}
	return b.last
}

// WaitConnected waits until a client connection is up on the broker's side
// (CONNACK sent). The client may not have read the CONNACK yet: before
// publishing from an autopaho client, wait on its AwaitConnection instead.
func (b *Broker) WaitConnected(ctx context.Context) error {
	return b.wait(ctx, "a connected client", func() bool { return b.current != nil })
}

// WaitConnects waits until n CONNECTs in total have been accepted and the
// latest connection is up (after Disconnect, WaitConnects(ctx, Connects()+1)
// waits for the reconnection).
func (b *Broker) WaitConnects(ctx context.Context, n int) error {
	return b.wait(ctx, fmt.Sprintf("%d connects", n), func() bool {
		return len(b.connects) >= n && b.current != nil
	})
}

// WaitPublished waits until at least n PUBLISHes have arrived and returns them all.
func (b *Broker) WaitPublished(ctx context.Context, n int) ([]*packets.Publish, error) {
	err := b.wait(ctx, fmt.Sprintf("%d publishes", n), func() bool { return len(b.pubs) >= n })
	return b.Published(), err
}

// WaitPublishedCount waits until at least n PUBLISHes have arrived,
// without copying them (benchmarks).
func (b *Broker) WaitPublishedCount(ctx context.Context, n int) error {
	return b.wait(ctx, fmt.Sprintf("%d publishes", n), func() bool { return len(b.pubs) >= n })
}

// WaitAcks waits until at least n PUBACKs have arrived and returns their packet ids.
func (b *Broker) WaitAcks(ctx context.Context, n int) ([]uint16, error) {
	err := b.wait(ctx, fmt.Sprintf("%d acks", n), func() bool { return len(b.acks) >= n })
	return b.Acks(), err
}

// WaitSubscribed waits until filter is among Subscriptions (recorded by the
// broker; the client may not have read the SUBACK yet).
func (b *Broker) WaitSubscribed(ctx context.Context, filter string) error {
	return b.wait(ctx, "subscription to "+filter, func() bool {
		s := b.sessionLocked()
		return s != nil && slices.Contains(s.subs, filter)
	})
}

// WaitUnsubscribed waits until filter is not among Subscriptions.
func (b *Broker) WaitUnsubscribed(ctx context.Context, filter string) error {
	return b.wait(ctx, "no subscription to "+filter, func() bool {
		s := b.sessionLocked()
		return s == nil || !slices.Contains(s.subs, filter)
	})
}

// wait blocks until cond (evaluated with b.mu held) is true or ctx ends.
func (b *Broker) wait(ctx context.Context, what string, cond func() bool) error {
	for {
		b.mu.Lock()
		if cond() {
			b.mu.Unlock()
			return nil
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			b.mu.Lock()
			state := fmt.Sprintf("connects=%d connected=%t publishes=%d acks=%d", len(b.connects), b.current != nil, len(b.pubs), len(b.acks))
			b.mu.Unlock()
			return fmt.Errorf("rpctest: waiting for %s (%s): %w", what, state, ctx.Err())
		}
	}
}

func (b *Broker) notifyLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// drop closes c and forgets it; if it was the current connection, the
// session ends unless its expiry interval is > 0.
func (b *Broker) drop(c *conn) {
	c.close()
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.conns[c]; !ok {
		return
	}
	delete(b.conns, c)
	if b.current == c {
		b.current = nil
		if s := c.sess; s != nil && s.expiry == 0 {
			// Session expiry 0: the session ends with the network connection (MQTT 5 §3.1.2.11.2).
			delete(b.sessions, s.clientID)
			if b.last == s {
				b.last = nil
			}
		}
	}
	b.notifyLocked()
}

// conn is the server side of one network connection.
type conn struct {
	b    *Broker
	nc   net.Conn
	sess *session // set at CONNECT (guarded by b.mu)

	qmu       sync.Mutex
	queue     [][]byte // encoded packets waiting for writeLoop
	unwritten int      // packets queued and not yet written (Flush waits for 0)
	wake      chan struct{}

	done      chan struct{}
	closeOnce sync.Once
}

func (c *conn) close() {
	c.closeOnce.Do(func() {
		close(c.done)
		_ = c.nc.Close()
	})
}

// send queues an encoded packet. It never blocks: net.Pipe writes are
// synchronous, and a reader that blocked on writing could deadlock against a
// client that is itself writing (paho writes acks from more than one goroutine).
func (c *conn) send(wire []byte) {
	c.qmu.Lock()
	c.queue = append(c.queue, wire)
	c.unwritten++
	c.qmu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *conn) writeLoop() {
	for {
		select {
		case <-c.done:
			return
		case <-c.wake:
		}
		c.qmu.Lock()
		q := c.queue
		c.queue = nil
		c.qmu.Unlock()
		for _, w := range q {
			if _, err := c.nc.Write(w); err != nil {
				c.b.drop(c)
				return
			}
		}
		c.qmu.Lock()
		c.unwritten -= len(q)
		c.qmu.Unlock()
		c.b.mu.Lock()
		c.b.notifyLocked() // for Flush
		c.b.mu.Unlock()
	}
}

// encode serialises a packet once, so what is queued cannot change afterwards.
func encode(p interface {
	WriteTo(io.Writer) (int64, error)
}) []byte {
	var buf bytes.Buffer
	_, _ = p.WriteTo(&buf) // writing to a bytes.Buffer does not fail
	return buf.Bytes()
}

func (c *conn) readLoop() {
	r := bufio.NewReader(c.nc)
	defer c.b.drop(c)

	first, err := packets.ReadPacket(r)
	if err != nil {
		return
	}
	cp, ok := first.Content.(*packets.Connect)
	if !ok {
		return // [MQTT-3.1.0-1] the first packet must be CONNECT
	}
	if !c.b.connect(c, cp) {
		return
	}
	for {
		pkt, err := packets.ReadPacket(r)
		if err != nil {
			return
		}
		switch p := pkt.Content.(type) {
		case *packets.Publish:
			c.b.onPublish(c, p)
		case *packets.Puback:
			c.b.onPuback(c, p)
		case *packets.Subscribe:
			c.b.onSubscribe(c, p)
		case *packets.Unsubscribe:
			c.b.onUnsubscribe(c, p)
		case *packets.Pingreq:
			c.send(encode(&packets.Pingresp{}))
		case *packets.Disconnect:
			c.b.onDisconnect(c, p)
			return
		default:
			// AUTH, QoS 2 flow packets: not supported; ignore.
		}
	}
}
