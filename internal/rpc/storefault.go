package rpc

import (
	"errors"
	"fmt"
	"time"

	"github.com/cmdhost/cmdhost/cache"
)

// storeFault is a refusal of the shared dedup store: while requests to
// non-idempotent commands are answered 503 because the store cannot record
// them, the host is not serving them, and /readyz says so (Ready) rather
// than "ready". It is cleared by the next claim that succeeds; with no
// requests to tell, it is reported for storeFaultWindow only, since the
// store may be back by then.
type storeFault struct {
	at  time.Time
	err error
}

// storeFaultWindow is how long a refusal is reported with no claim since.
const storeFaultWindow = 30 * time.Second

// noteClaim keeps a claim's refusal by the shared store, or clears the
// last one when the claim succeeded. The load before the store keeps the
// hot path (a claim that succeeds, with no fault) to one atomic read.
func (e *Executor) noteClaim(err error) {
	switch {
	case errors.Is(err, cache.ErrStoreUnavailable):
		e.storeFault.Store(&storeFault{at: e.cfg.Clock.Now(), err: err})
	case err == nil && e.storeFault.Load() != nil:
		e.storeFault.Store(nil)
	}
}

// storeFaultErr is Ready's report of the shared store's last refusal, or
// nil.
func (e *Executor) storeFaultErr() error {
	f := e.storeFault.Load()
	if f == nil {
		return nil
	}
	ago := e.cfg.Clock.Now().Sub(f.at)
	if ago > storeFaultWindow {
		return nil
	}
	return fmt.Errorf("%s (%s ago, no request recorded since): requests to non-idempotent commands are answered 503", storeTrouble(f.err), ago.Round(time.Second))
}

// storeReason is the Observer's reason for a claim the store refused.
func storeReason(err error) string {
	if errors.Is(err, cache.ErrStoreFull) {
		return StoreFull
	}
	return StoreUnreachable
}
