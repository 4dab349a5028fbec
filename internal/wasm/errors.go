package wasm

import (
	"context"
	"errors"
	"fmt"
)

// Kind tells call failures apart; callers map them to protocol statuses.
type Kind int

// Kinds of call failure. Every kind but KindUnknownCommand and KindClosed
// means the instance that ran the call was discarded.
const (
	// KindDeadline: the call's deadline passed (while waiting for an
	// instance or while running); the guest was stopped.
	KindDeadline Kind = iota + 1
	// KindCanceled: the caller canceled the call; the guest was stopped.
	KindCanceled
	// KindTrap: the guest trapped, panicked or exited.
	KindTrap
	// KindOutOfMemory: the guest ran out of its memory limit.
	KindOutOfMemory
	// KindBadOutput: the guest gave no response, an oversized one or one
	// that does not decode or breaks the response rules.
	KindBadOutput
	// KindUnknownCommand: the plugin does not serve the command.
	KindUnknownCommand
	// KindClosed: the plugin is closed and takes no calls.
	KindClosed
	// KindInstantiate: a fresh instance could not be made.
	KindInstantiate
	// KindMemoryBudget: the call needed a fresh instance and the engine's
	// guest memory budget had no room for it, even after closing every
	// idle instance; the guest did not run (budget.go).
	KindMemoryBudget
	// KindFuel: the call used up its fuel budget (PluginConfig.Fuel); the
	// guest was stopped.
	KindFuel
)

var kindNames = map[Kind]string{
	KindDeadline:       "deadline exceeded",
	KindCanceled:       "canceled",
	KindTrap:           "trap",
	KindOutOfMemory:    "out of memory",
	KindBadOutput:      "bad output",
	KindUnknownCommand: "unknown command",
	KindClosed:         "plugin closed",
	KindInstantiate:    "instantiate failed",
	KindMemoryBudget:   "guest memory budget exhausted",
	KindFuel:           "fuel exhausted",
}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Error reports why a call failed. errors.Is(err, context.DeadlineExceeded)
// holds for KindDeadline and errors.Is(err, context.Canceled) for
// KindCanceled; errors.Is(err, wasm.KindTrap) works for every kind.
type Error struct {
	Kind    Kind
	Plugin  string
	Command string
	Err     error // the underlying cause, may be nil
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("plugin %s: command %s: %s", e.Plugin, e.Command, e.Kind)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches a Kind, and the context errors for deadline and cancel.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case Kind:
		return e.Kind == t
	}
	switch {
	case target == context.DeadlineExceeded:
		return e.Kind == KindDeadline
	case target == context.Canceled:
		return e.Kind == KindCanceled
	}
	return false
}

// Error makes a Kind usable as an errors.Is target.
func (k Kind) Error() string { return k.String() }

// KindOf returns err's Kind, or 0 when err is not an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}
