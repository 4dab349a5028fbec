package broker

import (
	"bufio"
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The helpers of the tests of what the broker holds for its clients
// (held.go): an in-process replier, raw invokers that acknowledge nothing.

// replier is an in-process client, as the host's executor is, that answers
// every request on req/# with a reply of a given size on its response
// topic. It is written packet by packet: its reader never waits for a
// write (paho's acks a request from its reader under the connection's
// lock, which a large reply being written holds while the broker, whose
// PUBACK waits for that reader, reads it: a deadlock of the test's, not
// the broker's; the host's session gathers its writes instead).
type replier struct {
	published atomic.Int64 // replies mochi offered to their subscribers
}

// startReplier connects a replier of replies of size bytes.
func startReplier(t *testing.T, e *Embedded, size int) *replier {
	t.Helper()
	pipe, err := e.DialInProcess(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pipe.Close() })
	c := &rawClient{conn: pipe, r: bufio.NewReader(pipe)}
	if ack := c.connect(t, "replier"); ack.ReasonCode != 0 {
		t.Fatalf("replier: CONNACK 0x%02x", ack.ReasonCode)
	}
	c.subscribe(t, "req/#", 1)
	_ = pipe.SetReadDeadline(time.Time{})
	r := &replier{}
	if err := e.srv.AddHook(&publishedHook{id: "replier", n: &r.published}, nil); err != nil {
		t.Fatal(err)
	}
	payload := bytes.Repeat([]byte("r"), size)
	out := make(chan packets.Packet, 4096)
	go func() { // the reader: it queues what is to be written, and never waits for it
		defer close(out)
		for id := uint16(1); ; {
			pk, err := c.readPacket()
			if err != nil {
				return
			}
			if pk.FixedHeader.Type != packets.Publish {
				continue
			}
			if pk.FixedHeader.Qos > 0 {
				out <- packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Puback}, PacketID: pk.PacketID}
			}
			out <- packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1}, PacketID: id,
				TopicName: pk.Properties.ResponseTopic, Payload: payload,
				Properties: packets.Properties{CorrelationData: pk.Properties.CorrelationData}}
			id = id%1000 + 1
		}
	}()
	go func() { // the writer
		var buf bytes.Buffer
		for pk := range out {
			buf.Reset()
			pk.ProtocolVersion = 5
			if pk.FixedHeader.Type == packets.Puback {
				_ = pk.PubackEncode(&buf)
			} else {
				_ = pk.PublishEncode(&buf)
			}
			if _, err := pipe.Write(buf.Bytes()); err != nil {
				return
			}
		}
	}()
	return r
}

// waitPublished waits until n replies went through mochi's delivery.
func (r *replier) waitPublished(t *testing.T, n int64) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("%d replies delivered", n), func() bool { return r.published.Load() >= n })
}

// publishedHook counts the PUBLISHes of client id that mochi has offered
// to their subscribers (OnPublished runs after the delivery; the
// publisher's PUBACK goes before it).
type publishedHook struct {
	mqtt.HookBase
	id string
	n  *atomic.Int64
}

func (h *publishedHook) ID() string           { return "test-published-" + h.id }
func (h *publishedHook) Provides(b byte) bool { return b == mqtt.OnPublished }
func (h *publishedHook) OnPublished(cl *mqtt.Client, _ packets.Packet) {
	if cl.ID == h.id {
		h.n.Add(1)
	}
}

// connectSession connects c as id with a session of an hour (clean start
// false) and receiveMax (0: none said).
func (c *rawClient) connectSession(t *testing.T, id string, receiveMax uint16) {
	t.Helper()
	c.write(t, packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Connect},
		Connect:     packets.ConnectParams{ProtocolName: []byte("MQTT"), ClientIdentifier: id},
		Properties: packets.Properties{SessionExpiryInterval: 3600, SessionExpiryIntervalFlag: true,
			ReceiveMaximum: receiveMax},
	})
	if ack, err := c.read(t); err != nil || ack.FixedHeader.Type != packets.Connack || ack.ReasonCode != 0 {
		t.Fatalf("%s: CONNACK %+v, %v", id, ack, err)
	}
}

// invoker connects a raw client as id (connectSession) and subscribes to
// its response topic, clients/ID/resp, at QoS 1.
func invoker(t *testing.T, e *Embedded, id string, receiveMax uint16) *rawClient {
	t.Helper()
	c := dialRaw(t, e.Addr())
	c.connectSession(t, id, receiveMax)
	c.subscribe(t, "clients/"+id+"/resp", 1)
	return c
}

// request publishes n requests (QoS 1, their PUBACKs left unread) on
// req/x, answered on id's response topic.
func (c *rawClient) request(t *testing.T, id string, n int) {
	t.Helper()
	for i := range n {
		c.write(t, packets.Packet{
			FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1}, PacketID: uint16(i + 1), TopicName: "req/x", Payload: []byte("q"),
			Properties: packets.Properties{ResponseTopic: "clients/" + id + "/resp", CorrelationData: []byte{byte(i)}},
			Mods:       packets.Mods{AllowResponseInfo: true},
		})
	}
}

// heldFor returns the bytes of the payloads mochi keeps for client id
// until it acknowledges them, and how many messages: mochi's own count,
// beside the broker's.
func heldFor(e *Embedded, id string) (int, int) {
	cl, ok := e.srv.Clients.Get(id)
	if !ok {
		return 0, 0
	}
	n := 0
	msgs := cl.State.Inflight.GetAll(false)
	for _, pk := range msgs {
		n += len(pk.Payload)
	}
	return n, len(msgs)
}

// ledgerLen returns how many messages the broker counts held for client
// id.
func ledgerLen(e *Embedded, id string) int {
	cl, ok := e.srv.Clients.Get(id)
	if !ok {
		return 0
	}
	l := ledgerOf(cl)
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.msgs)
}

// wantDisconnected reads c until the broker disconnects it and returns the
// DISCONNECT's reason code (0 if none came before the end).
func wantDisconnected(t *testing.T, c *rawClient, what string) byte {
	t.Helper()
	for {
		pk, err := c.read(t)
		if err != nil {
			wantClosedByBroker(t, c, what)
			return 0
		}
		if pk.FixedHeader.Type == packets.Disconnect {
			wantClosedByBroker(t, c, what)
			return pk.ReasonCode
		}
	}
}
