package rpc

import "time"

// Observation hook (metrics). The executor reports each request's outcome
// to Config.Observer, and its timeouts as events to Config.Events;
// internal/metrics implements both. This package knows nothing of metrics.

// Observer is told what the executor does with requests. Its methods are
// called from many goroutines at once and must not block.
type Observer interface {
	// Request is called once per request received for a served command
	// (not for duplicates answered from the dedup store, nor for
	// requests left unacked while stopping), when its reply is known and
	// before it is published. status is the reply's protocol status;
	// answered is false, and status 0, when no reply is owed (no
	// response topic, expired). d is the time since receipt, by
	// Config.Clock.
	Request(command string, status int, answered bool, d time.Duration)
	// ReplyDropped is called when a reply of command cannot be sent as
	// it is, because the broker would refuse it (reason DropTooLarge or
	// DropInvalid): a short 500 goes instead, or nothing when not even
	// that can be sent. The request is acked all the same.
	ReplyDropped(command, reason string)
	// StoreUnavailable is called when the shared dedup store could not
	// record a request of command: a non-idempotent one was answered 503,
	// an idempotent one ran unrecorded. reason is StoreUnreachable or
	// StoreFull.
	StoreUnavailable(command, reason string)
}

// The reasons of Observer.StoreUnavailable.
const (
	StoreUnreachable = "unreachable" // Redis did not answer, or answered an error
	StoreFull        = "full"        // Redis reached its maxmemory (cache.ErrStoreFull)
)

// storeDown reports a request the shared dedup store could not record.
func (e *Executor) storeDown(in *incoming, err error) {
	if o := e.cfg.Observer; o != nil {
		o.StoreUnavailable(in.route.cmd.Name, storeReason(err))
	}
}

// finishFirst is finish for a request that is not a duplicate: it is
// reported to the observer, then answered.
func (e *Executor) finishFirst(in *incoming, r *reply) {
	if o := e.cfg.Observer; o != nil {
		status, answered := int(r.status), !r.none
		if !answered {
			status = 0
		}
		o.Request(in.route.cmd.Name, status, answered, e.cfg.Clock.Now().Sub(in.received))
	}
	e.finish(in, r)
}

// DedupLen returns the number of entries in the dedup store, expired ones
// not yet swept included.
func (e *Executor) DedupLen() int { return e.dedup.Len() }
