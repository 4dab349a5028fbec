package rpc

import (
	"testing"

	"github.com/eclipse/paho.golang/packets"
)

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
