package rpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
)

// A clean stop. Acks go out in receipt order, and a request the broker
// saw unacked when the connection closed is redelivered, to this session
// when the host comes back (or to a replica): if it had been answered, the
// restarted host, whose dedup store is new, would run it again. So Stop
// leaves unacked only what it has not run, and every reply it owes goes
// out, and its ack, before the disconnect:
//
//  1. New requests are no longer taken (not acked: the restarted host
//     runs them, once). A cancel is still handled; a duplicate of a
//     request this host knows is answered from the dedup store, after its
//     original's reply when that is still running (receiveWhileStopping).
//  2. The requests in flight finish, until ctx ends. Then the calls still
//     queued are answered 503 (not run: sending them again is safe), and
//     those still running are cut and answered 500 "outcome unknown"
//     (stoppedReply): for a non-idempotent command that ran partly, no
//     answer is honest but that one, and running it again on the restarted
//     host would be worse.
//  3. Every ack made is sent (session.FlushAcks); then the client
//     disconnects.
//
// One order is left that this host alone cannot make safe: a duplicate
// that arrives, during the stop, after a new request is answered and
// acked, but its ack waits behind the new request's, which is never made,
// and the restarted host runs it again. A dedup store shared across
// restarts closes that gap.

// stopGrace bounds the waits after ctx ended: the cut calls' replies and
// the acks still to send.
const stopGrace = 5 * time.Second

// errStopped is the cause of a call context cut by Stop.
var errStopped = errors.New("the host stopped")

var (
	notRunReply  = statusReply(abi.StatusServiceUnavailable, "the host stopped before running the request; send it again", "", "")
	stoppedReply = statusReply(abi.StatusInternalError, "outcome unknown: the host stopped while the call ran (its drain time ended)", "", "")
)

// stoppedBy reports whether Stop cut ctx (a call's context or a
// descendant of it).
func stoppedBy(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errStopped)
}

// Stop stops the executor cleanly (see above): it waits until ctx is done
// for the requests in flight, then disconnects. A second call returns
// nil at once.
func (e *Executor) Stop(ctx context.Context) error {
	var err error
	e.stopOnce.Do(func() {
		e.admit.Lock()
		e.stopping = true
		e.admit.Unlock()
		err = e.drain(ctx)
		e.admit.Lock()
		e.closing = true
		e.admit.Unlock()
		gctx, cancel := context.WithTimeout(context.Background(), stopGrace)
		defer cancel()
		if werr := wait(gctx, &e.lateDups); werr != nil {
			err = errors.Join(err, fmt.Errorf("duplicates not answered at stop: %w", werr))
		}
		close(e.stopped)
		e.workers.Close()
		if ferr := e.sess.FlushAcks(gctx); ferr != nil {
			err = errors.Join(err, fmt.Errorf("at stop: %w", ferr))
		}
		err = errors.Join(err, e.sess.Disconnect(gctx))
		if e.reuse != nil {
			e.reuse.Close() // its goroutines; later lookups miss
		}
		e.dedup.Close()
	})
	return err
}

// drain waits for the requests in flight. When ctx ends first, it cuts
// the calls still queued or running and waits, at most stopGrace, for
// their replies to go out.
func (e *Executor) drain(ctx context.Context) error {
	if wait(ctx, &e.inflight) == nil {
		return nil
	}
	n := e.calls.stopAll()
	gctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	if err := wait(gctx, &e.inflight); err != nil {
		return fmt.Errorf("requests still in flight at stop: %w", ctx.Err())
	}
	e.log.Warn("calls queued or running cut at stop: the drain time ended", "calls", n)
	return fmt.Errorf("%d calls queued or running cut at stop: %w", n, ctx.Err())
}

// enter adds one to wg unless Stop has set shut (stopping or closing),
// and reports whether it did. Stop sets shut under the same lock before
// it waits for wg: no Add can race with that Wait.
func (e *Executor) enter(shut *bool, wg *sync.WaitGroup) bool {
	e.admit.Lock()
	defer e.admit.Unlock()
	if *shut {
		return false
	}
	wg.Add(1)
	return true
}

// wait waits for wg until ctx ends.
func wait(ctx context.Context, wg interface{ Wait() }) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// receiveWhileStopping takes a request that arrives while Stop runs: a
// cancel is handled; a duplicate of a request this host holds in its
// dedup store is answered (and acked) once its original's reply is
// known, until Stop stops waiting for duplicates; anything else is left
// unacked, for the restarted host (or a replica) to run.
func (e *Executor) receiveWhileStopping(in *incoming) {
	defer e.takenWhileStopping.Add(1)
	if r := in.read(e.cfg.ExecutorID); r != nil {
		return
	}
	if in.cancel {
		e.cancelCall(in)
		e.ack(in)
		return
	}
	entry := e.dedup.Lookup(cache.Key{Correlation: string(in.correlation), ResponseTopic: in.responseTopic})
	if entry == nil {
		return
	}
	if !e.enter(&e.closing, &e.lateDups) {
		return
	}
	go func() {
		defer e.lateDups.Done()
		select {
		case <-entry.Done():
			e.answer(in, entry.Value())
		case <-e.stopped:
		}
	}()
}
