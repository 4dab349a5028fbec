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

// ReceiveTelemetryFilter hands over the messages of every topic its
// filter matches, with the topic, and no other; a filter with # or a +
// inside a level is refused.
func TestReceiveTelemetryFilter(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		inv := newInvoker(t, u, rpc.InvokerConfig{})
		for _, bad := range []string{"cmdhost/#", "cmdhost/a+/replicas", "$SYS/+"} {
			if err := inv.ReceiveTelemetryFilter(ctxT(t), bad, func(string, []byte) {}); err == nil {
				t.Errorf("filter %q: no error", bad)
			}
		}
		type msg struct{ topic, payload string }
		got := make(chan msg, 100)
		ctx, cancel := context.WithCancel(ctxT(t))
		done := make(chan error, 1)
		go func() {
			done <- inv.ReceiveTelemetryFilter(ctx, "cmdhost/+/replicas", func(topic string, p []byte) { got <- msg{topic, string(p)} })
		}()
		pub := testkit.Dial(t, u, "filter-source")
		send := func(topic, payload string) {
			pub.Publish(t, &paho.Publish{QoS: 1, Topic: topic, Payload: []byte(payload)})
		}
		tick := time.NewTicker(50 * time.Millisecond) // until the subscription is made
		defer tick.Stop()
	wait:
		for {
			send("cmdhost/a/replicas", "first")
			select {
			case <-got:
				break wait
			case <-tick.C:
			case <-ctxT(t).Done():
				t.Fatal("no telemetry received")
			}
		}
		send("cmdhost/b/events", "other")
		send("cmdhost/b/c/replicas", "other")
		send("cmdhost/b/replicas", "last")
		for m := range got {
			if m.payload == "other" {
				t.Fatalf("a message of %s was handed over", m.topic)
			}
			if m.payload == "last" {
				if m.topic != "cmdhost/b/replicas" {
					t.Fatalf("topic %q, want cmdhost/b/replicas", m.topic)
				}
				break
			}
			if !strings.HasSuffix(m.topic, "/replicas") {
				t.Fatalf("topic %q", m.topic)
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("ReceiveTelemetryFilter: %v", err)
		}
	})
}
