package sdk

import (
	"errors"
	"fmt"

	"github.com/cmdhost/cmdhost/abi"
)

// Publishing (abi/ABI.md section 18, docs/messages.md): a handler sends a
// message to a topic its operator file grants. A non-idempotent command's
// messages go out once its reply is recorded (with its state writes),
// once, and never for a call that failed; an idempotent command's go out
// as the call runs.

// Message is a message to publish: a topic name, a payload, and
// optionally a content type, user properties (Metadata), an expiry and
// CloudEvents attributes (Event).
type Message = abi.Message

// Event is a message's CloudEvents attributes: Type (required), Source
// (default /cmdhost/EXECUTOR/PLUGIN), Subject, DataSchema. The host adds
// specversion, id (the message's id) and time.
type Event = abi.Event

// Errors of Publish.
var (
	ErrPublishDenied      = errors.New("publish: the operator file grants no such topic (\"publish\": {\"topics\": [...]})")
	ErrPublishLimit       = errors.New("publish: over the plugin's rate, or the outbox is full: try later")
	ErrPublishTooLarge    = errors.New("publish: over the call's bound of messages or bytes")
	ErrPublishInvalid     = errors.New("publish: the message breaks the rules (not a topic name, a reserved property, bad UTF-8)")
	ErrPublishUnavailable = errors.New("publish: the host cannot take messages now")
)

// Publish sends m (see Message).
func Publish(m *Message) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrPublishInvalid, err)
	}
	return publishErr(hostPublish(abi.AppendMessage(nil, m)))
}

func publishErr(r abi.Result) error {
	switch {
	case r >= 0:
		return nil
	case r == abi.ResultDenied:
		return ErrPublishDenied
	case r == abi.ResultLimit:
		return ErrPublishLimit
	case r == abi.ResultTooLarge:
		return ErrPublishTooLarge
	case r == abi.ResultInvalid:
		return ErrPublishInvalid
	case r == abi.ResultUnavailable:
		return ErrPublishUnavailable
	}
	return fmt.Errorf("publish: host call failed with result %d", r)
}
