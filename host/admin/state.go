package admin

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// The state ops (`cmdhost state … --executor ID`, docs/state.md
// "Operating the store"): the host's state store, read and written
// through the running host, which holds its folder. Listing the
// namespaces with their sizes is open, as stats is; every other op reads
// or writes keys and values, which may be secrets, and needs what
// install and reload need: the token, or a caller the embedded broker's
// ACL grants `admin`. Each write is one commit of the store, audited as
// an admin event; refusals for the token are audited as for the other
// ops.
const (
	OpStateNamespaces = "state-namespaces" // the namespaces with their keys and bytes (StateNamespaces), open
	OpStateList       = "state-list"       // a page of a namespace's keys (StateListRequest, StatePage), needs the token
	OpStateGet        = "state-get"        // a key's value and version (StateKeyRequest, StateItem), needs the token
	OpStateSet        = "state-set"        // set a key (StateSetRequest, StateSetResult), needs the token
	OpStateDelete     = "state-delete"     // delete a key (StateKeyRequest, StateDeleteResult), needs the token
	// OpStateImport sets a batch of keys in one commit, all or none
	// (StateImportRequest, StateImported); needs the token.
	OpStateImport = "state-import"
)

// Bounds of the state ops: a page of StateListRequest holds at most
// MaxStatePage keys and, with values, MaxStatePageBytes of keys and
// values (always one key at least). An import's batch is bounded by the
// store's commit bounds (state.DefaultMaxCommitOps writes,
// state.DefaultMaxCommitBytes bytes) and the request's size.
const (
	MaxStatePage      = 1000
	MaxStatePageBytes = 1 << 20
)

// The namespaces as the state ops name them: a plugin's own,
// plugin/NAME, a shared one an operator file grants, shared/NAME, and
// the protocol's, aio (CheckNamespace).
var (
	pluginNamespace = state.PluginNamespace("")
	sharedNamespace = state.SharedNamespace("")
)

// CheckNamespace checks a namespace's name as the state ops take it:
// plugin/NAME (NAME a plugin's name), shared/NAME (NAME a shared
// namespace's, wasm.CheckSharedName), or aio (state.ProtocolNamespace:
// the keys of the Azure IoT Operations state store protocol that are
// neither a plugin's nor a shared namespace's). It returns the plugin's
// name for a plugin's namespace, "" for the others.
func CheckNamespace(ns string) (plugin string, err error) {
	if ns == state.ProtocolNamespace {
		return "", nil
	}
	if name, ok := strings.CutPrefix(ns, pluginNamespace); ok {
		if err := plugins.CheckName(name); err != nil {
			return "", fmt.Errorf("namespace %q: %w", ns, err)
		}
		return name, nil
	}
	if name, ok := strings.CutPrefix(ns, sharedNamespace); ok {
		if err := wasm.CheckSharedName(name); err != nil {
			return "", fmt.Errorf("namespace %q: %w", ns, err)
		}
		return "", nil
	}
	return "", fmt.Errorf("namespace %q is none of the forms the state store has: a plugin's, %sNAME, a shared one an operator file grants, %sNAME, or the Azure IoT Operations protocol's own keys, %s",
		cut(ns, 128), pluginNamespace, sharedNamespace, state.ProtocolNamespace)
}

// cut cuts s to n bytes for an error, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// StateKey is a key as the state ops carry it: Key when it is valid
// UTF-8 text, else KeyBase64 (JSON's base64).
type StateKey struct {
	Key       string `json:"key,omitempty"`
	KeyBase64 []byte `json:"keyBase64,omitempty"`
}

// KeyOf is the StateKey of k.
func KeyOf(k []byte) StateKey {
	if utf8.Valid(k) {
		return StateKey{Key: string(k)}
	}
	return StateKey{KeyBase64: k}
}

// Bytes is the key: one of Key and KeyBase64, not empty.
func (k StateKey) Bytes() ([]byte, error) {
	switch {
	case k.Key != "" && k.KeyBase64 != nil:
		return nil, errors.New(`a key is "key" (text) or "keyBase64", not both`)
	case k.Key != "":
		return []byte(k.Key), nil
	case len(k.KeyBase64) > 0:
		return k.KeyBase64, nil
	}
	return nil, errors.New(`no key: give "key" (text) or "keyBase64"`)
}

// StateValue is a value as the state ops carry it: Value when it is
// valid UTF-8 text, else ValueBase64.
type StateValue struct {
	Value       *string `json:"value,omitempty"`
	ValueBase64 []byte  `json:"valueBase64,omitempty"`
}

// ValueOf is the StateValue of v.
func ValueOf(v []byte) StateValue {
	if utf8.Valid(v) {
		s := string(v)
		return StateValue{Value: &s}
	}
	return StateValue{ValueBase64: v}
}

