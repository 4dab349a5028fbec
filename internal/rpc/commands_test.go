package rpc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

// Commands come and go while the executor runs: new topics are subscribed,
// dropped ones unsubscribed, a call in flight on a dropped command is still
// answered, and changed settings apply to the next request.
func TestSetCommands(t *testing.T) {
	gate, started := make(chan struct{}), make(chan struct{})
	slow := Command{Name: "slow", Topic: DefaultTopic, Handler: func(context.Context, *abi.Request) (*abi.Response, error) {
		close(started)
		<-gate
		return &abi.Response{Payload: []byte("slow done")}, nil
	}}
	h := start(t, Config{}, Command{Name: "echo", Handler: echoHandler}, slow)
	if _, err := h.broker.Deliver(req("rpc/exec-1/slow", 1)); err != nil { // in flight across the change
		t.Fatal(err)
	}
	<-started
	upper := Command{Name: "upper", Topic: DefaultTopic, Timeout: time.Second, Handler: func(_ context.Context, r *abi.Request) (*abi.Response, error) {
		return &abi.Response{Payload: []byte("UP " + string(r.Payload))}, nil
	}}
	if err := h.exec.SetCommands(ctx(t), []Command{upper}); err != nil {
		t.Fatal(err)
	}
	if err := h.broker.WaitSubscribed(ctx(t), "rpc/exec-1/upper"); err != nil {
		t.Fatal(err)
	}
	if err := h.broker.WaitUnsubscribed(ctx(t), "rpc/exec-1/echo"); err != nil {
		t.Fatal(err)
	}
	if err := h.broker.WaitUnsubscribed(ctx(t), "rpc/exec-1/slow"); err != nil {
		t.Fatal(err)
	}
	close(gate)
	pubs, err := h.broker.WaitPublished(ctx(t), 1)
	if err != nil || string(pubs[0].Payload) != "slow done" {
		t.Fatalf("the call in flight on a dropped command: %v %v", pubs, err)
	}
	// A request for a dropped command is acked and ignored.
	if _, err := h.broker.Deliver(req("rpc/exec-1/echo", 2)); err != nil {
		t.Fatal(err)
	}
	if r := h.roundTrip(req("rpc/exec-1/upper", 3), 2); string(r.Payload) != "UP hello" {
		t.Fatalf("new command: %q", r.Payload)
	}
	// A change of settings only (a new handler) keeps the subscription.
	upper.Handler = func(context.Context, *abi.Request) (*abi.Response, error) {
		return &abi.Response{Payload: []byte("v2")}, nil
	}
	if err := h.exec.SetCommands(ctx(t), []Command{upper}); err != nil {
		t.Fatal(err)
	}
	if r := h.roundTrip(req("rpc/exec-1/upper", 4), 3); string(r.Payload) != "v2" {
		t.Fatalf("after the settings change: %q", r.Payload)
	}
	if _, err := h.broker.WaitAcks(ctx(t), 4); err != nil {
		t.Fatal(err)
	}
	if got := h.exec.Filters(); len(got) != 1 || got[0] != "rpc/exec-1/upper" {
		t.Fatalf("filters %v", got)
	}
}

// One bad or clashing command never freezes routing: SetCommands serves
// the rest of the table and names each command it left out.
func TestSetCommandsServesTheRest(t *testing.T) {
	h := start(t, Config{}, Command{Name: "echo", Handler: echoHandler})
	err := h.exec.SetCommands(ctx(t), []Command{
		{Name: "a", Topic: "same/topic", Handler: echoHandler},
		{Name: "b", Topic: "same/topic", Handler: echoHandler},
		{Name: "bad", Topic: "x/{no such}/y", Handler: echoHandler},
		{Name: "echo", Topic: DefaultTopic, Handler: echoHandler},
	})
	if err == nil {
		t.Fatal("SetCommands with a clash and a bad pattern: no error")
	}
	for _, want := range []string{"command b: topic same/topic is already served by command a", "command bad:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "command echo") || strings.Contains(err.Error(), "command a:") {
		t.Errorf("error %q names a command that is served", err)
	}
	if err := h.broker.WaitSubscribed(ctx(t), "same/topic"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(h.exec.Filters(), " "); got != "same/topic rpc/exec-1/echo" {
		t.Fatalf("filters %q, want same/topic (a) and echo's", got)
	}
	if r := h.roundTrip(req("rpc/exec-1/echo", 1), 1); string(r.Payload) != "hello" {
		t.Fatalf("echo after the refusal: %q", r.Payload)
	}
	if r := h.roundTrip(req("same/topic", 2), 2); string(r.Payload) != "hello" {
		t.Fatalf("a after the refusal: %q", r.Payload)
	}
}
