package brokertest

import (
	"bytes"
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/internal/broker"
)

func TestMosquittoRoundTrip(t *testing.T) {
	u := StartMosquitto(t)
	if u.Scheme != "mqtt" || !strings.HasPrefix(u.Host, "127.0.0.1:") || u.Port() == "1883" {
		t.Fatalf("StartMosquitto returned %v", u)
	}
	roundTrip(t, u)
}

func TestEmbeddedRoundTrip(t *testing.T) {
	roundTrip(t, StartEmbedded(t))
}

// withoutStamp is user without the sender's client id the embedded
// broker adds to a request (broker.ClientIDProperty, tested there).
func withoutStamp(user paho.UserProperties) paho.UserProperties {
	return slices.DeleteFunc(slices.Clone(user), func(u paho.UserProperty) bool { return u.Key == broker.ClientIDProperty })
}

func TestMosquittoConf(t *testing.T) {
	conf := mosquittoConf(45678, "/tmp/x/mosquitto.log", MosquittoOptions{})
	for _, line := range []string{
		"listener 45678 127.0.0.1", "allow_anonymous true", "set_tcp_nodelay true",
		"max_inflight_messages 0", "max_queued_messages 1000000", "persistence false",
		"log_dest file /tmp/x/mosquitto.log",
	} {
		if !slices.Contains(strings.Split(conf, "\n"), line) {
			t.Errorf("config lacks %q:\n%s", line, conf)
		}
	}
}

// roundTrip does one QoS 1 request and response between two autopaho
// clients (configured as cmdhost's are: fixed client id, clean start false,
// session expiry > 0) and checks the v5 properties survive both ways.
func roundTrip(t *testing.T, u *url.URL) {
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()

	requests := make(chan *paho.Publish, 1)
	responses := make(chan *paho.Publish, 1)
	exec := connect(t, ctx, u, "bt-executor", "bt/cmd/request", requests)
	inv := connect(t, ctx, u, "bt-invoker", "bt/cmd/response", responses)

	reqExpiry, pf := uint32(10), byte(1)
	corr := []byte("0123456789abcdef")
	reqUser := paho.UserProperties{{Key: "__srcId", Value: "bt-invoker"}, {Key: "__protVer", Value: "1.0"}}
	if _, err := inv.Publish(ctx, &paho.Publish{QoS: 1, Topic: "bt/cmd/request", Payload: []byte(`"ping"`), Properties: &paho.PublishProperties{
		CorrelationData: corr,
		ResponseTopic:   "bt/cmd/response",
		MessageExpiry:   &reqExpiry,
		ContentType:     "application/json",
		PayloadFormat:   &pf,
		User:            reqUser,
	}}); err != nil {
		t.Fatal(err)
	}

	var req *paho.Publish
	select {
	case req = <-requests:
	case <-ctx.Done():
		t.Fatal("request not delivered")
	}
	p := req.Properties
	if req.QoS != 1 || string(req.Payload) != `"ping"` || !bytes.Equal(p.CorrelationData, corr) || p.ResponseTopic != "bt/cmd/response" ||
		p.ContentType != "application/json" || p.PayloadFormat == nil || *p.PayloadFormat != 1 || !slices.Equal(withoutStamp(p.User), reqUser) {
		t.Fatalf("request arrived as %v", req)
	}
	if p.MessageExpiry == nil || *p.MessageExpiry > 10 || *p.MessageExpiry < 9 {
		t.Fatalf("request expiry %v, want 10 (or 9)", p.MessageExpiry)
	}

	respExpiry := uint32(10)
	respUser := paho.UserProperties{{Key: "__stat", Value: "200"}}
	if _, err := exec.Publish(ctx, &paho.Publish{QoS: 1, Topic: p.ResponseTopic, Payload: []byte(`"pong"`), Properties: &paho.PublishProperties{
		CorrelationData: p.CorrelationData,
		MessageExpiry:   &respExpiry,
		ContentType:     "application/json",
		User:            respUser,
	}}); err != nil {
		t.Fatal(err)
	}
	var resp *paho.Publish
	select {
	case resp = <-responses:
	case <-ctx.Done():
		t.Fatal("response not delivered")
	}
	if string(resp.Payload) != `"pong"` || !bytes.Equal(resp.Properties.CorrelationData, corr) ||
		resp.Properties.ContentType != "application/json" || !slices.Equal(resp.Properties.User, respUser) ||
		resp.Properties.MessageExpiry == nil || *resp.Properties.MessageExpiry < 9 {
		t.Fatalf("response arrived as %v", resp)
	}
}

func connect(t *testing.T, ctx context.Context, u *url.URL, id, filter string, got chan<- *paho.Publish) *autopaho.ConnectionManager {
	t.Helper()
	subscribed := make(chan error, 1)
	cctx, cancel := context.WithCancel(context.Background())
	cm, err := autopaho.NewConnection(cctx, autopaho.ClientConfig{
		ServerUrls:                    []*url.URL{u},
		KeepAlive:                     30,
		CleanStartOnInitialConnection: false,
		SessionExpiryInterval:         60,
		ReconnectBackoff:              autopaho.NewConstantBackoff(20 * time.Millisecond),
		OnConnectionUp: func(cm *autopaho.ConnectionManager, _ *paho.Connack) {
			go func() { // not inline: OnConnectionUp runs in autopaho's connection loop
				_, err := cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}})
				select {
				case subscribed <- err:
				default:
				}
			}()
		},
		ClientConfig: paho.ClientConfig{
			ClientID: id,
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){
				func(pr paho.PublishReceived) (bool, error) {
					select {
					case got <- pr.Packet:
					default:
					}
					return true, nil
				},
			},
		},
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer dcancel()
		_ = cm.Disconnect(dctx)
		cancel()
	})
	select {
	case err := <-subscribed:
		if err != nil {
			t.Fatalf("%s: subscribe: %v", id, err)
		}
	case <-ctx.Done():
		t.Fatalf("%s: not connected and subscribed: %v", id, ctx.Err())
	}
	return cm
}
