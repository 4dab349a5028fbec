package nested_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/nested"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// stubRemote is a RemoteInvoker that records its calls and answers with
// answer.
type stubRemote struct {
	mu     sync.Mutex
	calls  []rpc.Call
	answer func(ctx context.Context, c rpc.Call) (*rpc.Result, error)
}

func (s *stubRemote) Invoke(ctx context.Context, c rpc.Call) (*rpc.Result, error) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
	return s.answer(ctx, c)
}

func newStubNested(t *testing.T, remote *stubRemote) *nested.Calls {
	t.Helper()
	n, err := nested.New(nested.Config{ExecutorID: "h1", Resolver: commandMap{}, Remote: remote})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Remote branches: topic, chain (escaped), metadata and the message
// expiry each gets; the remote's answers mapped to outcomes.
func TestNestedRemoteCalls(t *testing.T) {
	remote := &stubRemote{answer: func(_ context.Context, c rpc.Call) (*rpc.Result, error) {
		switch string(c.Payload) {
		case "408":
			return &rpc.Result{Status: abi.StatusRequestTimeout, Message: "execution timeout"}, nil
		case "err":
			return nil, errors.New("publishing failed")
		case "silent":
			return nil, rpc.ErrNoResponse
		}
		return &rpc.Result{Status: abi.StatusOK, Payload: c.Payload, ContentType: c.ContentType, Metadata: map[string]string{"m": "1"}}, nil
	}}
	n := newStubNested(t, remote)
	caller := wasm.Caller{Plugin: "p", Request: &abi.Request{Command: "a>b%", Metadata: map[string]string{abi.ChainKey: "h0/top"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	br := func(name, payload string, timeout time.Duration) abi.Branch {
		return abi.Branch{Name: name, Command: "cmd", ExecutorID: "h2", Payload: []byte(payload), ContentType: "text/plain",
			Metadata: map[string]string{"k": "v", abi.ChainKey: "forged"}, Timeout: timeout}
	}
	res := n.Nest(ctx, caller, &abi.Invocation{Branches: []abi.Branch{
		br("ok", "hi", 1500*time.Millisecond), br("408", "408", 0), br("err", "err", 0), br("silent", "silent", 0),
	}})
	if res.Failure != abi.ReasonNone || len(res.Branches) != 4 {
		t.Fatalf("%+v", res)
	}
	ok, to, fault, silent := res.Branch("ok"), res.Branch("408"), res.Branch("err"), res.Branch("silent")
	if !ok.OK() || string(ok.Payload) != "hi" || ok.ContentType != "text/plain" || ok.Metadata["m"] != "1" || ok.Budget != 1500*time.Millisecond {
		t.Fatalf("ok: %+v", ok)
	}
	if to.Outcome != abi.OutcomeTimedOut || to.Status != abi.StatusRequestTimeout || to.Message != "execution timeout" {
		t.Fatalf("408: %+v", to)
	}
	if fault.Outcome != abi.OutcomeError || fault.Reason != abi.ReasonHostFault || !strings.Contains(fault.Message, "publishing failed") {
		t.Fatalf("err: %+v", fault)
	}
	if silent.Outcome != abi.OutcomeTimedOut || !strings.Contains(silent.Message, "no response from executor h2") {
		t.Fatalf("silent: %+v", silent)
	}
	for _, c := range remote.calls {
		if c.Topic != "rpc/h2/cmd" || c.Metadata[abi.ChainKey] != "h0/top>h1/a%3Eb%25" || c.Metadata["k"] != "v" {
			t.Fatalf("call %+v", c)
		}
		want := 10 * time.Second
		if string(c.Payload) == "hi" {
			want = 1500 * time.Millisecond
		}
		if c.Timeout > want || c.Timeout < want-time.Second {
			t.Fatalf("%s: expiry %v, want about %v", c.Payload, c.Timeout, want)
		}
	}

	// Nothing bounds it: the RemoteTimeout (1 min) is its expiry.
	remote.calls = nil
	n.Nest(context.Background(), caller, &abi.Invocation{Branches: []abi.Branch{br("free", "x", 0)}})
	if len(remote.calls) != 1 || remote.calls[0].Timeout > time.Minute || remote.calls[0].Timeout < 59*time.Second {
		t.Fatalf("%+v", remote.calls)
	}
}

// Invalid invocations and unknown commands fail without running anything;
// a cycle is caught across the escaping of '>' in names.
func TestNestedRefusesWithoutRunning(t *testing.T) {
	remote := &stubRemote{answer: func(context.Context, rpc.Call) (*rpc.Result, error) {
		return &rpc.Result{Status: abi.StatusOK}, nil
	}}
	n := newStubNested(t, remote)
	caller := wasm.Caller{Request: &abi.Request{Command: "x>y", Metadata: map[string]string{abi.ChainKey: "h2/p"}}}
	res := n.Nest(context.Background(), caller, &abi.Invocation{})
	if res.Failure != abi.ReasonInvalid {
		t.Fatalf("%+v", res)
	}
	res = n.Nest(context.Background(), caller, &abi.Invocation{Branches: []abi.Branch{
		{Name: "local", Command: "nope"},
		{Name: "self", Command: "x>y"},
		{Name: "back", Command: "p", ExecutorID: "h2"},
		{Name: "y", Command: "y"},
	}})
	for name, want := range map[string]abi.Reason{"local": abi.ReasonUnknownCommand, "self": abi.ReasonCycle,
		"back": abi.ReasonCycle, "y": abi.ReasonUnknownCommand} {
		if r := res.Branch(name); r.Outcome != abi.OutcomeError || r.Reason != want {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if m := res.Branch("back").Message; m != "nested call cycle: h2/p → h1/x%3Ey → h2/p" {
		t.Errorf("back: %q", m)
	}
	if len(remote.calls) != 0 {
		t.Fatalf("ran %+v", remote.calls)
	}
}

func TestNewNestedChecks(t *testing.T) {
	for _, c := range []struct {
		cfg  nested.Config
		want string
	}{
		{nested.Config{Resolver: commandMap{}}, "executor id"},
		{nested.Config{ExecutorID: "h"}, "resolver"},
		{nested.Config{ExecutorID: "h", Resolver: commandMap{}, RemoteTopic: "rpc/{other}/{commandName}"}, "tokens other than"},
	} {
		if _, err := nested.New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v", c.cfg, err)
		}
	}
}
