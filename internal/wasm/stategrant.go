package wasm

import (
	"fmt"

	"github.com/cmdhost/cmdhost/internal/state"
)

// StateGrant is what a plugin may do with the state store: its own
// namespace always (bounded by Own), the shared namespaces Shared names,
// each read-only or read-write. Anything else is refused (ResultDenied).
type StateGrant struct {
	// Own bounds the plugin's namespace; zero fields: the store's
	// defaults (serve --state-namespace-bytes, --state-namespace-keys).
	Own state.Quota
	// Shared are the shared namespaces the plugin may use, by name.
	Shared map[string]StateAccess
	// CommitErrors commits a call's writes when it answers an error (a
	// status of 400 or more) too; by default they are dropped.
	CommitErrors bool
}

// StateAccess is what a plugin may do in a shared namespace.
type StateAccess uint8

// The accesses.
const (
	StateRead StateAccess = iota + 1
	StateReadWrite
)

func (a StateAccess) String() string {
	switch a {
	case StateRead:
		return "read"
	case StateReadWrite:
		return "read-write"
	}
	return fmt.Sprintf("StateAccess(%d)", uint8(a))
}

// ParseStateAccess reads "read" or "read-write".
func ParseStateAccess(s string) (StateAccess, error) {
	switch s {
	case "read":
		return StateRead, nil
	case "read-write":
		return StateReadWrite, nil
	}
	return 0, fmt.Errorf("access %q: give \"read\" or \"read-write\"", s)
}

// MaxSharedNameBytes bounds a shared namespace's name.
const MaxSharedNameBytes = 128

// CheckSharedName checks a shared namespace's name: 1 to 128 bytes of
// letters, digits, '.', '_' and '-' (a name that is safe in a key
// prefix, a log line and a file name).
func CheckSharedName(name string) error {
	if name == "" || len(name) > MaxSharedNameBytes {
		return fmt.Errorf("a shared namespace's name is 1 to %d bytes, not %d", MaxSharedNameBytes, len(name))
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("shared namespace %q: use letters, digits, '.', '_' and '-' only", name)
		}
	}
	return nil
}
