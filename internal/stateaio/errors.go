package stateaio

import (
	"fmt"
	"strings"

	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/statestore"
)

// LimitError is state.ErrInvalid: what was asked has no request in the
// protocol (List, a write on a version, more than one conditional write
// in a commit, …), and why.
type LimitError struct {
	What string // what was asked, e.g. "a write only if the key's version is V"
	Why  string // what the protocol lacks
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("the Azure IoT Operations state store (serve --state aio) cannot do %s: %s", e.What, e.Why)
}

func (e *LimitError) Unwrap() error { return state.ErrInvalid }

// The limits.
var (
	errNoList = &LimitError{What: "a list of keys",
		Why: "its protocol has no SCAN (nor any way to enumerate keys)"}
	errNoVersion = &LimitError{What: "a write only if the key's version is V (IfVersion; an add to a key that exists is one: it writes only if the version it read still stands)",
		Why: "its protocol has no compare-and-set, and fencing tokens cannot stand in for one (a token equal to the key's passes, so two writers that read one version would both write)"}
	errOneConditional = &LimitError{What: "more than one conditional write in a call (only if absent, only if the version is V)",
		Why: "its protocol has no transactions: a condition that failed after another write applied would leave that write applied"}
	errCondFirst = &LimitError{What: "a conditional write after another write of the same key in one commit",
		Why: "its protocol has no transactions: the conditional write must go first, so that a failed condition leaves nothing applied"}
	errNoValueSet = &LimitError{What: "a set only if the key holds a value other than the one set",
		Why: "its protocol's only value condition on a SET is NEX: absent, or holding the value set"}
	errNoDeleteCond = &LimitError{What: "a delete only if the key is absent",
		Why: "its protocol's only condition on a delete is VDEL: the key holds a value"}
	errNamespace = func(ns string) error {
		return &LimitError{What: fmt.Sprintf("namespace %q", ns),
			Why: "its keys are the protocol's, plugin/NAME/KEY, shared/NAME/KEY, or any other key in namespace aio; no other namespace has keys there"}
	}
)

// ServiceError is a request the broker's state store refused (`-ERR
// message`): nothing was applied. It wraps the state error that says
// what the refusal means (state.ErrQuota for `the quota has been
// exceeded`, state.ErrUnavailable for `not authorized` or clocks too far
// apart, state.ErrInvalid for a request it cannot read, …).
type ServiceError struct {
	Verb    string // SET, GET, DEL, VDEL
	Key     []byte // the protocol's key
	Message string // after -ERR
	Kind    error
	Hint    string // what to do, or ""
}

func (e *ServiceError) Error() string {
	s := fmt.Sprintf("the Azure IoT Operations state store refused %s %s: %s", e.Verb, quote(e.Key), e.Message)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func (e *ServiceError) Unwrap() error { return e.Kind }

// serviceError is the state error of a `-ERR message` reply to a request
// about key k of namespace ns (the protocol's key: key).
func serviceError(verb, ns string, k, key []byte, message string) error {
	e := &ServiceError{Verb: verb, Key: key, Message: message, Kind: state.ErrUnavailable}
	switch {
	case message == statestore.MsgFencingRequired:
		return &state.FenceError{Namespace: ns, Key: k, Missing: true}
	case message == statestore.MsgFencingLower:
		return &state.FenceError{Namespace: ns, Key: k}
	case message == statestore.MsgQuota:
		e.Kind, e.Hint = state.ErrQuota, "the broker's state store is full"
	case message == statestore.MsgNotAuthorized:
		e.Hint = "the broker does not let this host's state client (serve --state aio) read or write the key: grant it there"
	case message == statestore.MsgTimestampSkew:
		e.Hint = "this host's clock is more than a minute ahead of the broker's: synchronise them"
	case message == statestore.MsgFencingSkew, message == statestore.MsgMalformedTimestamp, message == statestore.MsgMissingTimestamp,
		message == statestore.MsgSyntax, message == statestore.MsgUnknownCommand, message == statestore.MsgArity,
		message == statestore.MsgKeyLengthZero:
		e.Kind = state.ErrInvalid
	case strings.HasPrefix(message, state.ErrTooLarge.Error()+":"): // cmdhost's own server names its bounds so
		e.Kind = state.ErrTooLarge
	case strings.HasPrefix(message, state.ErrInvalid.Error()+":"):
		e.Kind = state.ErrInvalid
	}
	return e
}

// PartialError is state.ErrUnknown: a commit of several writes that
// failed after some applied (the protocol has no transactions).
type PartialError struct {
	Applied int   // the writes applied, in the order they were sent
	Writes  int   // the commit's
	Err     error // why the next one was not applied, or may not have been
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("the Azure IoT Operations state store has no transactions: %d of the commit's %d writes applied, then the next was refused or not answered (%v), and the rest were not sent",
		e.Applied, e.Writes, e.Err)
}

func (e *PartialError) Unwrap() error { return state.ErrUnknown }
