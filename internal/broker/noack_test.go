package broker

import (
	"bufio"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// What a client that does not acknowledge what it is sent costs the
// broker, in bytes and in time (held.go), and that a client that does
// acknowledge is not taken for one.

// A client that never acknowledges (Receive Maximum 1, a session of an
// hour) and asks for many replies costs the broker at most
// Config.MaxInflightBytes and one message, and at most Config.AckTimeout:
// then it is disconnected (0x97) and what it held dropped. Before, it held
// every reply (up to 1,024 per session) for as long as its session lasted:
// 300 replies of 1 MiB grew the host by 1 GiB, kept after it left.
func TestNeverAckingClientBounded(t *testing.T) {
	const (
		replySize   = 256 << 10
		replies     = 40 // 10 MiB
		maxInflight = 2 << 20
	)
	clk := testkit.NewClock(time.Now())
	e, logs := startWith(t, Config{Clock: clk, MaxInflightBytes: maxInflight})
	r := startReplier(t, e, replySize)
	mallory := invoker(t, e, "mallory", 1)
	mallory.request(t, "mallory", replies)
	r.waitPublished(t, replies)

	held, msgs := heldFor(e, "mallory")
	stats := e.Stats()
	t.Logf("%d replies of %d KiB to a client that acknowledges none: %d held (%d KiB of payload), the broker counts %d KiB, %d dropped",
		replies, replySize>>10, msgs, held>>10, stats.HeldBytes>>10, stats.MessagesDropped)
	bound := maxInflight + replySize + int(messageOverhead) + 64
	if held > bound || stats.HeldBytes > int64(bound) {
		t.Fatalf("%d bytes held for the client (the broker counts %d), over the bound of %d", held, stats.HeldBytes, bound)
	}
	if min := int64(held); stats.HeldBytes < min {
		t.Errorf("the broker counts %d bytes held, less than the %d bytes of payload mochi keeps", stats.HeldBytes, min)
	}
	if want := uint64(replies - msgs); stats.MessagesDropped != want {
		t.Errorf("MessagesDropped %d, want %d (the replies not held)", stats.MessagesDropped, want)
	}

	// Just short of the ack timeout, nothing changes; at it, the client is
	// disconnected and what it held is gone.
	clk.Add(DefaultAckTimeout - sweepInterval)
	if cl, _ := e.srv.Clients.Get("mallory"); cl.Closed() || e.Stats().HeldBytes != stats.HeldBytes {
		t.Fatalf("before the ack timeout: closed %v, %d bytes held (want %d)", cl.Closed(), e.Stats().HeldBytes, stats.HeldBytes)
	}
	clk.Add(sweepInterval)
	if code := wantDisconnected(t, mallory, "the client that does not acknowledge"); code != packets.ErrQuotaExceeded.Code {
		t.Errorf("DISCONNECT 0x%02x, want 0x97", code)
	}
	testkit.WaitFor(t, "nothing held", func() bool { return e.Stats().HeldBytes == 0 })
	if held, msgs := heldFor(e, "mallory"); msgs != 0 {
		t.Errorf("after the ack timeout, mochi keeps %d messages (%d bytes) for the client", msgs, held)
	}
	if got := e.Stats().ClientsDropped; got != 1 {
		t.Errorf("ClientsDropped %d, want 1", got)
	}
	if !logs.HasLine("messages held for a client dropped", "client=mallory", "acknowledged none") {
		t.Errorf("the drop is not logged with who and why:\n%s", logs)
	}
}

// The case at the defaults: a client with Receive Maximum 1 and a
// session of an hour that asks for 300 replies of 1 MiB and acknowledges
// none grows the host's heap by about --broker-inflight-bytes (64 MiB),
// not by every reply twice over, and gives it back once its session has
// held them for disconnectedHold after it left. Measured: +65 MiB, back
// to the start after the hold; before, +604 MiB (300 replies, each
// keeping the packet it was read from as well), kept while the session
// lasted.
func TestNeverAckingClientMemory(t *testing.T) {
	heap := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapInuse)
	}
	clk := testkit.NewClock(time.Now())
	e, _ := startWith(t, Config{Clock: clk})
	r := startReplier(t, e, 1<<20)
	before := heap()
	c := invoker(t, e, "mallory", 1)
	c.request(t, "mallory", 300)
	r.waitPublished(t, 300)
	_ = c.conn.Close()
	testkit.WaitFor(t, "mallory gone", func() bool {
		cl, ok := e.srv.Clients.Get("mallory")
		return ok && cl.Closed()
	})
	grown := heap() - before
	clk.Add(disconnectedHold)
	testkit.WaitFor(t, "nothing held", func() bool { return e.Stats().HeldBytes == 0 })
	after := heap() - before
	t.Logf("300 replies of 1 MiB never acknowledged: heap +%d MiB once the client left, %+d MiB after the hold", grown>>20, after>>20)
	if bound := int64(DefaultMaxInflightBytes) * 3 / 2; grown > bound {
		t.Errorf("the heap grew by %d MiB, over %d MiB", grown>>20, bound>>20)
	}
	if after > 16<<20 {
		t.Errorf("after the hold the heap is still %d MiB over the start", after>>20)
	}
}

