package state

import (
	"errors"
	"fmt"
	"strings"
)

// The kinds of error a store operation returns; every error of this
// package wraps exactly one of them (errors.Is), so that the host can map
// it to a guest result code or a protocol status.
var (
	// ErrNotFound: no such key (or it expired).
	ErrNotFound = errors.New("no such key")
	// ErrConflict: a write's condition does not hold (the key exists, its
	// version or value is not the one named). Nothing was written.
	ErrConflict = errors.New("condition failed")
	// ErrQuota: a namespace or the store would go over its bound.
	ErrQuota = errors.New("over quota")
	// ErrTooLarge: a key, a value or a call's writes exceed their bound.
	ErrTooLarge = errors.New("too large")
	// ErrInvalid: a namespace or key breaks the rules (empty, a NUL in a
	// namespace).
	ErrInvalid = errors.New("invalid")
	// ErrNotInteger: an add on a value that is not a decimal integer, or
	// a sum that overflows 64 bits.
	ErrNotInteger = errors.New("not a decimal integer")
	// ErrUnavailable: the store cannot be read or written (its disk is
	// full or failing, it is closed, its server is unreachable). Nothing
	// acknowledged is lost.
	ErrUnavailable = errors.New("state store unavailable")
	// ErrFenced: a key is fenced (written with a fencing token) and a
	// write gives no token, or an older one.
	ErrFenced = errors.New("fenced")
	// ErrUnknown: a commit whose fate the store could not learn (a store
	// on another machine stopped answering once the commit was sent, and
	// while the store tried to find out): it may have applied, once.
	ErrUnknown = errors.New("commit outcome unknown")
)

// ConflictError is the ErrConflict of a commit: which op failed and why.
type ConflictError struct {
	Op        int    // the index of the op in Commit.Ops
	Namespace string // its namespace
	Key       []byte
	Why       string // e.g. "the key exists", "the version is 12, not 9"
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("condition failed on key %s in namespace %s: %s", quoteKey(e.Key), e.Namespace, e.Why)
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// QuotaError is ErrQuota with the bound that would be passed.
type QuotaError struct {
	Namespace string // "" for the store's total
	What      string // "keys" or "bytes"
	Limit     int64
}

func (e *QuotaError) Error() string {
	if strings.HasPrefix(e.What, "outbox") {
		where := "the outbox"
		if e.Namespace != "" {
			where = "the outbox of namespace " + e.Namespace
		}
		return fmt.Sprintf("%s is full: its %s would pass %d (its messages wait for the broker to take them; docs/messages.md)", where, strings.TrimPrefix(e.What, "outbox "), e.Limit)
	}
	if e.Namespace == "" {
		return fmt.Sprintf("the state store is full: its %s would pass %d (serve --state-max-bytes)", e.What, e.Limit)
	}
	return fmt.Sprintf("namespace %s is full: its %s would pass %d (raise its \"state\" limits in the operator file)", e.Namespace, e.What, e.Limit)
}

func (e *QuotaError) Unwrap() error { return ErrQuota }

// quoteKey shows a key in an error: quoted, cut at 64 bytes.
func quoteKey(k []byte) string {
	const max = 64
	if len(k) > max {
		return fmt.Sprintf("%q…", k[:max])
	}
	return fmt.Sprintf("%q", k)
}

// unavailable wraps err as ErrUnavailable, saying what was being done.
func unavailable(doing string, err error) error {
	return fmt.Errorf("%s: %w: %w", doing, ErrUnavailable, err)
}

// FenceError is ErrFenced: the key is fenced and the write's token is
// missing or older than the key's.
type FenceError struct {
	Namespace string
	Key       []byte
	Missing   bool // no token given; otherwise it is older
}

func (e *FenceError) Error() string {
	if e.Missing {
		return fmt.Sprintf("key %s in namespace %s is fenced: a fencing token is required", quoteKey(e.Key), e.Namespace)
	}
	return fmt.Sprintf("key %s in namespace %s is fenced by a newer token", quoteKey(e.Key), e.Namespace)
}

func (e *FenceError) Unwrap() error { return ErrFenced }
