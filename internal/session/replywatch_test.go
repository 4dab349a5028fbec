package session

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/internal/rpc/rpctest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The age logic alone, on a fake clock: the broker is silent from the
// oldest reply sent since its last PUBACK; a third of the ack timeout of
// silence is unready, naming how many replies wait and for how long.
func TestReplyWatchReadiness(t *testing.T) {
	clock := testkit.NewClock(time.Unix(1_800_000_000, 0))
	w := newReplyWatch(clock.Now, 30*time.Second)
	pub := func(id uint16, expiry uint32) {
		w.sent(&packets.Publish{PacketID: id, QoS: 1, Properties: &packets.Properties{MessageExpiry: &expiry}})
	}
	if err := w.ready(clock.Now()); err != nil {
		t.Fatalf("nothing sent: %v", err)
	}
	pub(1, 60)
	clock.Add(9 * time.Second)
	if err := w.ready(clock.Now()); err != nil {
		t.Fatalf("one reply waiting 9 s: %v", err)
	}
	clock.Add(time.Second)
	err := w.ready(clock.Now())
	if err == nil || !strings.Contains(err.Error(), "none of the host's replies for 10s (1 waiting") {
		t.Fatalf("one reply waiting 10 s: %v, want the silence named", err)
	}
	w.acked(1)
	if err := w.ready(clock.Now()); err != nil {
		t.Fatalf("acked: %v", err)
	}
	// Another PUBACK restarts the silence of the replies still waiting.
	pub(2, 60)
	clock.Add(5 * time.Second)
	pub(3, 60)
	clock.Add(time.Second)
	w.acked(2)
	clock.Add(9 * time.Second)
	if err := w.ready(clock.Now()); err != nil {
		t.Fatalf("reply 3 waiting 9 s since the last PUBACK: %v", err)
	}
	// A reply is given up at its own expiry (5 s, under the ack timeout);
	// given up is not acknowledged: the broker is still silent.
	pub(4, 5)
	clock.Add(5 * time.Second)
	var gaveUp []uint16
	v := w.check(clock.Now(), func(id uint16) bool { gaveUp = append(gaveUp, id); return true })
	if v.abandoned != 1 || len(gaveUp) != 1 || gaveUp[0] != 4 || v.recycle {
		t.Fatalf("check at reply 4's expiry: %+v, gave up %v; want reply 4 alone, no recycle", v, gaveUp)
	}
	if err := w.ready(clock.Now()); err == nil {
		t.Fatal("14 s of silence with replies waiting: ready")
	}
	// Silent for the whole ack timeout: reply 3 (30 s) is given up and the
	// connection is to be dropped, once.
	clock.Add(16 * time.Second)
	v = w.check(clock.Now(), func(uint16) bool { return true })
	if v.abandoned != 1 || !v.recycle {
		t.Fatalf("check after 30 s of silence: %+v; want reply 3 given up and a recycle", v)
	}
	if v = w.check(clock.Now(), func(uint16) bool { return true }); v.recycle {
		t.Fatal("a second check at once recycles again")
	}
	// The new connection starts a new watch.
	w.connected(true)
	if err := w.ready(clock.Now()); err != nil {
		t.Fatalf("after a reconnect with nothing waiting: %v", err)
	}
}

