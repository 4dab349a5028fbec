package host

import (
	"context"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/redact"
	"github.com/cmdhost/cmdhost/internal/statestore"
)

// newStateProtocol serves the Azure IoT Operations state store protocol
// over the state store on the embedded broker (Config.Embedded.StateProtocolOff),
// as a command of the executor: the broker vouches for each request's
// client and user, grants keys by its ACL's `state` lines, subscribes a
// client that registers for notifications to its notify topics (the Go
// and .NET SDKs' clients subscribe to nothing that matches), and says when
// a client goes. nil when it is not served: no state store, turned off,
// or an external broker (whose clients the host can neither vouch for
// nor reach, and which may serve the protocol itself: an AIO broker does).
func (s *Server) newStateProtocol() (*statestore.Server, error) {
	switch {
	case s.state == nil || s.cfg.Embedded.StateProtocolOff || s.aio != nil: // with aio, the broker serves it
		return nil, nil
	case s.embedded == nil:
		s.log.Info("the Azure IoT Operations state store protocol is served on the embedded broker only: not served on " + redact.URL(s.broker))
		return nil, nil
	}
	b := s.embedded
	srv, err := statestore.New(statestore.Config{
		Store: s.state, Logger: s.log,
		Authorize: func(c abi.Caller, key []byte, write bool) bool { return b.StateAllowed(c.User, key, write) },
		Publish: func(ctx context.Context, topic string, payload []byte, ts string) error {
			return s.exec.PublishTelemetryAt(ctx, topic, payload, statestore.ContentType, ts)
		},
		Reach:     b.SubscribeClient,
		Connected: b.Connected,
	})
	if err != nil {
		return nil, err
	}
	if err := b.OnClientGone(srv.ClientGone); err != nil {
		srv.Close()
		return nil, err
	}
	s.log.Info("serving the Azure IoT Operations state store protocol", "topic", statestore.Topic)
	return srv, nil
}
