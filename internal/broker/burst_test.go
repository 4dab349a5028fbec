package broker

import (
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/eclipse/paho.golang/paho"
)

// Bursts of QoS 1 messages from eight publishers over TCP all reach a
// client in process whose Receive Maximum (64, as the trigger session's)
// they overrun (issue 38). Before, a run now and then stopped for good
// (-count 40 here hung before its end; the benchmark's bursts, about one
// run in three): mochi's reader of the subscriber read-locked its in-flight map
// twice (Inflight.NextImmediate), and a publisher's Set between the two
// locks deadlocked them (third_party/mochi-mqtt-server/CMDHOST.md). A
// deadlocked broker does not close either: such a run ends at go test's
// -timeout, with the goroutines' stacks.
//
// Still open (issue 38): with both cores loaded and the race detector on,
// about one run in sixty still stops with a window of 64 messages in
// flight that the subscriber never acknowledged (before the fix of
// sendWaiting's quota, with the quota at 0 and every message waiting).
// Until that is found it runs in make soak (CMDHOST_SOAK=1), 100 times,
// not in make test.
func TestBurstToInProcessSubscriber(t *testing.T) {
	if os.Getenv("CMDHOST_SOAK") == "" {
		t.Skip("a known stall under load (issue 38): make soak runs it")
	}
	const bursts, messages, publishers = 3, 1000, 8
	ctx := testCtx(t)
	e := startBroker(t)
	conn, err := e.DialInProcess(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got atomic.Int64
	all := make(chan struct{})
	c := paho.NewClient(paho.ClientConfig{ClientID: "in-process", Conn: conn,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(paho.PublishReceived) (bool, error) {
			if got.Add(1) == bursts*messages {
				close(all)
			}
			return true, nil
		}}})
	window := uint16(64)
	if _, err := c.Connect(ctx, &paho.Connect{ClientID: "in-process", KeepAlive: 30, CleanStart: true,
		Properties: &paho.ConnectProperties{ReceiveMaximum: &window}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(&paho.Disconnect{}) })
	if _, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "burst/#", QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	pubs := make([]*testClient, publishers)
	for i := range pubs {
		pubs[i] = connect(t, ctx, e.URL(), "burst-pub-"+strconv.Itoa(i))
	}
	for range bursts {
		var wg sync.WaitGroup
		for w, pub := range pubs {
			wg.Go(func() {
				for i := w; i < messages; i += publishers {
					if _, err := pub.cm.Publish(ctx, &paho.Publish{QoS: 1, Topic: "burst/" + strconv.Itoa(w), Payload: []byte("x")}); err != nil {
						t.Errorf("publisher %d, message %d: %v", w, i, err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	select {
	case <-all:
	case <-ctx.Done():
		t.Fatalf("%d of %d messages received", got.Load(), bursts*messages)
	}
}
