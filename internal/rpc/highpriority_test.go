package rpc

import (
	"context"
	"testing"

	"github.com/eclipse/paho.golang/packets"

	"github.com/cmdhost/cmdhost/abi"
)

// marks counts the $high_priority properties of p and says whether each
// is empty, as the Azure IoT Operations SDKs send it (their ADR 31).
func marks(p *packets.Publish) (n int, empty bool) {
	empty = true
	for _, u := range p.Properties.User {
		if u.Key == propHighPriority {
			n++
			empty = empty && u.Value == ""
		}
	}
	return n, empty
}

// Every reply carries the backpressure mark once, empty: a handler's own,
// a status the host answers, whatever the request and the handler's
// metadata say. A request's mark is the transport's, not the handler's
// metadata.
func TestRepliesMarkedHighPriority(t *testing.T) {
	seen := make(chan map[string]string, 1)
	h := start(t, Config{}, Command{Name: "echo", Handler: func(_ context.Context, r *abi.Request) (*abi.Response, error) {
		seen <- r.Metadata
		return &abi.Response{Payload: r.Payload, Metadata: map[string]string{propHighPriority: "from the handler", "k": "v"}}, nil
	}})
	if err := h.broker.WaitSubscribed(ctx(t), "rpc/exec-1/echo"); err != nil {
		t.Fatal(err)
	}
	marked := func(p *packets.Publish) {
		p.Properties.User = append(p.Properties.User, packets.User{Key: propHighPriority})
	}
	resp := h.roundTrip(req("rpc/exec-1/echo", 1, marked), 1)
	if n, empty := marks(resp); n != 1 || !empty {
		t.Fatalf("a handler's reply has %d marks (empty: %v): %+v", n, empty, resp.Properties.User)
	}
	if v, _ := user(resp, "k"); v != "v" {
		t.Fatalf("the handler's other metadata is lost: %+v", resp.Properties.User)
	}
	if md := <-seen; len(md) != 0 {
		t.Fatalf("the handler saw metadata %v, want none", md)
	}
	bad := h.roundTrip(req("rpc/exec-1/echo", 2, func(p *packets.Publish) { p.Properties.User[0].Value = "9.0" }), 2)
	if st, _ := user(bad, "__stat"); st != "505" {
		t.Fatalf("a request of protocol 9.0 answered %q", st)
	}
	if n, empty := marks(bad); n != 1 || !empty {
		t.Fatalf("the host's own status has %d marks (empty: %v): %+v", n, empty, bad.Properties.User)
	}
}
