package broker

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// Who the broker drops for not reading: a client that does not read, not
// one that reads as fast as it can (tcpconn.go).

// A client that reads as fast as it can with 8 requests of 4 MB in flight
// (each reply within the host's --max-response-bytes, 4 MiB) is served:
// every reply delivered, no one dropped. Before, it was disconnected as
// not reading as soon as 8 MB were queued for it (the queue's bound was
// 4 MiB, less than two replies).
func TestFastReaderWithLargeRepliesServed(t *testing.T) {
	const (
		size     = 4_000_000
		inFlight = 8
		total    = 16
	)
	e, logs := startWith(t, Config{})
	// A hang guard, not a margin: 0.26 GB through the broker take half a
	// second on an idle machine.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%+v\n%s", e.Stats(), logs)
		}
	})
	startReplier(t, e, size)
	inv := connect(t, ctx, e.URL(), "fast", "clients/fast/resp")
	request := bytes.Repeat([]byte("q"), size)
	send := func(i int) {
		go func() {
			_, _ = inv.cm.Publish(ctx, &paho.Publish{QoS: 1, Topic: "req/x", Payload: request,
				Properties: &paho.PublishProperties{ResponseTopic: "clients/fast/resp", CorrelationData: []byte{byte(i)}}})
		}()
	}
	for i := range inFlight {
		send(i)
	}
	start := time.Now()
	for got := 0; got < total; got++ {
		if p := inv.next(t, ctx); len(p.Payload) != size {
			t.Fatalf("reply %d: %d bytes, want %d", got+1, len(p.Payload), size)
		}
		if next := got + inFlight; next < total {
			send(next)
		}
	}
	s := e.Stats()
	t.Logf("%d replies of %d MB, %d in flight: %v", total, size/1_000_000, inFlight, time.Since(start).Round(time.Millisecond))
	if s.ClientsDropped != 0 || s.MessagesDropped != 0 {
		t.Errorf("ClientsDropped %d, MessagesDropped %d; want none", s.ClientsDropped, s.MessagesDropped)
	}
}

// A client that does not read at all is still disconnected, by the write
// timeout once its socket takes nothing, well before its queue's bound;
// what was queued for it is then no longer held.
func TestNonReaderDroppedByWriteTimeout(t *testing.T) {
	e, logs := startWith(t, Config{WriteTimeout: 300 * time.Millisecond})
	ctx := testCtx(t)
	stuck := rawConnected(t, e.Addr(), "stuck")
	stuck.subscribe(t, "load/#", 0)
	pub := connect(t, ctx, e.URL(), "publisher")
	// 16 MiB: more than the sockets' buffers take, far less than the
	// queue's bound (72 MiB).
	payload := bytes.Repeat([]byte("x"), 256<<10)
	for range 64 {
		if _, err := pub.cm.Publish(ctx, &paho.Publish{Topic: "load/x", QoS: 1, Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitFor(t, "the client that does not read dropped", func() bool { return e.Stats().ClientsDropped == 1 })
	wantClosedByBroker(t, stuck, "the client that does not read")
	testkit.WaitFor(t, "nothing held", func() bool { return e.Stats().HeldBytes == 0 })
	if !logs.HasLine("client disconnected: it does not read", "i/o timeout") {
		t.Errorf("the drop is not logged as a write timeout:\n%s", logs)
	}
}
