package abi

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Publishing (FnPublish): a handler sends a message, an event or a
// reading, to a topic its operator file grants. See ABI.md section 18.

// Message tags.
const (
	msgTopic       = 1 // string, required
	msgPayload     = 2 // bytes
	msgContentType = 3 // string
	msgFormat      = 4 // u8: FormatIndicator
	msgMetadata    = 5 // map entry, repeated
	msgEvent       = 6 // nested Event envelope
	msgExpiry      = 7 // ms; absent or 0 = none
)

// Event tags, inside a msgEvent record: the CloudEvents attributes the
// guest sets (the host sets specversion, id and time).
const (
	evType       = 1 // string, required in an Event
	evSource     = 2 // string
	evSubject    = 3 // string
	evDataSchema = 4 // string
)

// Bounds of a Message.
const (
	// MaxMessageTopic bounds a topic in bytes.
	MaxMessageTopic = 1024
	// MaxMessageMetadata bounds the user properties of a message.
	MaxMessageMetadata = 32
	// MaxEventAttribute bounds a CloudEvents attribute in bytes.
	MaxEventAttribute = 512
)

// Message is what a guest hands to FnPublish.
type Message struct {
	// Topic is a topic name (no wildcards, no empty level) the operator
	// file grants the plugin.
	Topic       string
	Payload     []byte
	ContentType string
	Format      FormatIndicator
	// Metadata become the message's user properties. Names must not start
	// with "__" (the protocol's) nor name a CloudEvents attribute or
	// cmdhost's message id.
	Metadata map[string]string
	// Event, when set, makes the message a CloudEvent (binary mode: the
	// attributes as user properties, the payload as its data).
	Event *Event
	// Expiry is the message's expiry; 0: none.
	Expiry time.Duration
}

// Event is the CloudEvents attributes a guest gives a message.
type Event struct {
	Type, Source, Subject, DataSchema string
}

// The user properties cmdhost sets on a published message, which a
// guest's metadata may not name.
const (
	// MessageIDProperty is each published message's id: the same id for
	// every send of one message (an outbox's sends after a restart
	// included), so that a receiver can drop a message it already has.
	MessageIDProperty = "cmdhost-message-id"
)

// eventProperties are the CloudEvents attributes as MQTT user properties
// (CloudEvents MQTT binding, binding mode).
var eventProperties = []string{"specversion", "type", "source", "id", "time", "subject", "dataschema"}

// AppendMessage appends the encoding of m to dst.
func AppendMessage(dst []byte, m *Message) []byte {
	dst = appendString(dst, msgTopic, m.Topic)
	if len(m.Payload) > 0 {
		dst = appendRecord(dst, msgPayload, m.Payload)
	}
	if m.ContentType != "" {
		dst = appendString(dst, msgContentType, m.ContentType)
	}
	if m.Format != FormatBytes {
		dst = appendU8(dst, msgFormat, byte(m.Format))
	}
	dst = appendMap(dst, msgMetadata, m.Metadata)
	if e := m.Event; e != nil {
		var at int
		dst, at = beginRecord(dst, msgEvent)
		dst = appendString(dst, evType, e.Type)
		for _, a := range []struct {
			tag byte
			v   string
		}{{evSource, e.Source}, {evSubject, e.Subject}, {evDataSchema, e.DataSchema}} {
			if a.v != "" {
				dst = appendString(dst, a.tag, a.v)
			}
		}
		dst = endRecord(dst, at)
	}
	if m.Expiry > 0 {
		dst = appendI64(dst, msgExpiry, ceilMillis(m.Expiry))
	}
	return dst
}

