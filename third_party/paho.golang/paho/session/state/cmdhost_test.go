package state

// Tests of cmdhost's changes to the session state (see ../../../CMDHOST.md).

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
)

// A PUBLISH the broker never acks holds its slot of the send quota until
// it is abandoned; then the slot serves the next PUBLISH, the abandoned one
// is not resent, and its late PUBACK completes nothing else.
func TestAbandonReleasesTheSlot(t *testing.T) {
	s := NewInMemory()
	one := uint16(1)
	if err := s.ConAckReceived(io.Discard, &packets.Connect{}, &packets.Connack{
		SessionPresent: true, Properties: &packets.Properties{ReceiveMaximum: &one}}); err != nil {
		t.Fatal(err)
	}
	stuck := &packets.Publish{QoS: 1, Topic: "$SYS/x"}
	stuckResp := make(chan packets.ControlPacket, 1)
	if err := s.AddToSession(context.Background(), stuck, stuckResp); err != nil {
		t.Fatal(err)
	}
	next := &packets.Publish{QoS: 1, Topic: "ok"}
	nextResp := make(chan packets.ControlPacket, 1)
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.AddToSession(short, next, nextResp); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with the only slot held, AddToSession: %v; want it to wait", err)
	}

	if !s.Abandon(stuck.PacketID) {
		t.Fatal("Abandon of a PUBLISH waiting for its ack returned false")
	}
	if s.Abandon(stuck.PacketID) {
		t.Error("a second Abandon of the same PUBLISH returned true")
	}
	if p := <-stuckResp; p.Type != 0 {
		t.Errorf("the abandoned PUBLISH's waiter got %v, want the empty packet", p.Type)
	}
	if err := s.AddToSession(context.Background(), next, nextResp); err != nil {
		t.Fatalf("after Abandon the slot is free: %v", err)
	}
	if next.PacketID == stuck.PacketID {
		t.Fatalf("the abandoned PUBLISH's identifier %d was reused before its ack", next.PacketID)
	}
	if ids, _ := s.clientStore.List(); len(ids) != 1 || ids[0] != next.PacketID {
		t.Errorf("store holds %v, want only %d (the abandoned one is not resent)", ids, next.PacketID)
	}

	late := packets.ControlPacket{FixedHeader: packets.FixedHeader{Type: packets.PUBACK}, Content: &packets.Puback{PacketID: stuck.PacketID}}
	if err := s.PacketReceived(&late, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-nextResp:
		t.Fatalf("the abandoned PUBLISH's late PUBACK completed another: %v", p)
	default:
	}
	s.mu.Lock()
	_, held := s.clientPackets[stuck.PacketID]
	s.mu.Unlock()
	if held {
		t.Error("the late PUBACK left the abandoned identifier in use")
	}
	// Abandoned identifiers do not block Close.
	if !s.Abandon(next.PacketID) {
		t.Fatal("Abandon of the second PUBLISH")
	}
	<-nextResp
	done := make(chan struct{})
	go func() { _ = s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // hang guard
		t.Fatal("Close blocked on an abandoned PUBLISH")
	}
}
