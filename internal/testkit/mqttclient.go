package testkit

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
)

// hangGuard bounds each wait of a Client: long enough that only a hang
// reaches it, even on a loaded machine under -race.
const hangGuard = time.Minute

// Client is a raw MQTT v5 client for tests: every message on the topics it
// subscribes to arrives on Messages, in order, whatever it carries (a 202
// or a duplicate reply included), and nothing is answered for it.
type Client struct {
	cm        *autopaho.ConnectionManager
	got       chan *paho.Publish
	closeOnce sync.Once
}

// Dial connects to broker as clientID with a clean start and waits until
// the connection is up; the client is closed when the test ends.
func Dial(tb testing.TB, broker *url.URL, clientID string) *Client {
	tb.Helper()
	c := &Client{got: make(chan *paho.Publish, 128)}
	up := make(chan struct{})
	var upOnce sync.Once
	cm, err := autopaho.NewConnection(context.Background(), autopaho.ClientConfig{
		ServerUrls: []*url.URL{broker}, KeepAlive: 30, CleanStartOnInitialConnection: true,
		OnConnectionUp:       func(*autopaho.ConnectionManager, *paho.Connack) { upOnce.Do(func() { close(up) }) },
		ConnectPacketBuilder: problemInfo,
		ClientConfig: paho.ClientConfig{ClientID: clientID,
			// paho waits PacketTimeout (10 s by default) for an ack,
			// whatever the context says: a 64 MiB publish on two busy
			// cores took longer. Only a hang may fail a test.
			PacketTimeout: hangGuard,
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
				c.got <- pr.Packet
				return true, nil
			}}},
	})
	if err != nil {
		tb.Fatalf("test client %s: %v", clientID, err)
	}
	c.cm = cm
	tb.Cleanup(c.Close)
	select {
	case <-up:
	case <-time.After(hangGuard):
		tb.Fatalf("test client %s: not connected to %s within %v", clientID, broker, hangGuard)
	}
	return c
}

// problemInfo asks the broker for problem information: without it, mochi
// (the embedded broker) strips the user properties of what it sends.
func problemInfo(c *paho.Connect, _ *url.URL) (*paho.Connect, error) {
	if c.Properties == nil {
		c.Properties = &paho.ConnectProperties{}
	}
	c.Properties.RequestProblemInfo = true
	return c, nil
}

// Close disconnects the client; later calls do nothing.
func (c *Client) Close() {
	c.closeOnce.Do(func() { _ = c.cm.Disconnect(context.Background()) })
}

// Subscribe subscribes to topic at QoS 1 and returns once the broker has
// granted it.
func (c *Client) Subscribe(tb testing.TB, topic string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if _, err := c.cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: topic, QoS: 1}}}); err != nil {
		tb.Fatalf("subscribing to %s: %v", topic, err)
	}
}

// Publish publishes p and returns once the broker has acknowledged it (at
// QoS 1 and above).
func (c *Client) Publish(tb testing.TB, p *paho.Publish) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if _, err := c.cm.Publish(ctx, p); err != nil {
		tb.Fatalf("publishing on %s: %v", p.Topic, err)
	}
}

// Messages returns the messages received on the client's subscriptions.
func (c *Client) Messages() <-chan *paho.Publish { return c.got }

// Next returns the next message received, failing the test if none comes
// before the hang guard.
func (c *Client) Next(tb testing.TB) *paho.Publish {
	tb.Helper()
	select {
	case p := <-c.got:
		return p
	case <-time.After(hangGuard):
		tb.Fatalf("no message within %v", hangGuard)
		return nil
	}
}