// DecodeMessage decodes an encoded Message and checks it with
// Message.Validate. The result shares no memory with buf.
func DecodeMessage(buf []byte) (*Message, error) {
	m := &Message{}
	rd := reader{buf: buf, singular: bits(msgTopic, msgPayload, msgContentType, msgFormat, msgEvent, msgExpiry)}
	for {
		tag, v, ok, err := rd.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch tag {
		case msgTopic:
			m.Topic = string(v)
		case msgPayload:
			m.Payload = copyBytes(v)
		case msgContentType:
			m.ContentType = string(v)
		case msgFormat:
			var f byte
			f, err = u8(tag, v)
			m.Format = FormatIndicator(f)
		case msgMetadata:
			if len(m.Metadata) == MaxMessageMetadata {
				return nil, malformed("more than %d metadata entries", MaxMessageMetadata)
			}
			err = mapEntry(tag, v, &m.Metadata)
		case msgEvent:
			m.Event, err = decodeEvent(v)
		case msgExpiry:
			var ms int64
			ms, err = durationMillis(tag, v)
			m.Expiry = time.Duration(ms) * time.Millisecond
		}
		if err != nil {
			return nil, err
		}
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeEvent(buf []byte) (*Event, error) {
	e := &Event{}
	rd := reader{buf: buf, singular: bits(evType, evSource, evSubject, evDataSchema)}
	for {
		tag, v, ok, err := rd.next()
		if err != nil {
			return nil, fmt.Errorf("event: %w", err)
		}
		if !ok {
			return e, nil
		}
		switch tag {
		case evType:
			e.Type = string(v)
		case evSource:
			e.Source = string(v)
		case evSubject:
			e.Subject = string(v)
		case evDataSchema:
			e.DataSchema = string(v)
		}
	}
}

// Validate checks what any host refuses in a Message, whatever its
// grants: a topic that is no topic name, strings that are not clean
// UTF-8, metadata that names the protocol's or cmdhost's properties.
func (m *Message) Validate() error {
	switch {
	case m.Topic == "" || len(m.Topic) > MaxMessageTopic:
		return malformed("a message's topic is 1 to %d bytes, not %d", MaxMessageTopic, len(m.Topic))
	case strings.ContainsAny(m.Topic, "+#") || strings.HasPrefix(m.Topic, "/") || strings.HasSuffix(m.Topic, "/") ||
		strings.Contains(m.Topic, "//") || !cleanString(m.Topic):
		return malformed("topic %.64q is not a topic name: no wildcard, no empty level, UTF-8 without control characters", m.Topic)
	case m.Format > FormatUTF8:
		return malformed("payload format indicator %d: 0 or 1", m.Format)
	case m.Format == FormatUTF8 && !utf8.Valid(m.Payload):
		return malformed("the payload format indicator says UTF-8 but the payload is not")
	case !cleanString(m.ContentType):
		return malformed("content type %.64q: UTF-8 without control characters", m.ContentType)
	case m.Expiry < 0:
		return malformed("a negative expiry")
	}
	if len(m.Metadata) > MaxMessageMetadata {
		return malformed("%d metadata entries, more than %d", len(m.Metadata), MaxMessageMetadata)
	}
	for k, v := range m.Metadata {
		lk := strings.ToLower(k)
		switch {
		case k == "" || !cleanString(k) || !cleanString(v):
			return malformed("metadata %.64q: a non-empty name and a value of UTF-8 without control characters", k)
		case strings.HasPrefix(k, "__"):
			return malformed("metadata %.64q: names starting with __ are the protocol's", k)
		case lk == MessageIDProperty || (m.Event != nil && containsString(eventProperties, lk)):
			return malformed("metadata %.64q: the host sets that property", k)
		}
	}
	if e := m.Event; e != nil {
		if e.Type == "" {
			return malformed("an event needs a type")
		}
		for _, a := range []string{e.Type, e.Source, e.Subject, e.DataSchema} {
			if len(a) > MaxEventAttribute || !cleanString(a) {
				return malformed("event attribute %.64q: at most %d bytes of UTF-8 without control characters", a, MaxEventAttribute)
			}
		}
	}
	return nil
}

// cleanString reports whether s is UTF-8 without control characters:
// what a broker accepts in a property (mosquitto drops a client that
// sends a control character).
func cleanString(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return false
		}
	}
	return true
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
