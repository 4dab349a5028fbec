package trigger_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/trigger"
)

// Start returns once the triggers are subscribed: a message published
// once, right after it, on a session the broker never saw (so holding
// no subscription yet), reaches its trigger. (Before, the subscription
// was made after Start returned, and the host said it served before it
// was: the first messages of a new host were lost.)
func TestTriggerSubscribedWhenStarted(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		pub := testkit.Dial(t, u, "sensor-start")
		for i := range 5 {
			got := make(chan *abi.Request, 1)
			temp := trigger.Trigger{Name: "on-temp", Plugin: "p", Filter: filter(t, "sensors/{device}/temp"), Topic: filter(t, "sensors/+/temp"),
				Handler: func(_ context.Context, req *abi.Request) (*abi.Response, error) {
					select { // the receivers started before get the message too
					case got <- req:
					default:
					}
					return nil, nil
				}}
			start(t, u, trigger.Config{Session: session.Config{ClientID: fmt.Sprintf("start-%d-triggers", i)}}, temp)
			pub.Publish(t, &paho.Publish{QoS: 1, Topic: "sensors/d1/temp", Payload: []byte("21.5"),
				Properties: &paho.PublishProperties{User: paho.UserProperties{{Key: "__protVer", Value: "1.0"}}}})
			select {
			case <-got:
			case <-time.After(testkit.Patience()): // a hang guard: a lost message never comes
				t.Fatalf("receiver %d: the message published once after Start never reached its trigger", i)
			}
		}
	})
}
