package state

import (
	"errors"
	"testing"
)

// The protocol's flat keys map onto namespaces and back: plugin/NAME/KEY
// and shared/NAME/KEY to those namespaces, anything else to "aio" as it
// is; a key that starts like a namespace's but names none is refused.
func TestProtocolKey(t *testing.T) {
	for _, c := range []struct {
		key, ns, k string
	}{
		{"plugin/kit-go/counter", "plugin/kit-go", "counter"},
		{"plugin/kit-go/a/b", "plugin/kit-go", "a/b"},
		{"shared/devices/d1", "shared/devices", "d1"},
		{"SOMEKEY", ProtocolNamespace, "SOMEKEY"},
		{"plugins/x/y", ProtocolNamespace, "plugins/x/y"},
		{"a\x00b\r\n", ProtocolNamespace, "a\x00b\r\n"},
		{"Plugin/x/y", ProtocolNamespace, "Plugin/x/y"},
	} {
		ns, k, err := ProtocolKey([]byte(c.key))
		if err != nil || ns != c.ns || string(k) != c.k {
			t.Errorf("ProtocolKey(%q) = %q, %q, %v; want %q, %q", c.key, ns, k, err, c.ns, c.k)
			continue
		}
		back, ok := ProtocolKeyOf(ns, k)
		if !ok || string(back) != c.key {
			t.Errorf("ProtocolKeyOf(%q, %q) = %q, %v; want %q", ns, k, back, ok, c.key)
		}
	}
	for _, key := range []string{"plugin/", "plugin/x", "plugin//k", "plugin/x/", "shared/", "shared/d", "shared/d/", "plugin/a\x00b/k"} {
		if ns, k, err := ProtocolKey([]byte(key)); !errors.Is(err, ErrInvalid) {
			t.Errorf("ProtocolKey(%q) = %q, %q, %v; want ErrInvalid", key, ns, k, err)
		}
	}
	for _, ns := range []string{"plugin/", "shared/", "plugin/a/b", "other"} {
		if k, ok := ProtocolKeyOf(ns, []byte("k")); ok {
			t.Errorf("ProtocolKeyOf(%q) = %q: the protocol sees no such namespace", ns, k)
		}
	}
}
