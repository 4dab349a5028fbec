//go:build !wasip1

package sdk

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

// stubCalls sets the stand-in's answer for the duration of a test.
func stubCalls(t *testing.T, f TestCallFunc) {
	t.Helper()
	SetTestCalls(f)
	t.Cleanup(func() { SetTestCalls(nil) })
}

func TestCallCommandStub(t *testing.T) {
	var got []Call
	stubCalls(t, func(_ context.Context, c Call) (*Result, error) {
		got = append(got, c)
		switch c.Command {
		case "upper":
			return &Result{Payload: []byte(strings.ToUpper(string(c.Payload)))}, nil
		case "broken":
			return &Result{Status: abi.StatusInternalError, AppError: true, Message: "db down"}, nil
		}
		return nil, errors.New("no such command")
	})
	// A handler that calls another command, tested natively.
	register(t, "shout", func(ctx context.Context, req *Request) (*Response, error) {
		res, err := CallCommand(ctx, Call{Command: "upper", Payload: req.Payload, Executor: "other"})
		if err != nil {
			return nil, err
		}
		if err := res.Err(); err != nil {
			return nil, err
		}
		return &Response{Payload: append(res.Payload, '!')}, nil
	})
	resp, err := Invoke(&Request{Command: "shout", Payload: []byte("hi"), Deadline: time.Now().Add(time.Minute)})
	if err != nil || string(resp.Payload) != "HI!" {
		t.Fatalf("%+v, %v", resp, err)
	}
	// The handler's own deadline is the host's business: no timeout added.
	if len(got) != 1 || got[0].Executor != "other" || got[0].Timeout != 0 {
		t.Fatalf("calls %+v", got)
	}

	res, err := CallCommand(context.Background(), Call{Command: "broken"})
	if err != nil || res.OK() || !strings.Contains(res.Err().Error(), "status 500 (application error): db down") {
		t.Fatalf("an error status is an answer: %+v, %v", res, err)
	}
	res, err = CallCommand(context.Background(), Call{Command: "nope"})
	var be *abi.BranchError
	if !errors.As(err, &be) || be.Outcome != abi.OutcomeError || res == nil || !strings.Contains(err.Error(), "no such command") {
		t.Fatalf("no answer: %+v, %v", res, err)
	}
}

func TestCallCommandUnavailable(t *testing.T) {
	SetTestCalls(nil)
	_, err := CallCommand(context.Background(), Call{Command: "echo"})
	var ie *abi.InvocationError
	if !errors.As(err, &ie) || ie.Reason != abi.ReasonUnavailable || !strings.Contains(err.Error(), "SetTestCalls") {
		t.Fatalf("%v", err)
	}
	_, err = CallCommand(context.Background(), Call{Command: "bad/name"})
	if !errors.As(err, &ie) || ie.Reason != abi.ReasonUnavailable {
		t.Fatalf("%v", err)
	}
}

// A ctx deadline earlier than the handler's own bounds the calls; a done
// ctx calls nothing.
func TestCallCommandContext(t *testing.T) {
	var timeouts []time.Duration
	stubCalls(t, func(_ context.Context, c Call) (*Result, error) {
		timeouts = append(timeouts, c.Timeout)
		return &Result{}, nil
	})
	// The deadline leaves minutes: the test's own run time, even on a
	// loaded machine, takes nothing that shows.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := CallCommand(ctx, Call{Command: "a", Timeout: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if _, err := CallCommand(ctx, Call{Command: "a", Timeout: 10 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if len(timeouts) != 2 || timeouts[0] > 10*time.Minute || timeouts[0] < 9*time.Minute ||
		timeouts[1] != 10*time.Millisecond {
		t.Fatalf("timeouts %v", timeouts)
	}
	cancel()
	if _, err := CallCommand(ctx, Call{Command: "a"}); !errors.Is(err, context.Canceled) || len(timeouts) != 2 {
		t.Fatalf("%v after %d calls", err, len(timeouts))
	}
}

func TestFanOutStub(t *testing.T) {
	stubCalls(t, func(_ context.Context, c Call) (*Result, error) {
		if c.Command == "fail" {
			return nil, errors.New("boom")
		}
		return &Result{Payload: c.Payload}, nil
	})
	results, err := FanOut(context.Background(), Sync{Strategy: abi.SyncAny}, map[string]Call{
		"x": {Command: "echo", Payload: []byte("1")},
		"y": {Command: "echo", Payload: []byte("2")},
		"z": {Command: "fail"},
	})
	if err != nil || len(results) != 3 {
		t.Fatalf("%v, %v", results, err)
	}
	if string(results["x"].Payload) != "1" || string(results["y"].Payload) != "2" || results["x"].Name != "x" {
		t.Fatalf("keyed by branch: %+v %+v", results["x"], results["y"])
	}
	if results["z"].Outcome != abi.OutcomeError || !strings.Contains(results["z"].Err().Error(), "boom") {
		t.Fatalf("z: %+v", results["z"])
	}
	if _, err := FanOut(context.Background(), Sync{}, nil); !errors.Is(err, ErrNoCalls) {
		t.Fatal(err)
	}
	_, err = FanOut(context.Background(), Sync{Strategy: abi.SyncMOfN, M: 3}, map[string]Call{"a": {Command: "echo"}})
	var ie *abi.InvocationError
	if !errors.As(err, &ie) || ie.Reason != abi.ReasonInvalid {
		t.Fatalf("m > n: %v", err)
	}
}
