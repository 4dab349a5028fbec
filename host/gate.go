package host

import (
	"io"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/gate"
	"github.com/cmdhost/cmdhost/internal/rpc"
)

// newGate makes the gate of the plugins' commands (internal/gate: the
// operator files' allow and quota): its quotas counted in memory, or with
// Config.Store.URL in that Redis, shared by the replicas naming it. It
// returns what closes the Redis client (nil without one).
func newGate(cfg Config, s *Server) (*gate.Gate, io.Closer, error) {
	gc := gate.Config{Logger: s.log}
	var closer io.Closer
	if cfg.Store.URL != "" {
		rdb, err := redisConfig(cfg).QuotaClient()
		if err != nil {
			return nil, nil, err
		}
		gc.Quotas, closer = cache.NewRedisQuota(rdb), rdb
	}
	return gate.New(gc), closer, nil
}

// adminByIdentity lets a verified user whom the embedded broker's ACL
// grants `admin` use the admin ops that change state without the token
// (adminops.Config.Admin); nil without the embedded broker (a replica on
// another's knows nothing of its ACL): the token alone.
func (s *Server) adminByIdentity() func(abi.Caller) bool {
	if s.embedded == nil {
		return nil
	}
	return func(c abi.Caller) bool { return s.embedded.GrantsAdmin(c.User) }
}

// gateLocal puts a local command behind its allow list and quota for a
// plugin's nested call to it (nested.Config.Gate), which carries the
// caller of the request the calling plugin handles.
func (s *Server) gateLocal(command string, h rpc.Handler) rpc.Handler {
	c, ok := s.plugins.Command(command)
	if !ok {
		return h // not served: the handler answers so
	}
	return s.gate.Wrap(c, h)
}
