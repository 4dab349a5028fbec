package sdk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

// The durable state store (abi/ABI.md section 17, docs/state.md). A
// handler's writes are staged: it reads them back at once, and everyone
// else sees them when its reply is recorded, all of them or none (a call
// that fails, times out or is cancelled writes nothing, and a request
// delivered twice writes once).

// Errors of the state store. Each is a typed result, never a trap.
var (
	ErrStateNotFound    = errors.New("state: no such key")
	ErrStateConflict    = errors.New("state: condition failed (the key exists, or its version changed)")
	ErrStateQuota       = errors.New("state: the namespace is full (its operator file's \"state\" limits)")
	ErrStateTooLarge    = errors.New("state: a key, value or the call's writes are over their bound")
	ErrStateDenied      = errors.New("state: the operator file does not grant this namespace (or grants it read-only)")
	ErrStateUnavailable = errors.New("state: the store is unavailable; nothing was written")
	ErrStateNotInteger  = errors.New("state: the value is not a decimal integer (or the sum overflows)")
	ErrStateInvalid     = errors.New("state: invalid namespace name, empty key or bad option")
)

// StateSpace is a namespace of the state store: the plugin's own
// (State), or a shared one the operator granted (SharedState).
type StateSpace struct{ ns string }

// State is the plugin's own namespace.
func State() StateSpace { return StateSpace{} }

// SharedState is the shared namespace name; the operator file must
// grant it ("state": {"shared": {"NAME": "read"}} or "read-write").
func SharedState(name string) StateSpace { return StateSpace{ns: name} }

// Get returns key's value and version; ErrStateNotFound when there is
// none. A key this call wrote has version 0 until the call's reply is
// recorded.
func (s StateSpace) Get(key string) ([]byte, uint64, error) {
	buf := make([]byte, 256)
	for range 4 {
		var version uint64
		r := hostStateGet(s.ns, key, buf, &version)
		if r < 0 {
			return nil, 0, stateErr(r)
		}
		if int(r) <= len(buf) {
			return buf[:r], version, nil
		}
		buf = make([]byte, r)
	}
	return nil, 0, fmt.Errorf("%w: the value kept changing size while being read", ErrStateUnavailable)
}

// SetOption is a condition or an expiry of Set.
type SetOption func(*setOptions)

type setOptions struct {
	ttl       time.Duration
	ifVersion uint64
	flags     int32
}

// WithTTL makes the key expire d after the call's reply is recorded.
func WithTTL(d time.Duration) SetOption { return func(o *setOptions) { o.ttl = d } }

// IfAbsent sets the key only if it does not exist (ErrStateConflict
// otherwise).
func IfAbsent() SetOption { return func(o *setOptions) { o.flags |= abi.StateIfAbsent } }

// IfVersion sets (or deletes) the key only if its version is still v
// (ErrStateConflict otherwise): compare-and-set.
func IfVersion(v uint64) SetOption { return func(o *setOptions) { o.ifVersion = v } }

// Set stages key = value.
func (s StateSpace) Set(key string, value []byte, opts ...SetOption) error {
	var o setOptions
	for _, f := range opts {
		f(&o)
	}
	ttl := o.ttl.Milliseconds()
	if o.ttl > 0 && ttl == 0 {
		ttl = 1 // under a millisecond: the shortest expiry, not none
	}
	return stateErr(hostStateSet(s.ns, key, value, ttl, o.ifVersion, o.flags))
}

// Delete stages key's removal and says whether it exists; IfVersion is
// the only option it takes.
func (s StateSpace) Delete(key string, opts ...SetOption) (bool, error) {
	var o setOptions
	for _, f := range opts {
		f(&o)
	}
	if o.ttl != 0 || o.flags != 0 {
		return false, fmt.Errorf("%w: Delete takes IfVersion only", ErrStateInvalid)
	}
	r := hostStateDelete(s.ns, key, o.ifVersion)
	if r < 0 {
		return false, stateErr(r)
	}
	return r == 1, nil
}

// Add adds delta to key read as a decimal integer (absent reads 0) and
// returns the sum. Two calls adding to one key at once cannot both
// commit: the later one runs again (docs/state.md).
func (s StateSpace) Add(key string, delta int64) (int64, error) {
	n, r := hostStateAdd(s.ns, key, delta)
	return n, stateErr(r)
}

// List returns the keys that start with prefix and sort after after (""
// from the first), in byte order, a page at a time: more says whether
// to list again after the last key returned.
func (s StateSpace) List(prefix, after string) (keys []string, more bool, err error) {
	buf := make([]byte, 16<<10)
	r := hostStateList(s.ns, prefix, after, buf)
	if r == abi.ResultTooSmall {
		buf = make([]byte, 1<<20)
		r = hostStateList(s.ns, prefix, after, buf)
	}
	if r < 0 {
		return nil, false, stateErr(r)
	}
	return decodeListPage(buf[:r])
}

// decodeListPage reads a state_list page.
func decodeListPage(b []byte) (keys []string, more bool, err error) {
	for len(b) > 0 {
		if len(b) < 5 {
			return nil, false, errors.New("state: a list page cut short")
		}
		tag, n := b[0], binary.LittleEndian.Uint32(b[1:5])
		if uint64(n) > uint64(len(b)-5) {
			return nil, false, errors.New("state: a list page cut short")
		}
		v := b[5 : 5+n]
		switch tag {
		case abi.StateListKey:
			keys = append(keys, string(v))
		case abi.StateListMore:
			more = len(v) == 1 && v[0] == 1
		}
		b = b[5+n:]
	}
	return keys, more, nil
}

// stateErr is the error of a state function's result.
func stateErr(r abi.Result) error {
	switch {
	case r >= 0:
		return nil
	case r == abi.ResultNotFound:
		return ErrStateNotFound
	case r == abi.ResultConflict:
		return ErrStateConflict
	case r == abi.ResultLimit:
		return ErrStateQuota
	case r == abi.ResultTooLarge:
		return ErrStateTooLarge
	case r == abi.ResultDenied:
		return ErrStateDenied
	case r == abi.ResultNotInteger:
		return ErrStateNotInteger
	case r == abi.ResultInvalid:
		return ErrStateInvalid
	case r == abi.ResultUnavailable:
		return ErrStateUnavailable
	}
	return fmt.Errorf("state: host call failed with result %d", r)
}
