package rpctest

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
)

const clientID = "rpctest-executor"

// client is an autopaho client wired to a Broker the way an executor is:
// fixed client id, clean start false, session expiry > 0, manual acks,
// handler in ClientConfig.OnPublishReceived, (re)subscribe in OnConnectionUp.
type client struct {
	cm       *autopaho.ConnectionManager
	received chan paho.PublishReceived
	ups      chan *paho.Connack
	subErrs  chan error
}

func startClient(t *testing.T, b *Broker, filters ...string) *client {
	t.Helper()
	c := &client{
		received: make(chan paho.PublishReceived, 64),
		ups:      make(chan *paho.Connack, 16),
		subErrs:  make(chan error, 16),
	}
	u, err := url.Parse("mqtt://rpctest")
	if err != nil {
		t.Fatal(err)
	}
	cfg := autopaho.ClientConfig{
		ServerUrls:                    []*url.URL{u},
		AttemptConnection:             b.Dial,
		KeepAlive:                     30,
		CleanStartOnInitialConnection: false,
		SessionExpiryInterval:         60,
		ReconnectBackoff:              autopaho.NewConstantBackoff(5 * time.Millisecond),
		ConnectTimeout:                5 * time.Second,
		OnConnectionUp: func(cm *autopaho.ConnectionManager, ca *paho.Connack) {
			c.ups <- ca
			if len(filters) == 0 {
				return
			}
			s := &paho.Subscribe{}
			for _, f := range filters {
				s.Subscriptions = append(s.Subscriptions, paho.SubscribeOptions{Topic: f, QoS: 1})
			}
			// Not inline: OnConnectionUp runs in autopaho's connection loop, and a
			// SUBSCRIBE whose SUBACK is lost to a disconnect waits for its context
			// (paho does not release it on connection loss), holding up the reconnect.
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_, err := cm.Subscribe(ctx, s)
				c.subErrs <- err
			}()
		},
		ClientConfig: paho.ClientConfig{
			ClientID:                   clientID,
			EnableManualAcknowledgment: true,
			SendAcksInterval:           2 * time.Millisecond,
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){
				func(pr paho.PublishReceived) (bool, error) {
					c.received <- pr
					return true, nil
				},
			},
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	cm, err := autopaho.NewConnection(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c.cm = cm
	t.Cleanup(func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer dcancel()
		_ = cm.Disconnect(dctx)
		cancel()
		_ = b.Close()
	})
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (c *client) next(t *testing.T, ctx context.Context) paho.PublishReceived {
	t.Helper()
	select {
	case pr := <-c.received:
		return pr
	case <-ctx.Done():
		t.Fatalf("no PUBLISH reached the client: %v", ctx.Err())
		return paho.PublishReceived{}
	}
}

// subscribed waits until the client has its SUBACK (the broker records the
// subscription before the client has read the SUBACK).
func (c *client) subscribed(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case err := <-c.subErrs:
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
	case <-ctx.Done():
		t.Fatalf("no SUBACK reached the client: %v", ctx.Err())
	}
}

func (c *client) up(t *testing.T, ctx context.Context) *paho.Connack {
	t.Helper()
	select {
	case ca := <-c.ups:
		return ca
	case <-ctx.Done():
		t.Fatalf("connection did not come up: %v", ctx.Err())
		return nil
	}
}

func request(topic string) *packets.Publish {
	expiry := uint32(10)
	return &packets.Publish{
		Topic:   topic,
		QoS:     1,
		Payload: []byte("Test_Request"),
		Properties: &packets.Properties{
			CorrelationData: []byte{1, 2, 3, 4},
			ResponseTopic:   "response/" + topic,
			MessageExpiry:   &expiry,
			ContentType:     "application/json",
			User:            []packets.User{{Key: "__srcId", Value: "invoker-0"}},
		},
	}
}

