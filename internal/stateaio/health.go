package stateaio

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cmdhost/cmdhost/internal/state"
)

// health is what the store knows of the broker: the error of its last
// request that got no reply, until one does.
type health struct {
	mu     sync.Mutex
	err    error     // nil: the last request was answered
	probed time.Time // when Health last asked the broker itself
}

func (h *health) failed(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.err = err
}

func (h *health) answered() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.err = nil
}

// probeEvery bounds Health's requests of its own to one a second.
const probeEvery = time.Second

// probeKey is the key Health reads: any reply, the key absent, there or
// refused, says the broker's state store answers.
var probeKey = []byte("cmdhost/health")

// Health reports whether the broker's state store answers: nil until a
// request gets no reply (or before Start), an error wrapping
// state.ErrUnavailable from then on. After such a failure Health reads
// a key of its own, at most once a second, so that a store that answers
// again is healthy again without waiting for a call.
func (s *Store) Health() error {
	s.mu.Lock()
	started, closed := s.inv != nil, s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return fmt.Errorf("%w: the Azure IoT Operations state store's client is closed", state.ErrUnavailable)
	case !started:
		return fmt.Errorf("%w: the Azure IoT Operations state store's client is not connected yet", state.ErrUnavailable)
	}
	h := &s.health
	h.mu.Lock()
	err, due := h.err, time.Since(h.probed) >= probeEvery
	if err != nil && due {
		h.probed = time.Now()
	}
	h.mu.Unlock()
	if err == nil {
		return nil
	}
	if due {
		ctx, cancel := context.WithTimeout(context.Background(), min(s.cfg.Timeout, 2*time.Second))
		defer cancel()
		if _, _, perr := s.do(ctx, false, "", []byte("GET"), probeKey); perr == nil {
			return nil
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		return nil
	}
	return fmt.Errorf("%w: the Azure IoT Operations state store does not answer: %v", state.ErrUnavailable, h.err)
}
