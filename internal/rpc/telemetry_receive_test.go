package rpc_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// ReceiveTelemetry hands over the messages of its topic, and only those,
// beside the invoker's calls; a wildcard is refused.
func TestReceiveTelemetry(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		inv := newInvoker(t, u, rpc.InvokerConfig{})
		if err := inv.ReceiveTelemetry(ctxT(t), "cmdhost/+/events", func([]byte) {}); err == nil || !strings.Contains(err.Error(), "not a topic name") {
			t.Fatalf("a wildcard topic: %v", err)
		}
		got := make(chan string, 100)
		ctx, cancel := context.WithCancel(ctxT(t))
		done := make(chan error, 1)
		go func() {
			done <- inv.ReceiveTelemetry(ctx, "cmdhost/h1/events", func(p []byte) { got <- string(p) })
		}()
		pub := testkit.Dial(t, u, "telemetry-source")
		send := func(topic, payload string) {
			pub.Publish(t, &paho.Publish{QoS: 1, Topic: topic, Payload: []byte(payload)})
		}
		// Nothing tells when the subscription is made: send until the
		// first message comes.
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
	wait:
		for {
			send("cmdhost/h2/events", "other")
			send("cmdhost/h1/events", "first")
			select {
			case <-got:
				break wait
			case <-tick.C:
			case <-ctxT(t).Done():
				t.Fatal("no telemetry received")
			}
		}
		send("cmdhost/h2/events", "other")
		send("cmdhost/h1/events", "last")
		for p := range got {
			if p == "other" {
				t.Fatal("a message of another topic was handed over")
			}
			if p == "last" {
				break
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("ReceiveTelemetry: %v", err)
		}
	})
}
