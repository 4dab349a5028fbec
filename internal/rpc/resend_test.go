package rpc

import (
	"bytes"
	"testing"
)

// A reply whose PUBACK never came is sent again, whole and marked DUP,
// on the next connection (the session's replyStore encodes it then).
func TestUnackedReplyResentOnReconnect(t *testing.T) {
	h := start(t, Config{}, Command{Name: "echo", Handler: echoHandler})
	h.broker.DropNextPubacks(1)
	first := h.roundTrip(req("rpc/exec-1/echo", 1), 1)
	h.broker.Disconnect()
	pubs := h.waitPublished(2)
	again := pubs[1]
	if !again.Duplicate || again.Topic != first.Topic || !bytes.Equal(again.Payload, first.Payload) ||
		!bytes.Equal(again.Properties.CorrelationData, first.Properties.CorrelationData) || stat(again) != stat(first) {
		t.Fatalf("resent reply %+v (dup %v), want the first %+v with DUP", again, again.Duplicate, first)
	}
}