// A client that never acknowledges cannot start its ack timeout anew by
// leaving and coming back to its session: the time it held messages in
// silence before it left counts.
func TestNeverAckingClientCannotRestartItsTimeout(t *testing.T) {
	clk := testkit.NewClock(time.Now())
	e, _ := startWith(t, Config{Clock: clk})
	r := startReplier(t, e, 1000)
	c := invoker(t, e, "mallory", 1)
	c.request(t, "mallory", 4)
	r.waitPublished(t, 4)
	clk.Add(DefaultAckTimeout - 10*time.Second)
	_ = c.conn.Close()
	testkit.WaitFor(t, "mallory gone", func() bool {
		cl, ok := e.srv.Clients.Get("mallory")
		return ok && cl.Closed()
	})
	clk.Add(time.Minute) // within the hold: the session keeps its replies
	back := dialRaw(t, e.Addr())
	back.connectSession(t, "mallory", 1)
	testkit.WaitFor(t, "the resumed session's 4 messages counted", func() bool { return ledgerLen(e, "mallory") == 4 })
	clk.Add(10 * time.Second)
	if code := wantDisconnected(t, back, "the client back in its session"); code != packets.ErrQuotaExceeded.Code {
		t.Errorf("DISCONNECT 0x%02x, want 0x97", code)
	}
	testkit.WaitFor(t, "nothing held", func() bool { return e.Stats().HeldBytes == 0 })
}

