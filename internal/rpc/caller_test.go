package rpc

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"

	"github.com/cmdhost/cmdhost/abi"
)

// withStamps adds the embedded broker's caller stamps to a request.
func withStamps(clientID, userName string) func(*packets.Publish) {
	return func(p *packets.Publish) {
		p.Properties.User = append(p.Properties.User, packets.User{Key: BrokerClientIDProperty, Value: clientID},
			packets.User{Key: BrokerUserProperty, Value: userName})
	}
}

// callerHandler answers with the caller it was given.
func callerHandler(_ context.Context, req *abi.Request) (*abi.Response, error) {
	return &abi.Response{Payload: []byte(req.Caller.User + "|" + req.Caller.ClientID)}, nil
}

// The handler gets the broker's stamps as its caller only when the
// executor trusts them; otherwise (any broker but cmdhost's) they are a
// client's words and the caller is none, whatever __srcId says.
func TestCallerFromTrustedStampsOnly(t *testing.T) {
	for _, c := range []struct {
		trust bool
		want  string
	}{{true, "alice|alice-1"}, {false, "|"}} {
		h := start(t, Config{TrustBrokerClientID: c.trust}, Command{Name: "who", Handler: callerHandler})
		if err := h.broker.WaitSubscribed(ctx(t), "rpc/exec-1/who"); err != nil {
			t.Fatal(err)
		}
		resp := h.roundTrip(req("rpc/exec-1/who", 1, withStamps("alice-1", "alice")), 1)
		if string(resp.Payload) != c.want {
			t.Errorf("trust %v: the handler saw caller %q, want %q", c.trust, resp.Payload, c.want)
		}
	}
}

// Admit refuses a caller before anything runs, a reused reply included:
// the refusal is the reply, with its __propName and __propVal, and a
// duplicate gets the same; a retry hint is __propName RetryAfter.
func TestAdmitRefusesBeforeRunningOrReuse(t *testing.T) {
	var ran atomic.Int32
	cmd := Command{Name: "who", Idempotent: true, ResponseTTL: time.Minute,
		Handler: func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
			ran.Add(1)
			return callerHandler(ctx, req)
		},
		Admit: func(req *abi.Request) *StatusError {
			switch req.Caller.User {
			case "alice":
				return nil
			case "slow":
				return &StatusError{Status: abi.StatusServiceUnavailable, Message: "over quota", RetryAfter: 250 * time.Millisecond}
			}
			return &StatusError{Status: abi.StatusBadRequest, Message: "not allowed", PropName: "Caller", PropValue: req.Caller.User}
		}}
	h := start(t, Config{TrustBrokerClientID: true}, cmd)
	if err := h.broker.WaitSubscribed(ctx(t), "rpc/exec-1/who"); err != nil {
		t.Fatal(err)
	}
	if resp := h.roundTrip(req("rpc/exec-1/who", 1, withStamps("c", "alice")), 1); string(resp.Payload) != "alice|c" {
		t.Fatalf("alice: %q", resp.Payload)
	}
	// Same command, payload and client id: a reuse candidate were it not
	// for the caller.
	for i, n := range []int{2, 3} { // the request, then its duplicate
		resp := h.roundTrip(req("rpc/exec-1/who", 2, withStamps("c", "mallory")), n)
		stat, _ := user(resp, "__stat")
		name, _ := user(resp, "__propName")
		val, _ := user(resp, "__propVal")
		if stat != "400" || name != "Caller" || val != "mallory" || len(resp.Payload) != 0 {
			t.Errorf("mallory #%d: status %s %s=%s payload %q; want 400 Caller=mallory, nothing", i+1, stat, name, val, resp.Payload)
		}
	}
	resp := h.roundTrip(req("rpc/exec-1/who", 3, withStamps("c", "slow")), 4)
	stat, _ := user(resp, "__stat")
	name, _ := user(resp, "__propName")
	val, _ := user(resp, "__propVal")
	if stat != "503" || name != RetryAfterProperty || val != "PT0.25S" {
		t.Errorf("over quota: %s %s=%s; want 503 RetryAfter=PT0.25S", stat, name, val)
	}
	if got := ran.Load(); got != 1 {
		t.Errorf("the handler ran %d times, want once (alice's)", got)
	}
}

// With CallerTopicToken, the token's level of the request topic is the
// caller's user (the broker's ACL ties it to the publisher); stamps a
// client wrote are still ignored, and a command whose pattern lacks the
// token has no caller.
func TestCallerFromTopicToken(t *testing.T) {
	h := start(t, Config{CallerTopicToken: "caller"},
		Command{Name: "who", Topic: "rpc/{executorId}/{commandName}/{caller}", Handler: callerHandler},
		Command{Name: "plain", Handler: callerHandler})
	if err := h.broker.WaitSubscribed(ctx(t), "rpc/exec-1/who/+"); err != nil {
		t.Fatal(err)
	}
	if resp := h.roundTrip(req("rpc/exec-1/who/alice", 1, withStamps("x", "mallory")), 1); string(resp.Payload) != "alice|" {
		t.Errorf("who/alice: caller %q, want alice|", resp.Payload)
	}
	if resp := h.roundTrip(req("rpc/exec-1/plain", 2, withStamps("x", "mallory")), 2); string(resp.Payload) != "|" {
		t.Errorf("plain: caller %q, want none", resp.Payload)
	}
}
