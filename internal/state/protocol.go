package state

import (
	"bytes"
	"fmt"
	"strings"
)

// The Azure IoT Operations state store protocol (package statestore)
// has one flat key space; the store has namespaces. The protocol's keys
// map onto them so that an application of an Azure SDK and a plugin
// share keys:
//
//	plugin/NAME/KEY   key KEY of plugin NAME's namespace (PluginNamespace)
//	shared/NAME/KEY   key KEY of the shared namespace NAME (SharedNamespace)
//	anything else     that key, as it is, in the namespace ProtocolNamespace
//
// NAME is what lies between the prefix and the next '/'; KEY is the rest,
// any bytes. A key that starts with plugin/ or shared/ but names no
// namespace and key (plugin/NAME without a '/' after NAME, an empty NAME
// or KEY, a NAME with a NUL) is refused (ErrInvalid): read as a key of
// ProtocolNamespace it would seem to be a plugin's while no plugin sees it.

// ProtocolNamespace is the namespace of the protocol's keys that name no
// plugin's or shared namespace.
const ProtocolNamespace = "aio"

// ProtocolKey maps a key of the protocol's key space to a namespace and a
// key in it (see above). The key returned shares key's bytes.
func ProtocolKey(key []byte) (ns string, k []byte, err error) {
	for _, prefix := range [...]string{pluginPrefix, sharedPrefix} {
		rest, ok := bytes.CutPrefix(key, []byte(prefix))
		if !ok {
			continue
		}
		name, k, ok := bytes.Cut(rest, []byte{'/'})
		if !ok || len(name) == 0 || len(k) == 0 {
			return "", nil, fmt.Errorf("%w: key %s starts with %s but names no namespace and key: write %sNAME/KEY", ErrInvalid, quoteKey(key), prefix, prefix)
		}
		ns = prefix + string(name)
		if err := CheckNamespace(ns); err != nil {
			return "", nil, fmt.Errorf("key %s: %w", quoteKey(key), err)
		}
		return ns, k, nil
	}
	return ProtocolNamespace, key, nil
}

// ProtocolKeyOf is the protocol's key of key k in namespace ns, the
// inverse of ProtocolKey; false for a namespace the protocol does not
// see (a name with a '/' in it: no plugin or shared namespace has one).
func ProtocolKeyOf(ns string, k []byte) ([]byte, bool) {
	if ns == ProtocolNamespace {
		return k, true
	}
	for _, prefix := range [...]string{pluginPrefix, sharedPrefix} {
		if name, ok := strings.CutPrefix(ns, prefix); ok && name != "" && !strings.Contains(name, "/") {
			out := make([]byte, 0, len(ns)+1+len(k))
			return append(append(append(out, ns...), '/'), k...), true
		}
	}
	return nil, false
}
