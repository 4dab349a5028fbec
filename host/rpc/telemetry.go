package rpc

import (
	"context"
	"errors"

	"github.com/eclipse/paho.golang/paho"
)

// PublishTelemetry publishes payload on topic over the executor's
// connection, as the protocol's telemetry does: QoS 1, with __protVer,
// __srcId (the executor's client id) and an __ts of the executor's clock.
// It waits for the connection until ctx is done. serve publishes the
// timeout events this way (--events).
func (e *Executor) PublishTelemetry(ctx context.Context, topic string, payload []byte, contentType string) error {
	cm := e.cm.Load()
	if cm == nil {
		return errors.New("publishing telemetry: the executor is not started")
	}
	if err := cm.AwaitConnection(ctx); err != nil {
		return err
	}
	_, err := cm.Publish(ctx, &paho.Publish{QoS: 1, Topic: topic, Payload: payload, Properties: &paho.PublishProperties{
		ContentType: contentType,
		User: paho.UserProperties{
			{Key: propProtocol, Value: protocolVersion},
			{Key: propSourceID, Value: e.cfg.ClientID},
			{Key: propTimestamp, Value: e.stamp()},
		},
	}})
	return err
}
