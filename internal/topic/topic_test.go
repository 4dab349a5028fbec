package topic

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
		if got := ValidName(s); got != want {
			t.Errorf("ValidName(%q) = %t, want %t", s, got, want)
		}
	}
}

// Two patterns overlap when some topic matches both: unresolved tokens
// match any level, and the shared token stands for one value in both.
func TestTopicOverlaps(t *testing.T) {
	for _, c := range []struct {
		p, q string
		want bool
	}{
		{"rpc/{executorId}/echo", "rpc/{executorId}/echo", true},
		{"rpc/{executorId}/echo", "rpc/{executorId}/other", false},
		{"rpc/{executorId}/echo", "rpc/{executorId}/{op}", true},
		{"rpc/{executorId}/echo", "rpc/{executorId}/echo/x", false},
		{"{a}/{b}/{c}/{d}", "cmdhost/{executorId}/admin/list", true},
		{"rpc/{executorId}/x/{k}", "rpc/{executorId}/{k}/y", true},
		{"rpc/{executorId}/echo", "rpc/host-1/echo", true},              // the executor may be host-1
		{"rpc/{executorId}/a/x", "rpc/b/{executorId}/x", false},         // it cannot be both a and b
		{"rpc/{executorId}/b/x", "rpc/b/{executorId}/x", true},          // it can be b
		{"rpc/{executorId}/{executorId}", "rpc/a/b", false},             // one value throughout
		{"rpc/{executorId}/{other}", "rpc/a/b", true},                   // other tokens are free
		{"svc/{executorId}/{executorId}", "svc/{executorId}/{k}", true}, // shared against free
		{"svc/{executorId}/thermostat/set", "svc/{executorId}/{c}/{d}", true},
	} {
		p, err := Parse("", c.p, nil)
		if err != nil {
			t.Fatal(err)
		}
		q, err := Parse("", c.q, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Overlaps(q, "executorId"); got != c.want {
			t.Errorf("%s overlaps %s: %t, want %t", c.p, c.q, got, c.want)
		}
		if got := q.Overlaps(p, "executorId"); got != c.want {
			t.Errorf("%s overlaps %s: %t, want %t", c.q, c.p, got, c.want)
		}
	}
	// Without a shared token, every token is free.
	p, _ := Parse("", "rpc/{executorId}/a/x", nil)
	q, _ := Parse("", "rpc/b/{executorId}/x", nil)
	if !p.Overlaps(q, "") {
		t.Error("with no shared token, rpc/{executorId}/a/x and rpc/b/{executorId}/x overlap")
	}
}

// String shows resolved tokens as literals and the others as {token}.
func TestPatternString(t *testing.T) {
	p, err := Parse("ns", "rpc/{executorId}/{commandName}/{x}", map[string]string{"commandName": "echo"})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.String(); got != "ns/rpc/{executorId}/echo/{x}" {
		t.Fatalf("String() = %q", got)
	}
}
