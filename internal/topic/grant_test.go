package topic

import (
	"strings"
	"testing"
)

func TestGrant(t *testing.T) {
	tokens := func(name string) string {
		return map[string]string{"executorId": "edge-1", "commandName": "set", "device": "d7"}[name]
	}
	for _, c := range []struct {
		grant, topic string
		ok           bool
	}{
		{"devices/{executorId}/events", "devices/edge-1/events", true},
		{"devices/{executorId}/events", "devices/edge-2/events", false},
		{"devices/{device}/+", "devices/d7/alarm", true},
		{"devices/{device}/+", "devices/d7/alarm/x", false},
		{"devices/{missing}/x", "devices//x", false},
		{"alarms/#", "alarms", true},
		{"alarms/#", "alarms/a/b/c", true},
		{"alarms/#", "alarmsx", false},
		{"a/b", "a", false},
		{"a", "a/b", false},
		{"+/events", "rpc/events", false}, // the host's, whatever the grant
		{"+/events", "$SYS/events", false},
		{"+/events", "x/events", true},
	} {
		g, err := ParseGrant(c.grant)
		if err != nil {
			t.Fatalf("%s: %v", c.grant, err)
		}
		if got := g.Allows(c.topic, tokens); got != c.ok {
			t.Errorf("grant %s, topic %s: %v, want %v", c.grant, c.topic, got, c.ok)
		}
	}
	for grant, want := range map[string]string{
		"":             "an empty topic",
		"a/#/b":        "# must be the last level",
		"rpc/x/y":      "topics under rpc/ are the host's",
		"clients/#":    "topics under clients/",
		"$SYS/x":       "topics under $SYS/",
		"a/{b c}":      "names are letters",
		"a/b+c":        "level",
		"statestore/#": "topics under statestore/",
	} {
		if _, err := ParseGrant(grant); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", grant, err, want)
		}
	}
}