// harness is a session connected to a fake broker, its clock frozen at a
// fixed time.
type harness struct {
	t      *testing.T
	broker *rpctest.Broker
	s      *Session
	clock  *testkit.Clock
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// startOn connects a session of cfg (as the executor's: acks by hand)
// to b.
func startOn(t *testing.T, b *rpctest.Broker, cfg Config) *harness {
	t.Helper()
	h := &harness{t: t, broker: b, clock: testkit.NewClock(time.Unix(1_800_000_000, 0))}
	cfg.Broker, _ = url.Parse("mqtt://fake:1883")
	cfg.ClientID = "session-1"
	cfg.Dial = b.Dial
	cfg.Clock = h.clock
	cfg.ReconnectDelay = 10 * time.Millisecond
	cfg.ManualAcks = true
	s, err := New(cfg, Handlers{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Connect(); err != nil {
		t.Fatal(err)
	}
	h.s = s
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Disconnect(ctx)
		_ = b.Close()
	})
	if err := s.AwaitConnection(ctx(t)); err != nil {
		t.Fatal(err)
	}
	return h
}

// reply publishes a reply (QoS 1, correlation data n, expiry in seconds)
// as the executor does, from a goroutine of its own: a publish waits for
// its PUBACK, or for being given up, until the test ends.
func (h *harness) reply(n byte, expiry uint32) {
	c, cancel := context.WithCancel(context.Background())
	h.t.Cleanup(cancel)
	go func() {
		if err := h.s.AwaitConnection(c); err != nil {
			return
		}
		_ = h.s.Publish(c, &paho.Publish{QoS: 1, Topic: "resp/x", Payload: []byte("reply"), Properties: &paho.PublishProperties{
			CorrelationData: []byte{n}, MessageExpiry: &expiry}})
	}()
}

// A reply the broker never acknowledges holds a slot of its Receive
// Maximum only until its bound: then the slot serves the next reply, the
// given-up one is not sent again, and the session counts it.
func TestUnackedReplyReleasesItsSlot(t *testing.T) {
	b := rpctest.NewBroker()
	b.SetReceiveMaximum(2)
	b.DropNextPubacks(2)
	h := startOn(t, b, Config{ReplyAckTimeout: 30 * time.Second})

	for i := range 2 {
		h.reply(byte(i), 20)
	}
	if _, err := b.WaitPublished(ctx(t), 2); err != nil {
		t.Fatal(err)
	}
	// The third reply waits for a slot (paho's send quota).
	h.reply(2, 60)
	h.clock.Add(20 * time.Second) // the two replies' expiry: given up
	h.s.checkReplies()
	pubs, err := b.WaitPublished(ctx(t), 3)
	if err != nil {
		t.Fatalf("the third reply never got a slot: %v", err)
	}
	if got := pubs[2].Properties.CorrelationData[0]; got != 2 {
		t.Errorf("third publish answers request %d, want 2", got)
	}
	if st := h.s.Stats(); st.RepliesAbandoned != 2 || st.ConnectionsRecycled != 0 {
		t.Errorf("stats %+v: want 2 replies given up and no recycle", st)
	}
	waitReady(t, h.s) // the broker acks the third reply: it speaks again
	// A reconnect does not send the given-up replies again.
	n := b.Connects()
	b.Disconnect()
	if err := b.WaitConnects(ctx(t), n+1); err != nil {
		t.Fatal(err)
	}
	h.reply(3, 60)
	if _, err := b.WaitPublished(ctx(t), 4); err != nil {
		t.Fatal(err)
	}
	for _, p := range b.Published() {
		if p.Duplicate {
			t.Errorf("reply to request %d sent again after the reconnect", p.Properties.CorrelationData[0])
		}
	}
}

// A broker that acknowledges nothing: the session turns unready once its
// replies wait a third of the ack timeout, drops the connection at the
// ack timeout, and publishes (and is ready) again on the next one.
func TestSilentBrokerRecycled(t *testing.T) {
	b := rpctest.NewBroker()
	b.DropNextPubacks(1)
	h := startOn(t, b, Config{ReplyAckTimeout: 30 * time.Second})
	h.reply(1, 60)
	if _, err := b.WaitPublished(ctx(t), 1); err != nil {
		t.Fatal(err)
	}

	h.clock.Add(10 * time.Second)
	if err := h.s.Ready(); err == nil || !strings.Contains(err.Error(), "1 waiting for their PUBACK") {
		t.Fatalf("10 s without a PUBACK: Ready = %v", err)
	}
	n := b.Connects()
	h.clock.Add(20 * time.Second)
	h.s.checkReplies()
	if err := b.WaitConnects(ctx(t), n+1); err != nil {
		t.Fatalf("the connection was not recycled: %v", err)
	}
	if st := h.s.Stats(); st.ConnectionsRecycled != 1 || st.RepliesAbandoned != 1 {
		t.Errorf("stats %+v: want 1 recycle and 1 reply given up", st)
	}
	h.reply(2, 60)
	if _, err := b.WaitPublished(ctx(t), 2); err != nil {
		t.Fatal(err)
	}
	waitReady(t, h.s)
}

// waitReady waits until the session is ready (the broker's PUBACK comes
// on paho's reader goroutine).
func waitReady(t *testing.T, s *Session) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // hang guard
	for s.Ready() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("never ready: %v", s.Ready())
		}
		time.Sleep(5 * time.Millisecond) // no signal: the watch is read as it stands
	}
}
