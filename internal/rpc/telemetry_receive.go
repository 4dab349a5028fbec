package rpc

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/eclipse/paho.golang/paho"
)

// ReceiveTelemetry subscribes to topic (a topic name, QoS 1) on the
// invoker's connection and hands each message's payload to each until
// ctx ends, then unsubscribes. each runs on paho's goroutine and must not
// block. The subscription is made again when the connection comes back.
// cmdhost watch receives a host's timeout events so.
func (inv *Invoker) ReceiveTelemetry(ctx context.Context, topic string, each func(payload []byte)) error {
	if !validTopicName(topic) {
		return fmt.Errorf("telemetry topic %.64q: not a topic name (no wildcards, no empty level)", topic)
	}
	return inv.receiveOn(ctx, topic, func(_ string, payload []byte) { each(payload) })
}

// ReceiveTelemetryFilter is ReceiveTelemetry for the topics of filter, a
// topic name whose levels may be the single-level wildcard +: each gets
// the topic of every message too. `cmdhost hosts` receives every host's
// announcements (cmdhost/+/replicas) so.
func (inv *Invoker) ReceiveTelemetryFilter(ctx context.Context, filter string, each func(topic string, payload []byte)) error {
	if !validTopicName(strings.ReplaceAll(filter, "+", "x")) || strings.Contains(filter, "#") || strings.Contains(filter, "$") {
		return fmt.Errorf("telemetry filter %.64q: not a topic name whose levels may be +", filter)
	}
	for _, level := range strings.Split(filter, "/") {
		if strings.Contains(level, "+") && level != "+" {
			return fmt.Errorf("telemetry filter %.64q: + must be a whole level", filter)
		}
	}
	return inv.receiveOn(ctx, filter, each)
}

// receiveOn is ReceiveTelemetry's and ReceiveTelemetryFilter's.
func (inv *Invoker) receiveOn(ctx context.Context, topic string, each func(topic string, payload []byte)) error {
	inv.mu.Lock()
	if _, taken := inv.telemetry[topic]; taken || topic == inv.responseTopic {
		inv.mu.Unlock()
		return fmt.Errorf("telemetry topic %s: already received", topic)
	}
	inv.telemetry[topic] = each
	inv.mu.Unlock()
	defer func() {
		inv.mu.Lock()
		delete(inv.telemetry, topic)
		inv.mu.Unlock()
	}()
	if _, err := inv.sess.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: topic, QoS: 1}}}); err != nil {
		if ctx.Err() != nil {
			// Ended while subscribing: the broker may deliver before
			// paho has read the SUBACK, so a receiver can be done
			// before Subscribe returns.
			return nil
		}
		return fmt.Errorf("subscribing to %s: %w", topic, err)
	}
	<-ctx.Done()
	uctx, cancel := context.WithTimeout(context.Background(), cancelWait)
	defer cancel()
	if _, err := inv.sess.Unsubscribe(uctx, &paho.Unsubscribe{Topics: []string{topic}}); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		inv.cfg.Logger.Debug("unsubscribing", "topic", topic, "err", err)
	}
	return nil
}

// telemetryTopics returns the topics ReceiveTelemetry receives now, to
// subscribe again after a reconnect.
func (inv *Invoker) telemetryTopics() []paho.SubscribeOptions {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	var out []paho.SubscribeOptions
	for t := range inv.telemetry {
		out = append(out, paho.SubscribeOptions{Topic: t, QoS: 1})
	}
	return out
}

// receiveTelemetry hands a message on a telemetry topic to its receiver;
// it reports whether p was one.
func (inv *Invoker) receiveTelemetry(p *paho.Publish) bool {
	if p.Topic == inv.responseTopic {
		return false
	}
	inv.mu.Lock()
	each := inv.telemetry[p.Topic]
	if each == nil {
		for filter, f := range inv.telemetry {
			if strings.Contains(filter, "+") && matchFilter(filter, p.Topic) {
				each = f
				break
			}
		}
	}
	inv.mu.Unlock()
	if each != nil {
		each(p.Topic, p.Payload)
	}
	return true
}

// matchFilter reports whether topic matches filter, whose levels may be
// +, level by level without splitting either (it runs for each message).
func matchFilter(filter, topic string) bool {
	for {
		f, fRest, fMore := strings.Cut(filter, "/")
		t, tRest, tMore := strings.Cut(topic, "/")
		if fMore != tMore || (f != "+" && f != t) {
			return false
		}
		if !fMore {
			return true
		}
		filter, topic = fRest, tRest
	}
}
