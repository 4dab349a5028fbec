package admin_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/host/admin"
)

// The admin token goes with the ops that need it only: a spy posing as a
// host (anyone may announce one) that is asked for the open ops sees no
// token; reload carries it.
func TestTokenOnlyWithGuardedOps(t *testing.T) {
	u, _ := runHost(t, "token-host")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan *paho.Publish, 64)
	up := make(chan struct{}, 1)
	cm, err := autopaho.NewConnection(ctx, autopaho.ClientConfig{
		ServerUrls: []*url.URL{u}, KeepAlive: 30, ConnectTimeout: 5 * time.Second,
		OnConnectionUp: func(cm *autopaho.ConnectionManager, _ *paho.Connack) {
			go func() {
				if _, err := cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "cmdhost/spy/admin/#", QoS: 1}}}); err == nil {
					up <- struct{}{}
				}
			}()
		},
		ClientConfig: paho.ClientConfig{ClientID: "spy", OnPublishReceived: []func(paho.PublishReceived) (bool, error){
			func(pr paho.PublishReceived) (bool, error) { got <- pr.Packet; return true, nil },
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cm.Disconnect(context.Background()) }()
	select {
	case <-up:
	case <-ctx.Done():
		t.Fatal("the spy did not subscribe")
	}
	c := dial(t, admin.ClientConfig{Broker: u, ExecutorID: "spy", Token: "secret", Timeout: 300 * time.Millisecond})
	hasToken := func(op string) bool {
		for {
			select {
			case p := <-got:
				if p.Topic != admin.Topic("spy", op) {
					continue
				}
				return p.Properties.User.Get(admin.TokenKey) != ""
			case <-ctx.Done():
				t.Fatalf("no %s request reached the spy", op)
			}
		}
	}
	_, _ = c.List(ctx)
	if hasToken(admin.OpList) {
		t.Error("list carried the admin token")
	}
	_, _ = c.Stats(ctx)
	if hasToken(admin.OpStats) {
		t.Error("stats carried the admin token")
	}
	_, _ = c.Reload(ctx, "echo")
	if !hasToken(admin.OpReload) {
		t.Error("reload went without the admin token")
	}
}