// A session whose client left keeps its replies for disconnectedHold: an
// invoker that comes back within it gets them; after it, they are dropped,
// and the session is sent nothing more.
func TestLeftSessionHoldsRepliesForAWhile(t *testing.T) {
	clk := testkit.NewClock(time.Now())
	e, _ := startWith(t, Config{Clock: clk})
	r := startReplier(t, e, 1000)
	leave := func(requests int) {
		t.Helper()
		c := invoker(t, e, "inv", 0)
		c.request(t, "inv", requests)
		_ = c.conn.Close()
		testkit.WaitFor(t, "inv gone", func() bool {
			cl, ok := e.srv.Clients.Get("inv")
			return ok && cl.Closed()
		})
	}
	leave(2)
	r.waitPublished(t, 2)
	if _, msgs := heldFor(e, "inv"); msgs != 2 || e.Stats().HeldBytes == 0 {
		t.Fatalf("the session holds %d replies, the broker counts %d bytes; want 2, some", msgs, e.Stats().HeldBytes)
	}

	// Back within the hold: both replies, sent again.
	clk.Add(disconnectedHold - sweepInterval)
	c := dialRaw(t, e.Addr())
	c.connectSession(t, "inv", 0)
	for range 2 {
		pk, err := c.read(t)
		if err != nil || pk.FixedHeader.Type != packets.Publish {
			t.Fatalf("back within the hold: %+v, %v; want the replies", pk.FixedHeader, err)
		}
		c.write(t, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Puback}, PacketID: pk.PacketID})
	}
	testkit.WaitFor(t, "the acknowledged replies uncounted", func() bool { return e.Stats().HeldBytes == 0 })
	_ = c.conn.Close()

	// Gone longer than the hold: the replies are dropped, and one sent
	// after that is not kept.
	leave(2)
	r.waitPublished(t, 4)
	dropped := e.Stats().MessagesDropped
	clk.Add(disconnectedHold)
	testkit.WaitFor(t, "the left session's replies dropped", func() bool { return e.Stats().HeldBytes == 0 })
	if _, msgs := heldFor(e, "inv"); msgs != 0 {
		t.Errorf("after the hold, mochi keeps %d messages for the session", msgs)
	}
	other := rawConnected(t, e.Addr(), "other")
	other.request(t, "inv", 1)
	r.waitPublished(t, 5)
	if _, msgs := heldFor(e, "inv"); msgs != 0 || e.Stats().MessagesDropped != dropped+3 {
		t.Errorf("after the hold: %d messages kept, %d dropped; want none kept, %d dropped", msgs, e.Stats().MessagesDropped, dropped+3)
	}
}

// When the clients over TCP hold Config.MaxHeldBytes, the one holding the
// most loses what it holds (disconnected, 0x97); the others keep theirs,
// and the host's own clients, in process, are neither counted nor
// dropped.
func TestHeldBytesBoundedAcrossClients(t *testing.T) {
	const (
		replySize = 256 << 10
		maxHeld   = 3 << 20
	)
	clk := testkit.NewClock(time.Now())
	e, _ := startWith(t, Config{Clock: clk, MaxInflightBytes: 2 << 20, MaxHeldBytes: maxHeld})
	r := startReplier(t, e, replySize)

	// An in-process client that never acknowledges the requests it is sent.
	pipe, err := e.DialInProcess(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	host := &rawClient{conn: pipe, r: bufio.NewReader(pipe)}
	t.Cleanup(func() { _ = pipe.Close() })
	if ack := host.connect(t, "host-exec"); ack.ReasonCode != 0 {
		t.Fatalf("host-exec: CONNACK 0x%02x", ack.ReasonCode)
	}
	host.subscribe(t, "req/#", 1)
	_ = pipe.SetReadDeadline(time.Time{})

	clients := map[string]*rawClient{}
	sent := 0
	for _, c := range []struct {
		id      string
		replies int
	}{{"big", 7}, {"small", 4}, {"third", 4}} {
		rc := invoker(t, e, c.id, 1)
		clients[c.id] = rc
		rc.request(t, c.id, c.replies)
		sent += c.replies
		r.waitPublished(t, int64(sent))
		if held := e.Stats().HeldBytes; held > maxHeld+replySize+messageOverhead+64 {
			t.Fatalf("after %s's replies the broker holds %d bytes, over %d and one message", c.id, held, maxHeld)
		}
	}
	if code := wantDisconnected(t, clients["big"], "the client holding the most"); code != packets.ErrQuotaExceeded.Code {
		t.Errorf("DISCONNECT 0x%02x, want 0x97", code)
	}
	if _, msgs := heldFor(e, "big"); msgs != 0 {
		t.Errorf("the client holding the most keeps %d messages", msgs)
	}
	for _, id := range []string{"small", "third"} {
		if cl, _ := e.srv.Clients.Get(id); cl.Closed() {
			t.Errorf("%s was disconnected", id)
		}
	}
	if _, msgs := heldFor(e, "small"); msgs != 4 {
		t.Errorf("small keeps %d messages, want 4", msgs)
	}
	if cl, _ := e.srv.Clients.Get("host-exec"); cl.Closed() || cl.State.Inflight.Len() != sent {
		t.Errorf("the host's client: closed %v, holding %d requests (want %d)", cl.Closed(), cl.State.Inflight.Len(), sent)
	}
	if got := e.Stats().ClientsDropped; got != 1 {
		t.Errorf("ClientsDropped %d, want 1", got)
	}

	// The others acknowledge nothing either: at the ack timeout they lose
	// what they hold too; the host's client, in process, does not.
	clk.Add(DefaultAckTimeout)
	testkit.WaitFor(t, "nothing held", func() bool { return e.Stats().HeldBytes == 0 })
	if cl, _ := e.srv.Clients.Get("host-exec"); cl.Closed() || cl.State.Inflight.Len() != sent {
		t.Errorf("the host's client after the ack timeout: closed %v, holding %d requests (want %d)", cl.Closed(), cl.State.Inflight.Len(), sent)
	}
}

// A client with Receive Maximum 1 that acknowledges each message as it
// comes gets every reply, and is not taken for one that does not
// acknowledge. Before, mochi forgot a message it sent once the client's
// quota returned, so the client's acknowledgement of it returned no
// quota: the client got two replies and then nothing, for good.
func TestReceiveMaximumOneServed(t *testing.T) {
	const replies = 10
	clk := testkit.NewClock(time.Now())
	e, _ := startWith(t, Config{Clock: clk})
	r := startReplier(t, e, 1000)
	c := invoker(t, e, "slow", 1)
	c.request(t, "slow", replies)
	r.waitPublished(t, replies)
	for got := 0; got < replies; {
		pk, err := c.read(t)
		if err != nil {
			t.Fatalf("after %d of %d replies: %v", got, replies, err)
		}
		if pk.FixedHeader.Type != packets.Publish {
			continue // a PUBACK of its requests
		}
		got++
		clk.Add(DefaultAckTimeout / 2) // each acknowledged within the timeout, all of them not
		c.write(t, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Puback}, PacketID: pk.PacketID})
	}
	testkit.WaitFor(t, "nothing held", func() bool { return e.Stats().HeldBytes == 0 })
	if s := e.Stats(); s.ClientsDropped != 0 || s.MessagesDropped != 0 {
		t.Errorf("ClientsDropped %d, MessagesDropped %d; want none", s.ClientsDropped, s.MessagesDropped)
	}
}

