package rpc

import (
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/rpc/rpctest"
)

// Unsubscribe withdraws the subscriptions for good (reconnections do not
// renew them), and a refused UNSUBSCRIBE names the command.
func TestUnsubscribe(t *testing.T) {
	h := start(t, Config{}, Command{Name: "echo", Handler: echoHandler}, Command{Name: "other", Handler: echoHandler})
	h.broker.PushUnsubscribeAcks(rpctest.AckFail)
	err := h.exec.Unsubscribe(ctx(t))
	if err == nil {
		t.Fatal("a refused UNSUBSCRIBE must be an error")
	}
	for _, name := range []string{"command echo", "command other"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error %q does not name %s", err, name)
		}
	}
	if err := h.exec.Unsubscribe(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if subs := h.broker.Subscriptions(); len(subs) != 0 {
		t.Fatalf("still subscribed to %v", subs)
	}
	n := h.broker.Connects()
	h.broker.Disconnect()
	if err := h.broker.WaitConnects(ctx(t), n+1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // a resubscription would be under way by now
	if subs := h.broker.Subscriptions(); len(subs) != 0 {
		t.Fatalf("a reconnection subscribed again: %v", subs)
	}
}
