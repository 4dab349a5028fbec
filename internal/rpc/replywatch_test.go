package rpc

import (
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"

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

// A reply the broker never acknowledges holds a slot of its Receive
// Maximum only until its bound: then the slot serves the next reply, the
// given-up one is not sent again, and the executor counts it.
func TestUnackedReplyReleasesItsSlot(t *testing.T) {
	b := rpctest.NewBroker()
	b.SetReceiveMaximum(2)
	b.DropNextPubacks(2)
	h := startOn(t, b, Config{ReplyAckTimeout: 30 * time.Second}, Command{Name: "echo", Handler: echoHandler})

	for i := range 2 {
		if _, err := b.Deliver(req("rpc/exec-1/echo", byte(i), withExpiry(20))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.WaitPublished(ctx(t), 2); err != nil {
		t.Fatal(err)
	}
	// The third reply waits for a slot (paho's send quota).
	if _, err := b.Deliver(req("rpc/exec-1/echo", 2, withExpiry(60))); err != nil {
		t.Fatal(err)
	}
	h.clock.Add(20 * time.Second) // the two replies' expiry: given up
	h.exec.checkReplies()
	pubs, err := b.WaitPublished(ctx(t), 3)
	if err != nil {
		t.Fatalf("the third reply never got a slot: %v", err)
	}
	if got := pubs[2].Properties.CorrelationData[0]; got != 2 {
		t.Errorf("third publish answers request %d, want 2", got)
	}
	if st := h.exec.SessionStats(); st.RepliesAbandoned != 2 || st.ConnectionsRecycled != 0 {
		t.Errorf("stats %+v: want 2 replies given up and no recycle", st)
	}
	waitReady(t, h.exec) // the broker acks the third reply: it speaks again
	// A reconnect does not send the given-up replies again.
	n := b.Connects()
	b.Disconnect()
	if err := b.WaitConnects(ctx(t), n+1); err != nil {
		t.Fatal(err)
	}
	h.roundTrip(req("rpc/exec-1/echo", 3), 4)
	for _, p := range b.Published() {
		if p.Duplicate {
			t.Errorf("reply to request %d sent again after the reconnect", p.Properties.CorrelationData[0])
		}
	}
}

// A broker that acknowledges nothing: the executor turns unready once its
// replies wait a third of the ack timeout, drops the connection at the
// ack timeout, and serves (and is ready) again on the next one.
func TestSilentBrokerRecycled(t *testing.T) {
	b := rpctest.NewBroker()
	b.DropNextPubacks(1)
	h := startOn(t, b, Config{ReplyAckTimeout: 30 * time.Second}, Command{Name: "echo", Handler: echoHandler})
	h.roundTrip(req("rpc/exec-1/echo", 1, withExpiry(60)), 1)

	h.clock.Add(10 * time.Second)
	if err := h.exec.Ready(); err == nil || !strings.Contains(err.Error(), "1 waiting for their PUBACK") {
		t.Fatalf("10 s without a PUBACK: Ready = %v", err)
	}
	n := b.Connects()
	h.clock.Add(20 * time.Second)
	h.exec.checkReplies()
	if err := b.WaitConnects(ctx(t), n+1); err != nil {
		t.Fatalf("the connection was not recycled: %v", err)
	}
	if st := h.exec.SessionStats(); st.ConnectionsRecycled != 1 || st.RepliesAbandoned != 1 {
		t.Errorf("stats %+v: want 1 recycle and 1 reply given up", st)
	}
	h.roundTrip(req("rpc/exec-1/echo", 2, withExpiry(60)), 2)
	waitReady(t, h.exec)
}

// waitReady waits until the executor is ready (it subscribes from a
// goroutine of its own after a reconnect).
func waitReady(t *testing.T, e *Executor) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // hang guard
	for e.Ready() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("never ready: %v", e.Ready())
		}
		time.Sleep(5 * time.Millisecond) // autopaho reports the connection from its own goroutine
	}
}

// Requests whose response topic an ordinary client may not publish to are
// acked, not answered, and counted.
func TestResponseTopicRefused(t *testing.T) {
	h := start(t, Config{}, Command{Name: "echo", Handler: echoHandler})
	bad := []string{"$SYS/x", "$share/g/x", "$", "a/+/b", "a/#", "#", "", "a//b", "a\x00b"}
	for i, topic := range bad {
		p := req("rpc/exec-1/echo", byte(i), func(p *packets.Publish) { p.Properties.ResponseTopic = topic })
		if _, err := h.broker.Deliver(p); err != nil {
			t.Fatal(err)
		}
	}
	h.roundTrip(req("rpc/exec-1/echo", 99), 1) // after the bad ones: they were passed over
	if _, err := h.broker.WaitAcks(ctx(t), len(bad)+1); err != nil {
		t.Fatal(err)
	}
	if pubs := h.broker.Published(); len(pubs) != 1 {
		t.Errorf("%d replies published, want only the good request's: first to %q", len(pubs), pubs[0].Topic)
	}
	if got := h.exec.SessionStats().ResponseTopicsRefused; got != int64(len(bad)) {
		t.Errorf("ResponseTopicsRefused = %d, want %d", got, len(bad))
	}
}

func TestResponseTopicProblem(t *testing.T) {
	for _, ok := range []string{"resp/a", "a", "a/b/c", "r$/x", "x/$SYS"} {
		if p := responseTopicProblem(ok); p != "" {
			t.Errorf("%q refused: %s", ok, p)
		}
	}
	long := strings.Repeat("a", maxMQTTString+1)
	for topic, want := range map[string]string{
		"": "no response topic", "$SYS/x": "starts with $", "a/+": "wildcard", "#": "wildcard",
		"a//b": "not a valid topic name", "\xff": "not a valid topic name", long: "more than MQTT's",
		"a\u0085b": "cannot be sent",
	} {
		if p := responseTopicProblem(topic); !strings.Contains(p, want) {
			t.Errorf("%.20q: %q, want it to say %q", topic, p, want)
		}
	}
}
