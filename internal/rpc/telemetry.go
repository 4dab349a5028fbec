package rpc

import (
	"context"
	"errors"
	"fmt"

	"github.com/eclipse/paho.golang/paho"
)

// PublishTelemetry publishes payload on topic over the executor's
// connection, as the protocol's telemetry does: QoS 1, with __protVer,
// __srcId (the executor's client id) and an __ts of the executor's clock.
// It waits for the connection until ctx is done. serve publishes the
// timeout events this way (--events). A message the broker would refuse
// (session.Check) is an error and is not published.
func (e *Executor) PublishTelemetry(ctx context.Context, topic string, payload []byte, contentType string) error {
	return e.PublishTelemetryAt(ctx, topic, payload, contentType, "")
}

// PublishTelemetryAt is PublishTelemetry with ts as the message's __ts:
// the time of what it tells of, as the service that sends it keeps it
// (a state store key's version, package statestore); "" takes a reading
// of the executor's clock.
func (e *Executor) PublishTelemetryAt(ctx context.Context, topic string, payload []byte, contentType, ts string) error {
	if ts == "" {
		ts = e.stamp()
	}
	if !e.sess.Started() {
		return errors.New("publishing telemetry: the executor is not started")
	}
	if !validTopicName(topic) {
		return fmt.Errorf("publishing telemetry: topic %.64q: not a topic name (no wildcards, no empty level)", topic)
	}
	p := &paho.Publish{QoS: 1, Topic: topic, Payload: payload, Properties: &paho.PublishProperties{
		ContentType: contentType,
		User: paho.UserProperties{
			{Key: propProtocol, Value: protocolVersion},
			{Key: propSourceID, Value: cleanText(e.cfg.clientID(), MaxPropertyValue)},
			{Key: propTimestamp, Value: cleanText(ts, MaxPropertyValue)},
		},
	}}
	if err := e.sess.Check(p); err != nil {
		return fmt.Errorf("publishing telemetry on %s: %w", cleanText(topic, MaxPropertyValue), err)
	}
	if err := e.sess.AwaitConnection(ctx); err != nil {
		return err
	}
	return e.sess.Publish(ctx, p)
}
