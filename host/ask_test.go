package host_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// rawClient is a test MQTT client subscribed to a response topic of its
// own; it sees every response, 202s included.
type rawClient struct {
	*testkit.Client
	respTopic string
}

func newRawClient(t testing.TB, u *url.URL) *rawClient {
	t.Helper()
	name := strings.ReplaceAll(t.Name(), "/", "-")
	c := &rawClient{Client: testkit.Dial(t, u, "ask-"+name), respTopic: "ask/" + name}
	c.Subscribe(t, c.respTopic)
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
	c.Publish(t, p)
}

func (c *rawClient) next(t testing.TB) *paho.Publish {
	t.Helper()
	return c.Next(t)
}

// A cancel through a real broker stops a guest in a tight loop: 499, the
// instance replaced, and the host serves on.
func TestCancelStopsGuestThroughBroker(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
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
		testkit.WaitFor(t, "spin to run", func() bool { return e.plugins["spin"].Stats().InUse == 1 })
		c.send(t, "rpc/it-host/spin", corr, "", "cmdhost-cancel", "1")
		if got := userProp(c.next(t), "__stat"); got != "499" {
			t.Fatalf("after cancel %s, want 499", got)
		}
		testkit.WaitFor(t, "the spin instance to be replaced", func() bool { return e.plugins["spin"].Stats().Replaced == 1 })
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
