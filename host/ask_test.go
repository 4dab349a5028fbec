package host_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host/rpc"
	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
)

// rawClient is an MQTT client subscribed to a response topic of its own;
// it sees every response, 202s included.
type rawClient struct {
	cm        *autopaho.ConnectionManager
	respTopic string
	got       chan *paho.Publish
}

func newRawClient(t testing.TB, u *url.URL) *rawClient {
	t.Helper()
	name := strings.ReplaceAll(t.Name(), "/", "-")
	c := &rawClient{respTopic: "ask/" + name, got: make(chan *paho.Publish, 16)}
	up := make(chan struct{})
	cm, err := autopaho.NewConnection(context.Background(), autopaho.ClientConfig{
		ServerUrls: []*url.URL{u}, KeepAlive: 30, CleanStartOnInitialConnection: true,
		OnConnectionUp: func(*autopaho.ConnectionManager, *paho.Connack) { close(up) },
		ClientConfig: paho.ClientConfig{ClientID: "ask-" + name,
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
				c.got <- pr.Packet
				return true, nil
			}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cm.Disconnect(context.Background()) })
	<-up
	if _, err := cm.Subscribe(ctxT(t), &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: c.respTopic, QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	c.cm = cm
	return c
}

// send publishes a request (or a cancel) on topic with correlation corr
// and the given user properties.
func (c *rawClient) send(t testing.TB, topic string, corr []byte, payload string, props ...string) {
	t.Helper()
	exp := uint32(30)
	p := &paho.Publish{QoS: 1, Topic: topic, Payload: []byte(payload), Properties: &paho.PublishProperties{
		CorrelationData: corr, ResponseTopic: c.respTopic, MessageExpiry: &exp,
	}}
	for i := 0; i+1 < len(props); i += 2 {
		p.Properties.User = append(p.Properties.User, paho.UserProperty{Key: props[i], Value: props[i+1]})
	}
	if _, err := c.cm.Publish(ctxT(t), p); err != nil {
		t.Fatal(err)
	}
}

func (c *rawClient) next(t testing.TB) *paho.Publish {
	t.Helper()
	select {
	case p := <-c.got:
		return p
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("no response within a minute")
		return nil
	}
}

// A cancel through a real broker stops a guest in a tight loop: 499, the
// instance replaced, and the host serves on.
func TestCancelStopsGuestThroughBroker(t *testing.T) {
	forEachBroker(t, func(t *testing.T, u *url.URL) {
		// Only the cancel can end the call: its execution timeout is longer
		// than the request's expiry, which outlasts the test's hang guards.
		e := newEnvConfig(t, u, func(_ *rpc.Config, cmds []rpc.Command) {
			for i := range cmds {
				if cmds[i].Name == "spin" {
					cmds[i].Timeout = time.Hour
				}
			}
		}, "spin", "echo")
		c := newRawClient(t, u)
		corr := []byte("0123456789abcdef")
		c.send(t, "rpc/it-host/spin", corr, "", "cmdhost-ack", "1")
		if got := userProp(c.next(t), "__stat"); got != "202" {
			t.Fatalf("first response %s, want 202", got)
		}
		// The guest holds its instance (the warm one) before the cancel is
		// sent: a cancel that came first would stop a call with no guest
		// running yet, and nothing would be replaced.
		waitFor(t, func() bool { return e.plugins["spin"].Stats().InUse == 1 })
		c.send(t, "rpc/it-host/spin", corr, "", "cmdhost-cancel", "1")
		if got := userProp(c.next(t), "__stat"); got != "499" {
			t.Fatalf("after cancel %s, want 499", got)
		}
		waitFor(t, func() bool { return e.plugins["spin"].Stats().Replaced == 1 })
		// A duplicate after Cancelled gets 499 again; the host serves on.
		c.send(t, "rpc/it-host/spin", corr, "", "cmdhost-ack", "1")
		if got := userProp(c.next(t), "__stat"); got != "499" {
			t.Fatalf("duplicate after cancel %s, want 499", got)
		}
		if res := e.mustCall("echo", "still here"); string(res.Payload) != "still here" {
			t.Fatalf("%q", res.Payload)
		}
	})
}
