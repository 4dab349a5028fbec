package rpctest

import (
	"bufio"
	"context"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/packets"
)

// Flush returns only once the client has read what the broker queued for
// it (here a PUBACK), so that a Disconnect after it loses nothing the
// broker has already answered.
func TestFlushWaitsForTheClientToRead(t *testing.T) {
	b := NewBroker()
	defer b.Close()
	nc, err := b.Dial(context.Background(), autopaho.ClientConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(nc)
	if _, err := (&packets.Connect{ClientID: "flush", ProtocolVersion: 5, ProtocolName: "MQTT", Properties: &packets.Properties{}}).WriteTo(nc); err != nil {
		t.Fatal(err)
	}
	if p, err := packets.ReadPacket(r); err != nil || p.Type != packets.CONNACK {
		t.Fatalf("CONNACK: %v %v", p, err)
	}
	if _, err := (&packets.Publish{QoS: 1, PacketID: 7, Topic: "t", Properties: &packets.Properties{}}).WriteTo(nc); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.WaitPublished(ctx, 1); err != nil {
		t.Fatal(err)
	}
	flushed := make(chan error, 1)
	go func() { flushed <- b.Flush(ctx) }()
	select {
	case err := <-flushed:
		t.Fatalf("Flush returned (%v) while the PUBACK is unread", err)
	case <-time.After(50 * time.Millisecond):
	}
	if p, err := packets.ReadPacket(r); err != nil || p.Type != packets.PUBACK {
		t.Fatalf("PUBACK: %v %v", p, err)
	}
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	b.Disconnect()
	if err := b.Flush(ctx); err != nil {
		t.Fatalf("Flush with no client connected: %v", err)
	}
}
