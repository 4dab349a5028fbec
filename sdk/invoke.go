package sdk

import (
	"context"
	"errors"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

// Nested invocation: a handler calls other commands, of this host or of
// another executor on the same broker, and waits for their answers.
//
//	res, err := sdk.CallCommand(ctx, sdk.Call{Command: "echo", Payload: []byte("hi")})
//	if err != nil {
//		return nil, err // no answer: timed out, cycle, unknown command, ...
//	}
//	if err := res.Err(); err != nil {
//		return nil, err // an answer with an error status
//	}
//
// The child's deadline is the earliest of the caller's, the call's Timeout
// and the child command's own execution timeout, so a nested call never
// outlives its caller. The host refuses cycles (A calls B calls A) and
// chains deeper than its depth limit at once, with an error naming the
// chain.
//
// While nested calls run the guest is blocked in the host: a handler
// cannot do other work meanwhile (a guest has one thread), and only ctx's
// deadline is honoured, not a cancel that happens during the call.

// Call is one nested invocation of a command.
type Call struct {
	// Command is the command to call.
	Command string
	// Executor names the executor serving Command; "" is this host, whose
	// plugins are called directly. Another id sends the request through
	// the broker to that executor, as any protocol invoker would.
	Executor    string
	Payload     []byte
	ContentType string
	Format      abi.FormatIndicator
	// Metadata becomes the child's user properties.
	Metadata map[string]string
	// Timeout bounds the call; 0 leaves the caller's deadline and the
	// child's own timeout. A ctx deadline earlier than the handler's own
	// bounds it too.
	Timeout time.Duration
}

// Result is how a nested call ended and, when it answered, its answer: see
// abi.BranchResult. Err tells a success from the rest.
type Result = abi.BranchResult

// Sync is how FanOut waits for its calls: see abi.Sync. The zero value
// waits for all of them, with the host's default sync timeout (measured
// from the first answer), and proceeds with what arrived when it fires.
type Sync = abi.Sync

// ErrNoCalls is FanOut's error for an empty set of calls.
var ErrNoCalls = errors.New("fan-out with no calls")

// CallCommand calls one command and waits for its answer. err is nil when
// the child answered, whatever its status: res.Err() tells a success from
// an error status. Otherwise err says why there is no answer (timed out,
// cycle, depth limit, unknown command, nested invocation unavailable...)
// and res, when not nil, holds the details.
func CallCommand(ctx context.Context, c Call) (*Result, error) {
	inv := abi.Invocation{Branches: []abi.Branch{c.branch(c.Command)}}
	if err := boundByContext(ctx, inv.Branches); err != nil {
		return nil, err
	}
	out, err := hostInvoke(&inv)
	if err != nil {
		return nil, err
	}
	if err := out.Err(); err != nil {
		return nil, err
	}
	if len(out.Branches) != 1 {
		return nil, errors.New("the host returned no result for the call")
	}
	res := &out.Branches[0]
	if res.Outcome != abi.OutcomeDone {
		return res, res.Err()
	}
	return res, nil
}

// FanOut calls several commands at once and waits for them as s says:
// all, any (the first answer) or m of n, within a sync timeout measured
// from the first answer. The results are keyed like calls and hold every
// call: those that did not answer say why (Outcome timed_out, not_arrived,
// error). Calls still running when the wait ends are cancelled. err is
// non-nil when the fan-out failed as a whole: invalid, unavailable, or
// its sync timeout fired under abi.SyncFail (results then still hold what
// had arrived).
func FanOut(ctx context.Context, s Sync, calls map[string]Call) (map[string]*Result, error) {
	if len(calls) == 0 {
		return nil, ErrNoCalls
	}
	inv := abi.Invocation{Branches: make([]abi.Branch, 0, len(calls)), Sync: s}
	for name, c := range calls {
		inv.Branches = append(inv.Branches, c.branch(name))
	}
	if err := boundByContext(ctx, inv.Branches); err != nil {
		return nil, err
	}
	out, err := hostInvoke(&inv)
	if err != nil {
		return nil, err
	}
	results := make(map[string]*Result, len(out.Branches))
	for i := range out.Branches {
		results[out.Branches[i].Name] = &out.Branches[i]
	}
	return results, out.Err()
}

func (c *Call) branch(name string) abi.Branch {
	return abi.Branch{Name: name, Command: c.Command, ExecutorID: c.Executor, Payload: c.Payload,
		ContentType: c.ContentType, Format: c.Format, Metadata: c.Metadata, Timeout: c.Timeout}
}

// boundByContext folds a ctx deadline earlier than the handler's own into
// the branches' timeouts (the host already knows the handler's own), and
// refuses a ctx that is already done.
func boundByContext(ctx context.Context, branches []abi.Branch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, root := ctx.(*callContext); root {
		return nil
	}
	d, ok := ctx.Deadline()
	if !ok {
		return nil
	}
	left := time.Until(d)
	if left <= 0 {
		return context.DeadlineExceeded
	}
	for i := range branches {
		if t := branches[i].Timeout; t == 0 || left < t {
			branches[i].Timeout = left
		}
	}
	return nil
}
