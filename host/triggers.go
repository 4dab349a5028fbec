package host

import (
	"context"
	"time"

	"github.com/cmdhost/cmdhost/internal/commands"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/topic"
	"github.com/cmdhost/cmdhost/internal/trigger"
	"github.com/cmdhost/cmdhost/plugins"
)

// The plugins' triggers (package trigger): handlers run for each message
// on a topic filter, on a session of their own so that a slow trigger
// never holds up the acknowledgements of requests.

// triggerClientID is the trigger session's client id: the executor's
// with "-triggers".
func triggerClientID(cfg Config) string { return executorClientID(cfg) + "-triggers" }

// newTriggers makes the trigger receiver. On the embedded broker its
// client id is the host's before it connects. Its state store is the
// executor's (the state folder, the Azure IoT Operations broker's, or,
// with Config.Store.URL, the one in Redis), so that a trigger's writes and
// the messages it publishes commit as a command's do, the messages
// through the same outbox (startOutbox).
func (s *Server) newTriggers() error {
	if s.embedded != nil {
		s.embedded.Reserve(triggerClientID(s.cfg))
	}
	r, err := trigger.NewReceiver(trigger.Config{ExecutorID: s.cfg.ExecutorID, ShareGroup: s.cfg.Broker.ShareGroup,
		Session: session.Config{Broker: s.broker, Failover: s.failover(), Auth: s.brokerAuth(), ClientID: triggerClientID(s.cfg), Dial: s.dial(),
			Expiry: s.cfg.Broker.SessionExpiry, MaxPacketSize: s.cfg.Broker.MaxRequestBytes},
		TrustBrokerIdentity: s.embedded != nil,
		State:               s.exec.State(), StateLimits: s.cfg.Store.StateLimits,
		Logger: s.log, Events: s.events, Observer: s.metrics})
	s.triggers = r
	return err
}

// triggerList is what the receiver serves: the triggers the plugins
// serve now that are subscribed (confirmed, not overlapping), each run by
// the plugin version serving it when a message comes.
func (s *Server) triggerList() []trigger.Trigger {
	var out []trigger.Trigger
	for _, c := range s.plugins.Triggers() {
		t := c.Trigger
		if t.State != plugins.TriggerSubscribed {
			continue
		}
		filter, err := topic.ParseFilter(t.Filter, false)
		if err != nil {
			continue // the manager refused such a module
		}
		sub, err := topic.ParseFilter(t.Topic, true)
		if err != nil {
			continue // the operator file's, checked at load
		}
		out = append(out, trigger.Trigger{Name: c.Name(), Plugin: c.Plugin, Filter: filter, Topic: sub, Attempts: t.Attempts,
			Concurrency: t.Concurrency, Timeout: c.Timeout, Idempotent: c.Declared.Idempotent, ContentTypes: c.Declared.ContentTypes,
			Handler: commands.Resolving(s.plugins, c.Name())})
	}
	return out
}

// setTriggers serves the plugins' triggers now; a subscription the broker
// refuses is logged (and shown by plugin list), and so is each trigger
// not subscribed, with why, when that changes.
func (s *Server) setTriggers(ctx context.Context) {
	notes := map[string]string{}
	for _, c := range s.plugins.Triggers() {
		if t := c.Trigger; t.State != plugins.TriggerSubscribed {
			notes[c.Name()] = t.Why
			if s.triggerNotes[c.Name()] != t.Why {
				s.log.Warn("trigger not subscribed", "trigger", c.Name(), "plugin", c.Plugin, "state", t.State, "why", t.Why)
			}
		}
	}
	s.triggerNotes = notes
	list := s.triggerList()
	if len(list) > 0 && s.embedded != nil {
		// From the first trigger on, the embedded broker tells the trigger
		// session who sent each message (the handlers' verified caller);
		// a host without triggers pays nothing for it.
		s.embedded.StampFor(triggerClientID(s.cfg))
	}
	if err := s.triggers.SetTriggers(ctx, list); err != nil {
		s.log.Error("triggers not subscribed", "err", err)
	}
}

// startTriggers connects the receiver with the plugins' triggers and
// returns once they are subscribed (so that the host serves, and says
// so, only then: a message sent after it reaches its trigger); the
// returned function stops it (the messages in flight get Config.Limits.Drain).
func (s *Server) startTriggers(ctx context.Context) (func(), error) {
	s.setTriggers(ctx)
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := s.triggers.Start(sctx); err != nil {
		_ = s.triggers.Stop(context.Background())
		return nil, err
	}
	if f := s.triggers.Filters(); len(f) > 0 {
		s.log.Info("serving triggers", "client_id", s.triggers.ClientID(), "topics", f)
	}
	return func() {
		dctx, cancel := context.WithTimeout(context.Background(), max(s.cfg.Limits.Drain, 0))
		defer cancel()
		if err := s.triggers.Stop(dctx); err != nil {
			s.log.Warn("stopping the triggers", "err", err)
		}
	}, nil
}

// triggerStats is the plugins manager's Config.TriggerStats: what the
// receiver did with a trigger's messages.
func (s *Server) triggerStats(name string) plugins.TriggerCounters {
	if s.triggers == nil {
		return plugins.TriggerCounters{}
	}
	c := s.triggers.Counters(name)
	return plugins.TriggerCounters{Messages: c.Messages, Handled: c.Handled, Failures: c.Failures, Dropped: c.Dropped,
		Duplicates: c.Duplicates, InFlight: c.InFlight, SubscribeError: c.SubscribeError}
}
