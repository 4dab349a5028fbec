package rpc

import "testing"

// Response topics: a valid MQTT topic name without wildcards, and without
// the empty levels MQTT would allow (PROTOCOL.md "Topics": invalid → no
// response).
func TestValidTopicName(t *testing.T) {
	for s, want := range map[string]bool{
		"response/mock/test":      true,
		"clients/inv-1/rpc/resp":  true,
		"dtmi:test:MyModel;1/x":   true,
		"":                        false,
		"resp/+/x":                false,
		"resp/#":                  false,
		"//invalid":               false,
		"/leading":                false,
		"trailing/":               false,
		"a//b":                    false,
		"nul\x00":                 false,
		string([]byte{0xff, 'a'}): false,
	} {
		if got := validTopicName(s); got != want {
			t.Errorf("validTopicName(%q) = %t, want %t", s, got, want)
		}
	}
}