// Bytes is the value: one of Value and ValueBase64.
func (v StateValue) Bytes() ([]byte, error) {
	switch {
	case v.Value != nil && v.ValueBase64 != nil:
		return nil, errors.New(`a value is "value" (text) or "valueBase64", not both`)
	case v.Value != nil:
		return []byte(*v.Value), nil
	case v.ValueBase64 != nil:
		return v.ValueBase64, nil
	}
	return nil, errors.New(`no value: give "value" (text) or "valueBase64"`)
}

// StateItem is a key of a namespace: what get answers, a list's page
// holds and `cmdhost state export` writes a line of.
type StateItem struct {
	StateKey
	// StateValue is the value; none in a list's page without values.
	StateValue
	// ValueBytes is the value's size (a list's page without values).
	ValueBytes int `json:"valueBytes,omitempty"`
	// Version is the key's version (state.Item.Version); an import
	// ignores it: the store gives each write its own.
	Version uint64 `json:"version,omitempty"`
	// Expires is when the key goes; zero: never. An import sets the key
	// to expire then, and leaves out a key already expired.
	Expires time.Time `json:"expires,omitzero"`
}

// NewStateItem is the StateItem of it, with its value or only its size.
func NewStateItem(it state.Item, value bool) StateItem {
	out := StateItem{StateKey: KeyOf(it.Key), Version: it.Version, Expires: it.Expires}
	if value {
		out.StateValue = ValueOf(it.Value)
	} else {
		out.ValueBytes = len(it.Value)
	}
	return out
}

// StateKeyRequest is the payload of get and delete.
type StateKeyRequest struct {
	Namespace string `json:"namespace"`
	StateKey
	// IfVersion, when not 0, is the version the key must have for a
	// delete to apply.
	IfVersion uint64 `json:"ifVersion,omitempty"`
}

// StateSetRequest is the payload of set.
type StateSetRequest struct {
	Namespace string `json:"namespace"`
	StateKey
	StateValue
	// TTL is a Go duration: the key expires this long after the commit;
	// "": never.
	TTL       string `json:"ttl,omitempty"`
	IfAbsent  bool   `json:"ifAbsent,omitempty"`
	IfVersion uint64 `json:"ifVersion,omitempty"`
}

// StateSetResult answers set: the key's new version.
type StateSetResult struct {
	Version uint64 `json:"version"`
}

// StateDeleteResult answers delete: whether the key existed.
type StateDeleteResult struct {
	Existed bool `json:"existed"`
}

// StateListRequest is the payload of list: the keys of Namespace that
// start with Prefix, in byte order, after After (none: from the first),
// at most Limit of them (0: MaxStatePage), with their values when
// Values.
type StateListRequest struct {
	Namespace string    `json:"namespace"`
	Prefix    string    `json:"prefix,omitempty"`
	After     *StateKey `json:"after,omitempty"`
	Limit     int       `json:"limit,omitempty"`
	Values    bool      `json:"values,omitempty"`
}

// StatePage answers list: its keys, and whether more follow (list again
// after the last).
type StatePage struct {
	Items []StateItem `json:"items"`
	More  bool        `json:"more"`
}

// StateImportRequest is the payload of import: keys to set in one
// commit (their versions ignored).
type StateImportRequest struct {
	Namespace string      `json:"namespace"`
	Items     []StateItem `json:"items"`
}

// StateImported answers import: the keys set, and those left out for
// having expired already.
type StateImported struct {
	Keys    int `json:"keys"`
	Expired int `json:"expired,omitempty"`
}

// StateNamespaces answers state-namespaces: every namespace that holds
// keys, sorted by name, and the store's totals and bound.
type StateNamespaces struct {
	// ReplicaID is the host that answered.
	ReplicaID
	Namespaces []StateNamespace `json:"namespaces"`
	Keys       int64            `json:"keys"`
	Bytes      int64            `json:"bytes"`
	// MaxBytes is the store's bound (serve --state-max-bytes).
	MaxBytes int64 `json:"maxBytes"`
}

// StateNamespace is a namespace's size: its keys, and their bytes (keys
// plus values).
type StateNamespace struct {
	Namespace string `json:"namespace"`
	Keys      int64  `json:"keys"`
	Bytes     int64  `json:"bytes"`
}

// The statuses of the state ops besides 400 (a bad request, a bound
// passed), StatusForbidden and 503 (no state store, or one that cannot
// be read or written now).
const (
	StatusNotFound abi.Status = 404 // get: no such key
	StatusConflict abi.Status = 409 // set, delete: a condition does not hold; nothing was written
)
