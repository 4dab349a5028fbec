package host

import (
	"context"
	"errors"
	"time"

	"github.com/cmdhost/cmdhost/internal/redact"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/stateaio"
)

// The handlers' state in the Azure IoT Operations state store of the
// broker the host serves on (Config.Store.StateAIO, package stateaio): the
// host speaks the broker's state store protocol as a client, on a
// connection of its own; its state folder keeps the outcomes of
// non-idempotent requests and the outbox.

// stateAIOClientID is the client id of the state store's connection: the
// executor's with "-state".
func stateAIOClientID(cfg Config) string { return executorClientID(cfg) + "-state" }

// CheckStateAIO refuses a Config whose StateAIO cannot be: the state
// store is an external broker's, and the outcomes are in the state
// folder. New checks it; the CLI does first, as a usage error.
func CheckStateAIO(cfg Config) error {
	switch {
	case !cfg.Store.StateAIO:
		return nil
	case cfg.Broker.URL == nil:
		return errors.New("--state aio keeps the handlers' state in the Azure IoT Operations state store of the broker --broker names, and this host runs its embedded broker, whose state store is this host's own: name the Azure IoT Operations broker with --broker, or leave out --state aio (the state folder)")
	case cfg.Store.URL != "":
		return errors.New("--state aio and --store: the handlers' state would be in the Azure IoT Operations broker and the outcomes of requests in Redis, which cannot be written together; give one")
	case cfg.Store.StateDir == "" || cfg.Store.NoState:
		return errors.New("--state aio keeps the outcomes of non-idempotent requests and the outbox in the state folder, around the writes to the broker's state store (docs/state.md): give a --state-dir, not off")
	}
	return nil
}

// newStateAIO makes the state store (connected by Run: startStateAIO).
func (s *Server) newStateAIO() error {
	if !s.cfg.Store.StateAIO {
		return nil
	}
	var err error
	s.aio, err = stateaio.New(stateaio.Config{
		Session: session.Config{Broker: s.broker, Failover: s.failover(), Auth: s.brokerAuth(), Dial: s.dial(),
			ClientID: stateAIOClientID(s.cfg)},
		Outcomes: s.state, Limits: s.cfg.Store.StateLimits, Logger: s.log,
	})
	if err != nil {
		return err
	}
	s.log.Info("state store in the Azure IoT Operations broker's state store", "broker", redact.URL(s.broker),
		"client_id", s.aio.ClientID(), "outcomes", s.cfg.Store.StateDir)
	return nil
}

// startStateAIO connects the state store, before the executor takes
// requests.
func (s *Server) startStateAIO(ctx context.Context) error {
	if s.aio == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return s.aio.Start(ctx)
}