// A client in process (DialInProcess, as the host's trigger session) with
// Receive Maximum 1 that acknowledges each message gets every one. Before,
// the holdings hook gave back the quota of a message mochi sent once the
// client's quota returned to TCP clients only: the client in process got
// two messages and then nothing (the trigger session, a burst past its
// window of 64 and then a trickle).
func TestReceiveMaximumOneInProcess(t *testing.T) {
	const messages = 20
	ctx := testCtx(t)
	e := startBroker(t)
	conn, err := e.DialInProcess(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The first message is acknowledged once all are published: the rest
	// wait for the client's quota.
	got, published := make(chan *paho.Publish, messages), make(chan struct{})
	c := paho.NewClient(paho.ClientConfig{ClientID: "in-process", Conn: conn,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			<-published
			got <- pr.Packet
			return true, nil
		}}})
	one := uint16(1)
	if _, err := c.Connect(ctx, &paho.Connect{ClientID: "in-process", KeepAlive: 30, CleanStart: true,
		Properties: &paho.ConnectProperties{ReceiveMaximum: &one}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(&paho.Disconnect{}) })
	if _, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "burst/#", QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	pub := connect(t, ctx, e.URL(), "burst-pub")
	for i := range messages {
		if _, err := pub.cm.Publish(ctx, &paho.Publish{QoS: 1, Topic: "burst/" + strconv.Itoa(i), Payload: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	close(published)
	for i := range messages {
		select {
		case <-got:
		case <-ctx.Done():
			t.Fatalf("%d of %d messages received", i, messages)
		}
	}
}
