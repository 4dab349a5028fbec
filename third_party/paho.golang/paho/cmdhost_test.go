package paho

// Tests of cmdhost's changes to the client (see ../CMDHOST.md).

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
)

// holdingLogger holds Connect at its "starting acking routine" line until
// the PUBLISH sent behind the CONNACK has been handled: the order in
// which upstream's Connect then forgot that packet.
type holdingLogger struct{ handled chan struct{} }

func (l holdingLogger) Println(v ...any) {
	if fmt.Sprint(v...) == "starting acking routine" {
		<-l.handled
	}
}
func (l holdingLogger) Printf(string, ...any) {}

// A PUBLISH the broker sends right behind its CONNACK is acknowledged:
// Connect reset the acks tracker after its reader had started, which
// forgot that packet when the reader was quicker, and its PUBACK was
// never sent.
func TestAckOfAPublishRightAfterConnack(t *testing.T) {
	client, server := net.Pipe()
	handled := make(chan struct{})
	var c *Client
	c = NewClient(ClientConfig{Conn: client, EnableManualAcknowledgment: true, SendAcksInterval: time.Millisecond,
		OnPublishReceived: []func(PublishReceived) (bool, error){func(pr PublishReceived) (bool, error) {
			if err := c.Ack(pr.Packet); err != nil {
				t.Error(err)
			}
			close(handled)
			return true, nil
		}}})
	c.SetDebugLogger(holdingLogger{handled})
	puback := make(chan *packets.ControlPacket, 1)
	go func() {
		if _, err := packets.ReadPacket(server); err != nil { // CONNECT
			t.Error(err)
			return
		}
		var b bytes.Buffer
		_, _ = packets.NewControlPacket(packets.CONNACK).WriteTo(&b)
		_, _ = (&packets.Publish{QoS: 1, PacketID: 1, Topic: "t", Properties: &packets.Properties{}}).WriteTo(&b)
		_, _ = server.Write(b.Bytes())
		for {
			p, err := packets.ReadPacket(server)
			if err != nil {
				return
			}
			if p.Type == packets.PUBACK {
				puback <- p
				return
			}
		}
	}()
	if _, err := c.Connect(context.Background(), &Connect{ClientID: "c"}); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-puback:
		if id := p.PacketID(); id != 1 {
			t.Fatalf("PUBACK of packet %d, want 1", id)
		}
	case <-time.After(time.Minute): // the ack is due within a millisecond
		t.Fatal("no PUBACK for the PUBLISH sent behind the CONNACK")
	}
	_ = server.Close()
	<-c.Done()
}
