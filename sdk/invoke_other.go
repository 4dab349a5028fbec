//go:build !wasip1

package sdk

import (
	"context"
	"sort"
	"sync"

	"github.com/cmdhost/cmdhost/abi"
)

// The stand-in for nested invocation in native builds: handler tests stub
// the commands their handler calls with SetTestCalls.

// TestCallFunc answers one nested call in native builds. A non-nil error
// becomes a branch that failed without an answer (abi.OutcomeError) with
// the error's message; otherwise the Result is the answer (its Name is
// set by the stand-in).
type TestCallFunc func(ctx context.Context, c Call) (*Result, error)

var testCalls struct {
	mu sync.Mutex
	f  TestCallFunc
}

// SetTestCalls sets the function that answers CallCommand and FanOut in
// native builds; nil (the default) makes them fail as on a host without
// nested invocation. The stand-in runs a fan-out's calls one by one, in
// the order of their names, and applies no sync rule: every call arrives.
func SetTestCalls(f TestCallFunc) {
	testCalls.mu.Lock()
	defer testCalls.mu.Unlock()
	testCalls.f = f
}

func hostInvoke(inv *abi.Invocation) (*abi.InvocationResult, error) {
	testCalls.mu.Lock()
	f := testCalls.f
	testCalls.mu.Unlock()
	if f == nil {
		return &abi.InvocationResult{Failure: abi.ReasonUnavailable,
			Message: "nested invocation is not available (native build: see sdk.SetTestCalls)"}, nil
	}
	if err := inv.Validate(); err != nil {
		return &abi.InvocationResult{Failure: abi.ReasonInvalid, Message: err.Error()}, nil
	}
	branches := append([]abi.Branch(nil), inv.Branches...)
	sort.Slice(branches, func(i, j int) bool { return branches[i].Name < branches[j].Name })
	out := &abi.InvocationResult{}
	for _, b := range branches {
		ctx := context.Background()
		if b.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, b.Timeout)
			defer cancel()
		}
		res, err := f(ctx, Call{Command: b.Command, Executor: b.ExecutorID, Payload: b.Payload,
			ContentType: b.ContentType, Format: b.Format, Metadata: b.Metadata, Timeout: b.Timeout})
		switch {
		case err != nil:
			res = &Result{Outcome: abi.OutcomeError, Reason: abi.ReasonHostFault, Message: err.Error()}
		case res == nil:
			res = &Result{Status: abi.StatusNoContent}
		}
		r := *res
		r.Name = b.Name
		if r.Outcome == abi.OutcomeDone && r.Status == 0 {
			r.Status = abi.StatusOK
		}
		out.Branches = append(out.Branches, r)
	}
	return out, nil
}
