package host

import (
	"io"

	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/gate"
)

// newGate makes the gate of the plugins' commands (internal/gate: the
// operator files' allow and quota): its quotas counted in memory, or with
// Config.Store in that Redis, shared by the replicas naming it. It
// returns what closes the Redis client (nil without one).
func newGate(cfg Config, s *Server) (*gate.Gate, io.Closer, error) {
	gc := gate.Config{Logger: s.log}
	var closer io.Closer
	if cfg.Store != "" {
		rdb, err := redisConfig(cfg).QuotaClient()
		if err != nil {
			return nil, nil, err
		}
		gc.Quotas, closer = cache.NewRedisQuota(rdb), rdb
	}
	return gate.New(gc), closer, nil
}