func TestDeliverReceiveManualAck(t *testing.T) {
	ctx := testCtx(t)
	b := NewBroker()
	c := startClient(t, b, "mock/test")
	if err := b.WaitSubscribed(ctx, "mock/test"); err != nil {
		t.Fatal(err)
	}
	if got := b.Subscriptions(); !slices.Equal(got, []string{"mock/test"}) {
		t.Fatalf("Subscriptions() = %q", got)
	}
	if ca := c.up(t, ctx); ca.SessionPresent {
		t.Errorf("first CONNACK has SessionPresent")
	}
	if cp := b.ConnectPackets()[0]; cp.ClientID != clientID || cp.CleanStart || *cp.Properties.SessionExpiryInterval != 60 {
		t.Errorf("CONNECT recorded as %+v", cp)
	}

	id, err := b.Deliver(request("mock/test"))
	if err != nil {
		t.Fatal(err)
	}
	if id == 0 {
		t.Fatal("QoS 1 delivery got packet id 0")
	}
	pr := c.next(t, ctx)
	p := pr.Packet
	if p.PacketID != id || p.Duplicate() || p.Topic != "mock/test" || string(p.Payload) != "Test_Request" {
		t.Fatalf("client got %+v", p)
	}
	if !bytes.Equal(p.Properties.CorrelationData, []byte{1, 2, 3, 4}) || p.Properties.ResponseTopic != "response/mock/test" ||
		p.Properties.MessageExpiry == nil || *p.Properties.MessageExpiry != 10 || p.Properties.ContentType != "application/json" ||
		p.Properties.User.Get("__srcId") != "invoker-0" {
		t.Fatalf("properties not delivered intact: %+v", p.Properties)
	}
	if got := b.Unacked(); !slices.Equal(got, []uint16{id}) {
		t.Fatalf("Unacked() before ack = %v", got)
	}
	if got := b.Acks(); len(got) != 0 {
		t.Fatalf("acked before Ack: %v", got)
	}

	if err := pr.Client.Ack(p); err != nil {
		t.Fatal(err)
	}
	acks, err := b.WaitAcks(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(acks, []uint16{id}) {
		t.Fatalf("acks = %v, want [%d]", acks, id)
	}
	if got := b.Unacked(); len(got) != 0 {
		t.Fatalf("Unacked() after ack = %v", got)
	}

	// A second delivery gets a different packet id; QoS 0 gets none.
	id2, err := b.Deliver(request("mock/test"))
	if err != nil || id2 == id {
		t.Fatalf("second delivery: id %d (first %d), err %v", id2, id, err)
	}
	if pr := c.next(t, ctx); pr.Packet.PacketID != id2 {
		t.Fatalf("second delivery arrived with id %d, want %d", pr.Packet.PacketID, id2)
	}
	q0 := request("mock/test")
	q0.QoS = 0
	if id0, err := b.Deliver(q0); err != nil || id0 != 0 {
		t.Fatalf("QoS 0 delivery: id %d err %v", id0, err)
	}
	if pr := c.next(t, ctx); pr.Packet.QoS != 0 {
		t.Fatalf("QoS 0 delivery arrived as QoS %d", pr.Packet.QoS)
	}
}

func TestClientPublishRecorded(t *testing.T) {
	ctx := testCtx(t)
	b := NewBroker()
	c := startClient(t, b)
	if err := b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	// The broker has sent CONNACK; the client may not have processed it yet.
	if err := c.cm.AwaitConnection(ctx); err != nil {
		t.Fatal(err)
	}
	expiry := uint32(7)
	resp, err := c.cm.Publish(ctx, &paho.Publish{
		QoS:     1,
		Topic:   "response/mock/test",
		Payload: []byte("Test_Response"),
		Properties: &paho.PublishProperties{
			CorrelationData: []byte{9, 9},
			MessageExpiry:   &expiry,
			ContentType:     "application/json",
			User:            paho.UserProperties{{Key: "__stat", Value: "200"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.ReasonCode != 0 {
		t.Fatalf("PUBACK reason %#x", resp.ReasonCode)
	}
	pubs := b.Published()
	if len(pubs) != 1 {
		t.Fatalf("%d publishes recorded", len(pubs))
	}
	p := pubs[0]
	if p.QoS != 1 || p.PacketID == 0 || p.Topic != "response/mock/test" || string(p.Payload) != "Test_Response" ||
		!bytes.Equal(p.Properties.CorrelationData, []byte{9, 9}) || *p.Properties.MessageExpiry != 7 ||
		p.Properties.ContentType != "application/json" || len(p.Properties.User) != 1 || p.Properties.User[0] != (packets.User{Key: "__stat", Value: "200"}) {
		t.Fatalf("recorded %v", p)
	}
}

func TestDisconnectRedeliversUnackedWithDup(t *testing.T) {
	ctx := testCtx(t)
	b := NewBroker()
	c := startClient(t, b, "mock/test")
	if err := b.WaitSubscribed(ctx, "mock/test"); err != nil {
		t.Fatal(err)
	}
	c.subscribed(t, ctx)
	c.up(t, ctx)

	id, err := b.Deliver(request("mock/test"))
	if err != nil {
		t.Fatal(err)
	}
	first := c.next(t, ctx)
	if first.Packet.PacketID != id || first.Packet.Duplicate() {
		t.Fatalf("first delivery %+v", first.Packet)
	}

	// Not acked: the network goes; autopaho reconnects with clean start false.
	b.Disconnect()
	if err := b.WaitConnects(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if ca := c.up(t, ctx); !ca.SessionPresent {
		t.Errorf("reconnect CONNACK lacks SessionPresent")
	}
	if cp := b.ConnectPackets()[1]; cp.CleanStart || cp.ClientID != clientID {
		t.Errorf("reconnect CONNECT: clean start %t, client id %q", cp.CleanStart, cp.ClientID)
	}
	again := c.next(t, ctx)
	if again.Packet.PacketID != id || !again.Packet.Duplicate() || !bytes.Equal(again.Packet.Properties.CorrelationData, []byte{1, 2, 3, 4}) {
		t.Fatalf("redelivery %+v, want packet id %d with DUP", again.Packet, id)
	}
	if err := b.WaitSubscribed(ctx, "mock/test"); err != nil {
		t.Fatal(err)
	}
	if err := again.Client.Ack(again.Packet); err != nil {
		t.Fatal(err)
	}
	acks, err := b.WaitAcks(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(acks, []uint16{id}) {
		t.Fatalf("acks = %v, want [%d]", acks, id)
	}
	if got := b.Unacked(); len(got) != 0 {
		t.Fatalf("Unacked() = %v", got)
	}
	// paho forgets pending manual acks with the connection: acking through the
	// dropped connection's client fails; only the redelivery can be acked.
	if err := first.Client.Ack(first.Packet); !errors.Is(err, paho.ErrPacketNotFound) {
		t.Fatalf("Ack through the dropped connection's client: %v, want ErrPacketNotFound", err)
	}
}

func TestDeliverWhileDisconnectedIsQueued(t *testing.T) {
	ctx := testCtx(t)
	b := NewBroker()
	if _, err := b.Deliver(request("mock/test")); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("Deliver before any client: %v", err)
	}
	c := startClient(t, b, "mock/test")
	if err := b.WaitSubscribed(ctx, "mock/test"); err != nil {
		t.Fatal(err)
	}
	c.subscribed(t, ctx)
	b.RefuseConnections(true)
	b.Disconnect()
	if b.Connected() {
		t.Fatal("still connected after Disconnect")
	}
	id, err := b.Deliver(request("mock/test"))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Unacked(); !slices.Equal(got, []uint16{id}) {
		t.Fatalf("Unacked() while disconnected = %v", got)
	}
	q0 := request("mock/test")
	q0.QoS = 0
	if _, err := b.Deliver(q0); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("QoS 0 Deliver while disconnected: %v", err)
	}
	b.RefuseConnections(false)
	pr := c.next(t, ctx)
	if pr.Packet.PacketID != id || pr.Packet.Duplicate() {
		t.Fatalf("got packet id %d dup %t, want %d without DUP (never sent before)", pr.Packet.PacketID, pr.Packet.Duplicate(), id)
	}
	if err := pr.Client.Ack(pr.Packet); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitAcks(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

func TestRedeliveryOff(t *testing.T) {
	ctx := testCtx(t)
	b := NewBroker()
	b.SetRedeliverOnReconnect(false)
	c := startClient(t, b, "mock/test")
	if err := b.WaitSubscribed(ctx, "mock/test"); err != nil {
		t.Fatal(err)
	}
	c.subscribed(t, ctx)
	id1, err := b.Deliver(request("mock/test"))
	if err != nil {
		t.Fatal(err)
	}
	if pr := c.next(t, ctx); pr.Packet.PacketID != id1 {
		t.Fatalf("got %d want %d", pr.Packet.PacketID, id1)
	}
	b.Disconnect()
	if err := b.WaitConnects(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if got := b.Unacked(); len(got) != 0 {
		t.Fatalf("Unacked() after reconnect without redelivery = %v", got)
	}
	id2, err := b.Deliver(request("mock/test"))
	if err != nil {
		t.Fatal(err)
	}
	pr := c.next(t, ctx)
	if pr.Packet.PacketID != id2 || pr.Packet.Duplicate() {
		t.Fatalf("after reconnect got %+v, want fresh delivery %d (no redelivery of %d)", pr.Packet, id2, id1)
	}
}

func TestSubackFailureReachesClient(t *testing.T) {
	ctx := testCtx(t)
	b := NewBroker()
	b.FailNextSuback(packets.SubackNotauthorized)
	c := startClient(t, b, "mock/test")
	select {
	case err := <-c.subErrs:
		if err == nil {
			t.Fatal("subscribe succeeded despite the injected SUBACK failure")
		}
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	if got := b.Subscriptions(); len(got) != 0 {
		t.Fatalf("failed subscription recorded: %q", got)
	}
	// The queue is used up: the next SUBSCRIBE succeeds.
	suback, err := c.cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "$share/g/mock/test", QoS: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(suback.Reasons, []byte{1}) {
		t.Fatalf("SUBACK reasons %v", suback.Reasons)
	}
	if got := b.Subscriptions(); !slices.Equal(got, []string{"$share/g/mock/test"}) {
		t.Fatalf("Subscriptions() = %q", got)
	}
}

func TestUnsubscribeAcks(t *testing.T) {
	ctx := testCtx(t)
	b := NewBroker()
	c := startClient(t, b, "mock/test")
	if err := b.WaitSubscribed(ctx, "mock/test"); err != nil {
		t.Fatal(err)
	}
	c.subscribed(t, ctx)
	b.FailNextUnsuback(ReasonUnspecifiedError)
	ua, err := c.cm.Unsubscribe(ctx, &paho.Unsubscribe{Topics: []string{"mock/test"}})
	if err == nil {
		t.Fatalf("unsubscribe succeeded despite the injected failure: %+v", ua)
	}
	if got := b.Subscriptions(); !slices.Equal(got, []string{"mock/test"}) {
		t.Fatalf("Subscriptions() after failed unsubscribe = %q", got)
	}
	if _, err := c.cm.Unsubscribe(ctx, &paho.Unsubscribe{Topics: []string{"mock/test"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitUnsubscribed(ctx, "mock/test"); err != nil {
		t.Fatal(err)
	}
}

func TestPubackFailure(t *testing.T) {
	ctx := testCtx(t)
	b := NewBroker()
	b.FailNextPuback(packets.PubackQuotaExceeded)
	c := startClient(t, b)
	if err := b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	// The broker has sent CONNACK; the client may not have processed it yet.
	if err := c.cm.AwaitConnection(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := c.cm.Publish(ctx, &paho.Publish{QoS: 1, Topic: "response/mock/test", Payload: []byte("x")})
	if err == nil {
		t.Fatal("publish succeeded despite failed PUBACK")
	}
	if resp == nil || resp.ReasonCode != packets.PubackQuotaExceeded {
		t.Fatalf("response %+v, err %v", resp, err)
	}
	if _, err := c.cm.Publish(ctx, &paho.Publish{QoS: 1, Topic: "response/mock/test", Payload: []byte("y")}); err != nil {
		t.Fatalf("second publish: %v", err)
	}
}

// Mirrors METL's CommandExecutorResponsePubAckDroppedByDisconnection: the
// PUBACK is dropped, the connection goes, paho resends with DUP on reconnect
// and that resend is acknowledged.
func TestDroppedPubackResentAfterReconnect(t *testing.T) {
	ctx := testCtx(t)
	b := NewBroker()
	b.PushPublishAcks(AckDrop)
	c := startClient(t, b)
	if err := b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	// The broker has sent CONNACK; the client may not have processed it yet.
	if err := c.cm.AwaitConnection(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.cm.Publish(ctx, &paho.Publish{QoS: 1, Topic: "response/mock/test", Payload: []byte("r")})
		done <- err
	}()
	if _, err := b.WaitPublished(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("publish returned (%v) although its PUBACK was dropped", err)
	default:
	}
	b.Disconnect()
	pubs, err := b.WaitPublished(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !pubs[1].Duplicate || pubs[1].PacketID != pubs[0].PacketID || pubs[0].Duplicate {
		t.Fatalf("resend: first dup=%t id=%d, second dup=%t id=%d", pubs[0].Duplicate, pubs[0].PacketID, pubs[1].Duplicate, pubs[1].PacketID)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("publish failed after resend: %v", err)
		}
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
}
