package rpc

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
)

// The ask extensions (PROTOCOL.md "Extensions").
// Both are opt-in through user properties, so an invoker that sends neither
// sees plain protocol v1.0.
//
//   - Ack: a request with cmdhost-ack: 1 gets a 202 on its response topic
//     when it is accepted for execution, and again when a duplicate arrives
//     while it is still in progress; the invoker retries a request until it
//     is acked, and fails fast when nothing acks.
//   - Cancel: a message on the request topic with the request's correlation
//     data and response topic and cmdhost-cancel: 1. A request still queued
//     or running becomes Cancelled: its context (the module's, for a
//     plugin) is closed and the reply is 499.
//
// State machine of a request executed here: InProgress from its
// first accepted receipt, then Replied or Cancelled, whichever comes first
// (a timeout's 408, or its silence at expiry, counts as the reply). The
// transition is one compare-and-swap on call.state, so reply, cancel and
// timeout race safely and the first terminal state wins; a late result
// after Cancelled is suppressed. The terminal reply is the request's dedup
// entry, so a duplicate after a terminal state gets that state's reply
// (499 after Cancelled), for as long as the entry is kept (cache.DedupStore:
// terminal entries are bounded by their keep-until and, when the store is
// full, by count; in-progress entries are never evicted).

// Extension user properties.
const (
	propAck    = "cmdhost-ack"
	propCancel = "cmdhost-cancel"
)

// call states.
const (
	inProgress int32 = iota
	replied
	cancelled
)

// errCancelled is the cause of a call context cancelled by the invoker.
var errCancelled = errors.New("cancelled by the invoker")

var (
	acceptedReply  = statusReply(abi.StatusAccepted, "accepted", "", "")
	cancelledReply = statusReply(abi.StatusCancelled, "cancelled by the invoker", "", "")
)

// running is a request in progress: accepted for execution, not yet terminal.
type running struct {
	ctx    context.Context // cancelled with errCancelled by a cancel
	cancel context.CancelCauseFunc
	state  atomic.Int32
	// cancelledAt is when the cancel was received (real clock), to log
	// how long stopping the call took.
	cancelledAt atomic.Pointer[time.Time]
}

// runningSet tracks the requests in progress by dedup key, for cancels.
type runningSet struct {
	mu      sync.Mutex
	m       map[cache.Key]*running
	stopped bool // stopAll was called: later requests begin cut
}

// begin registers a request accepted for execution. After stopAll (a
// request admitted before the stop whose shared-store claim came back
// after the drain ended) its context is cut already: it does not run.
func (cs *runningSet) begin(key cache.Key) *running {
	c := &running{}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.stopped {
		c.cancel(errStopped)
	}
	if cs.m == nil {
		cs.m = make(map[cache.Key]*running)
	}
	cs.m[key] = c
	return c
}

// end forgets the request of key once it is terminal.
func (cs *runningSet) end(key cache.Key, c *running) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.m[key] == c {
		delete(cs.m, key)
	}
	c.cancel(nil) // release the context's resources
}

// stopAll cuts every request in progress (Stop, when its drain time
// ended) and returns how many there were.
func (cs *runningSet) stopAll() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.stopped = true
	for _, c := range cs.m {
		c.cancel(errStopped)
	}
	return len(cs.m)
}

func (cs *runningSet) get(key cache.Key) *running {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.m[key]
}

// settle makes the call Replied with r, unless it was Cancelled first:
// then the reply is 499 and r, a late result, is suppressed.
func (c *running) settle(r *reply) (*reply, bool) {
	if c.state.CompareAndSwap(inProgress, replied) {
		return r, true
	}
	return cancelledReply, false
}

// rerun makes a Replied call InProgress again, to run it once more (its
// commit was refused, commit.go): a cancel may win again. Only the
// call's own worker, which settled it, calls it.
func (c *running) rerun() bool { return c.state.CompareAndSwap(replied, inProgress) }

// cancelledBy reports whether a cancel ended ctx (a call's context or a
// descendant of it).
func cancelledBy(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errCancelled)
}

// cancelCall handles a cancel message: a request in progress becomes
// Cancelled and its context is closed; a cancel for a request already
// terminal (first terminal state wins) or unknown here is ignored. The
// cancel message itself gets no reply: the request's 499 is the answer.
func (e *Executor) cancelCall(in *incoming) {
	key := cache.Key{Correlation: string(in.correlation), ResponseTopic: in.responseTopic}
	c := e.calls.get(key)
	if c == nil || !c.state.CompareAndSwap(inProgress, cancelled) {
		e.log.Debug("cancel for a request not in progress here: ignored", "command", in.route.cmd.Name,
			"correlation", CorrelationString(in.correlation))
		return
	}
	now := time.Now()
	c.cancelledAt.Store(&now)
	e.log.Info("cancel received", "command", in.route.cmd.Name, "correlation", CorrelationString(in.correlation))
	c.cancel(errCancelled)
}

// logCancelled logs a call that a cancel ended, with how long it took from
// the cancel's receipt.
func (e *Executor) logCancelled(in *incoming, c *running) {
	var after time.Duration
	if at := c.cancelledAt.Load(); at != nil {
		after = time.Since(*at)
	}
	e.log.Info("call cancelled", "command", in.route.cmd.Name, "correlation", CorrelationString(in.correlation),
		"after", after)
}

// accept sends the 202 of an ask request unless it went already: as
// it is accepted for execution (start) or, with a shared store, as it
// arrives, before its claim (receive).
func (e *Executor) accept(in *incoming) {
	if in.askAck && in.accepted == nil {
		in.accepted = make(chan struct{})
		go e.sendAccepted(in, in.accepted)
	}
}

// sendAccepted publishes the 202 of an ask request; done is closed once it
// is sent, so that the final reply never overtakes it.
func (e *Executor) sendAccepted(in *incoming, done chan<- struct{}) {
	defer close(done)
	e.publish(in, acceptedReply)
}

// CorrelationString formats 16 bytes of correlation data as a UUID (as
// events and logs show it), other lengths as hex.
func CorrelationString(b []byte) string {
	const hexDigits = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if len(b) == correlationLength && (i == 4 || i == 6 || i == 8 || i == 10) {
			out = append(out, '-')
		}
		out = append(out, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return string(out)
}
