package broker

import (
	"sync"
	"testing"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
)

// A client in process that publishes large messages while it is sent
// large ones gets all of them, and all its publishes acknowledged (issue
// 40: the host's 1 MiB replies timed out). Before, the broker's writes
// to a client in process waited once a MiB was unread, and the four
// goroutines met in a cycle: mochi's writer for the client, holding the
// client's write lock, waited for the client to read; the client's
// reader waited for paho's session lock, held by its acker, which waited
// for the broker to read the client's publishes; and mochi's reader for
// the client waited for the write lock to send a PUBACK.
func TestInProcessLargeMessagesBothWays(t *testing.T) {
	const messages, size = 24, 1 << 20
	ctx := testCtx(t)
	e := startBroker(t)
	conn, err := e.DialInProcess(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{}, messages)
	// Packets stay whole, written from several goroutines, as the host's
	// session keeps them.
	c := paho.NewClient(paho.ClientConfig{ClientID: "in-process", Conn: packets.NewThreadSafeConn(conn),
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(paho.PublishReceived) (bool, error) {
			got <- struct{}{}
			return true, nil
		}}})
	if _, err := c.Connect(ctx, &paho.Connect{ClientID: "in-process", KeepAlive: 30, CleanStart: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(&paho.Disconnect{}) })
	if _, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "to-host/#", QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	tcp := connect(t, ctx, e.URL(), "tcp-client", "from-host/#")
	payload := make([]byte, size)
	var wg sync.WaitGroup
	for range messages {
		wg.Go(func() {
			if _, err := tcp.cm.Publish(ctx, &paho.Publish{QoS: 1, Topic: "to-host/x", Payload: payload}); err != nil {
				t.Errorf("publish to the client in process: %v", err)
			}
		})
		wg.Go(func() {
			if _, err := c.Publish(ctx, &paho.Publish{QoS: 1, Topic: "from-host/x", Payload: payload}); err != nil {
				t.Errorf("publish from the client in process: %v", err)
			}
		})
	}
	wg.Wait()
	for i := range messages {
		select {
		case <-got:
		case <-ctx.Done():
			t.Fatalf("%d of %d messages reached the client in process", i, messages)
		}
	}
}
