package host

import (
	"github.com/cmdhost/cmdhost/internal/adminops"
	"github.com/cmdhost/cmdhost/internal/metrics"
)

// The handlers' state store as the parts that only read or report it
// take it: the admin ops (the operator's reads and writes), the metrics
// and /readyz. Each is nil, or says nothing, without a store (a nil
// *state.Disk in an interface would not be nil), and with the Azure IoT
// Operations broker's (Config.Store.StateAIO: the state folder holds only the
// outcomes, and the broker's store has no list of its keys nor their
// sizes).

// adminState is the state store of the admin ops' state ops.
func (s *Server) adminState() adminops.StateStore {
	if s.state == nil || s.aio != nil {
		return nil
	}
	return s.state
}

// metricsState is the state store the metrics read at scrape time.
func (s *Server) metricsState() metrics.StateSource {
	if s.state == nil || s.aio != nil {
		return nil
	}
	return s.state
}

// stateReady is the state store's part of readiness: a store that cannot
// write (closed, or its last write failed and a write of its own fails
// too) leaves the host not ready, saying why; none is no reason.
func (s *Server) stateReady() error {
	if s.state == nil {
		return nil
	}
	if err := s.state.Health(); err != nil {
		return err // its errors say "state store unavailable" or "the state folder DIR"
	}
	if s.aio != nil {
		return s.aio.Health() // "the Azure IoT Operations state store does not answer"
	}
	return nil
}
