package session

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unicode/utf8"

	"github.com/eclipse/paho.golang/paho"
)

// The last check before a publish (wirestring.go explains why): a packet
// the broker would refuse is never handed to paho, which would keep it in
// its session and send it again at every reconnect.

// maxRemainingLength is the largest packet MQTT can frame (its
// remaining length, a 4-byte variable byte integer).
const maxRemainingLength = 268_435_455

// packetLimit is the broker's Maximum Packet Size from the CONNACK of
// the current connection; 0 when it set none.
type packetLimit struct{ n atomic.Uint32 }

// set records the limit of a new connection's CONNACK.
func (l *packetLimit) set(ca *paho.Connack) {
	var n uint32
	if ca != nil && ca.Properties != nil && ca.Properties.MaximumPacketSize != nil {
		n = *ca.Properties.MaximumPacketSize
	}
	l.n.Store(n)
}

// sendable returns why the broker would refuse p, or nil: a string it
// refuses (WireProblem), binary data longer than MQTT carries, a payload
// marked UTF-8 that is not, or a packet larger than limit (0: MQTT's own
// bound).
func sendable(p *paho.Publish, limit uint32) error {
	props := p.Properties
	if props == nil {
		props = &paho.PublishProperties{}
	}
	for _, f := range [...]struct{ what, s string }{
		{"topic", p.Topic}, {"content type", props.ContentType}, {"response topic", props.ResponseTopic},
	} {
		if problem := WireProblem(f.s); problem != "" {
			return fmt.Errorf("%s %.64q: %s", f.what, f.s, problem)
		}
	}
	if len(props.CorrelationData) > MaxString {
		return fmt.Errorf("correlation data of %d bytes, more than MQTT's %d", len(props.CorrelationData), MaxString)
	}
	for _, up := range props.User {
		if problem := WireProblem(up.Key); problem != "" {
			return fmt.Errorf("user property key %.64q: %s", up.Key, problem)
		}
		if problem := WireProblem(up.Value); problem != "" {
			return fmt.Errorf("user property %.64q: value %.64q: %s", up.Key, up.Value, problem)
		}
	}
	if props.PayloadFormat != nil && *props.PayloadFormat == 1 && !utf8.Valid(p.Payload) {
		return fmt.Errorf("the payload is marked UTF-8 (payload format indicator 1) but is not")
	}
	if remaining := remainingLength(p); remaining > maxRemainingLength {
		return fmt.Errorf("%w: %d bytes, more than MQTT can frame", ErrTooLarge, remaining)
	}
	if size := packetSize(p); limit > 0 && size > int(limit) {
		return fmt.Errorf("%w: %d bytes, more than the broker's maximum packet size of %d", ErrTooLarge, size, limit)
	}
	return nil
}

// ErrTooLarge marks a packet refused for its size.
var ErrTooLarge = errors.New("packet too large")

// packetSize is the size of p encoded as a PUBLISH packet, as paho
// encodes it.
func packetSize(p *paho.Publish) int {
	r := remainingLength(p)
	return 1 + vbiLen(r) + r
}

// remainingLength is the length of p's PUBLISH packet after its fixed
// header.
func remainingLength(p *paho.Publish) int {
	n := 2 + len(p.Topic)
	if p.QoS > 0 {
		n += 2 // packet identifier
	}
	props := 0
	if pp := p.Properties; pp != nil {
		if pp.PayloadFormat != nil {
			props += 1 + 1
		}
		if pp.MessageExpiry != nil {
			props += 1 + 4
		}
		if pp.ContentType != "" {
			props += 1 + 2 + len(pp.ContentType)
		}
		if pp.ResponseTopic != "" {
			props += 1 + 2 + len(pp.ResponseTopic)
		}
		if len(pp.CorrelationData) > 0 {
			props += 1 + 2 + len(pp.CorrelationData)
		}
		if pp.TopicAlias != nil {
			props += 1 + 2
		}
		if pp.SubscriptionIdentifier != nil {
			props += 1 + vbiLen(*pp.SubscriptionIdentifier)
		}
		for _, up := range pp.User {
			props += 1 + 2 + len(up.Key) + 2 + len(up.Value)
		}
	}
	return n + vbiLen(props) + props + len(p.Payload)
}

// vbiLen is the length of n as an MQTT variable byte integer.
func vbiLen(n int) int {
	switch {
	case n < 1<<7:
		return 1
	case n < 1<<14:
		return 2
	case n < 1<<21:
		return 3
	}
	return 4
}
