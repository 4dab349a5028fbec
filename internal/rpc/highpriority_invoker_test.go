package rpc_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
)

// Every request the invoker sends carries the Azure IoT Operations
// backpressure mark once, empty, as the SDKs' invokers send it, even when
// the call's metadata (a nested call's, copied from its request) holds
// one; a reply's mark is not in the result's metadata.
func TestRequestsMarkedHighPriority(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		r := newResponder(t, u)
		inv := newInvoker(t, u, rpc.InvokerConfig{})
		c := askCall(5 * time.Second)
		c.Ack = false
		c.Metadata = map[string]string{"$high_priority": "copied", "k": "v"}
		out := invokeAsync(ctxT(t), inv, c)
		p := r.next()
		n := 0
		for _, up := range p.Properties.User {
			if up.Key == "$high_priority" {
				n++
				if up.Value != "" {
					t.Errorf("the mark's value is %q, want none", up.Value)
				}
			}
		}
		if v, _ := prop(p, "k"); n != 1 || v != "v" {
			t.Fatalf("a request with %d marks (metadata k=%q): %+v", n, v, p.Properties.User)
		}
		expiry := uint32(10)
		r.Publish(t, &paho.Publish{QoS: 1, Topic: p.Properties.ResponseTopic, Payload: []byte("done"),
			Properties: &paho.PublishProperties{CorrelationData: p.Properties.CorrelationData, MessageExpiry: &expiry,
				User: paho.UserProperties{{Key: "__stat", Value: "200"}, {Key: "__protVer", Value: "1.0"}, {Key: "$high_priority"}, {Key: "k", Value: "back"}}}})
		if o := wait(t, out); o.err != nil || string(o.res.Payload) != "done" || len(o.res.Metadata) != 1 || o.res.Metadata["k"] != "back" {
			t.Fatalf("%+v: metadata %v", o, o.res.Metadata)
		}
	})
}
