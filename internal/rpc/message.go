package rpc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/internal/session"
)

// Message is a message a handler published (package outbox), as the
// executor sends it: on its own connection, QoS 1, with the telemetry
// headers of the Azure IoT Operations protocol (__protVer, __srcId, __ts)
// before the message's own user properties.
type Message struct {
	Topic       string
	Payload     []byte
	ContentType string
	UTF8        bool          // the payload format indicator is 1
	Expiry      time.Duration // 0: none
	Properties  []Property    // user properties, in order
}

// Property is a user property.
type Property struct{ Key, Value string }

// ErrUndeliverable is wrapped by PublishMessage's error when the message
// can never be sent as it is: not a topic name, a packet the broker would
// refuse (too large, a bad string), or one the broker refused (its PUBACK's
// reason code, e.g. not authorized). Sending it again would fail again.
var ErrUndeliverable = errors.New("the message cannot be delivered")

// PublishMessage sends m and returns once the broker acknowledged it, or
// ctx ended, or the connection dropped first (then it may or may not have
// arrived: the caller sends it again, with its id).
func (e *Executor) PublishMessage(ctx context.Context, m Message) error {
	if !e.sess.Started() {
		return errors.New("publishing a message: the executor is not started")
	}
	if !validTopicName(m.Topic) {
		return fmt.Errorf("%w: topic %.64q: not a topic name", ErrUndeliverable, m.Topic)
	}
	props := &paho.PublishProperties{ContentType: m.ContentType,
		User: make(paho.UserProperties, 0, 3+len(m.Properties))}
	props.User = append(props.User,
		paho.UserProperty{Key: propProtocol, Value: protocolVersion},
		paho.UserProperty{Key: propSourceID, Value: cleanText(e.cfg.clientID(), MaxPropertyValue)},
		paho.UserProperty{Key: propTimestamp, Value: e.stamp()})
	for _, p := range m.Properties {
		props.User = append(props.User, paho.UserProperty{Key: p.Key, Value: p.Value})
	}
	if m.UTF8 {
		one := byte(1)
		props.PayloadFormat = &one
	}
	if m.Expiry > 0 {
		s := uint32(min((m.Expiry+time.Second-1)/time.Second, 1<<32-1))
		props.MessageExpiry = &s
	}
	p := &paho.Publish{QoS: 1, Topic: m.Topic, Payload: m.Payload, Properties: props}
	if err := e.sess.Check(p); err != nil {
		return fmt.Errorf("%w: on %s: %w", ErrUndeliverable, cleanText(m.Topic, MaxPropertyValue), err)
	}
	if err := e.sess.AwaitConnection(ctx); err != nil {
		return err
	}
	err := e.sess.Publish(ctx, p)
	var refused *session.PublishRefusedError
	if errors.As(err, &refused) {
		return fmt.Errorf("%w: %w", ErrUndeliverable, err)
	}
	return err
}
