package session

import (
	"bytes"
	"testing"

	"github.com/eclipse/paho.golang/packets"
)

// The store lists what it holds in the order it was put, encodes a
// packet when it is read, and forgets deleted and reset ones.
func TestReplyStore(t *testing.T) {
	s := newReplyStore()
	for _, id := range []uint16{7, 3, 9} {
		if err := s.Put(id, packets.PUBLISH, &packets.Publish{PacketID: id, QoS: 1, Topic: "t", Payload: []byte{byte(id)},
			Properties: &packets.Properties{}}); err != nil {
			t.Fatal(err)
		}
	}
	if ids, _ := s.List(); len(ids) != 3 || ids[0] != 7 || ids[1] != 3 || ids[2] != 9 {
		t.Errorf("List %v, want [7 3 9]", ids)
	}
	r, err := s.Get(3)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := packets.ReadPacket(r)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := cp.Content.(*packets.Publish); !ok || p.PacketID != 3 || !bytes.Equal(p.Payload, []byte{3}) {
		t.Errorf("Get(3) decodes to %+v", cp.Content)
	}
	if err := s.Delete(3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(3); err == nil {
		t.Error("a deleted packet is still there")
	}
	if err := s.Delete(3); err == nil {
		t.Error("deleting twice is not reported")
	}
	_ = s.Reset()
	if ids, _ := s.List(); len(ids) != 0 {
		t.Errorf("after Reset: %v", ids)
	}
}
