package topic

import (
	"reflect"
	"strings"
	"testing"
)

func mustFilter(t *testing.T, s string) Filter {
	t.Helper()
	f, err := ParseFilter(s, true)
	if err != nil {
		t.Fatalf("ParseFilter(%q): %v", s, err)
	}
	return f
}

func TestParseFilter(t *testing.T) {
	for _, s := range []string{"sensors", "sensors/+/temp", "sensors/{device}/temp", "a/#", "a/{x}/{y}/#", "$share/g/a/+"} {
		mustFilter(t, s)
	}
	bad := map[string]string{
		"":                        "empty",
		"rpc/+/x":                 "host's",
		"cmdhost/#":               "host's",
		"clients/a":               "host's",
		"statestore/v1/#":         "host's",
		"$SYS/#":                  "host's",
		"+/temp":                  "wildcard",
		"#":                       "wildcard",
		"{site}/temp":             "wildcard",
		"a/#/b":                   "last level",
		"a/{b c}":                 "token",
		"a/{x}/{x}":               "twice",
		"a/b c":                   "not allowed",
		"$share/g":                "$share/GROUP/FILTER",
		"$share/g/rpc/#":          "host's",
		"$share/g+/a":             "share group",
		strings.Repeat("a", 1025): "longer",
	}
	for s, want := range bad {
		if _, err := ParseFilter(s, true); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFilter(%.40q): %v, want an error with %q", s, err, want)
		}
	}
	if _, err := ParseFilter("$share/g/a", false); err == nil || !strings.Contains(err.Error(), "share group") {
		t.Errorf("a module's shared filter: %v", err)
	}
}

func TestFilterSubscription(t *testing.T) {
	cases := []struct{ filter, group, want string }{
		{"sensors/{device}/temp", "", "sensors/+/temp"},
		{"sensors/{device}/#", "svc", "$share/svc/sensors/+/#"},
		{"$share/own/a/{x}", "svc", "$share/own/a/+"},
		{"$share/own/a", "", "$share/own/a"},
	}
	for _, c := range cases {
		if got := mustFilter(t, c.filter).Subscription(c.group); got != c.want {
			t.Errorf("%q with group %q: %q, want %q", c.filter, c.group, got, c.want)
		}
	}
}

func TestFilterMatch(t *testing.T) {
	cases := []struct {
		filter, topic string
		ok            bool
		tokens        map[string]string
	}{
		{"sensors/{device}/temp", "sensors/d1/temp", true, map[string]string{"device": "d1"}},
		{"sensors/{device}/temp", "sensors/d1/hum", false, nil},
		{"sensors/{device}/temp", "sensors/d1/temp/x", false, nil},
		{"sensors/{device}/temp", "sensors/d1", false, nil},
		{"sensors/+/temp", "sensors/d1/temp", true, nil},
		{"a/#", "a", true, nil},
		{"a/#", "a/b/c", true, nil},
		{"a/{x}/#", "a/1", true, map[string]string{"x": "1"}},
		{"a/{x}/#", "a/1/2/3", true, map[string]string{"x": "1"}},
		{"a/#", "b/a", false, nil},
		{"a", "a", true, nil},
		{"a", "a/b", false, nil},
		{"$share/g/a/{x}", "a/v", true, map[string]string{"x": "v"}},
	}
	for _, c := range cases {
		tokens, ok := mustFilter(t, c.filter).Match(c.topic)
		if ok != c.ok || (ok && !reflect.DeepEqual(tokens, c.tokens)) {
			t.Errorf("%q on %q: %v %v, want %v %v", c.filter, c.topic, tokens, ok, c.tokens, c.ok)
		}
	}
}

func TestFilterOverlapsAndWithin(t *testing.T) {
	overlap := []struct {
		a, b string
		want bool
	}{
		{"a/+", "a/b", true},
		{"a/#", "a", true},
		{"a/#", "b/#", false},
		{"a/{x}/c", "a/b/+", true},
		{"a/b/c", "a/b/d", false},
		{"a/b", "a/b/c", false},
		{"$share/g/a/+", "a/b", true},
		{"a/+/c/#", "a/b", false},
	}
	for _, c := range overlap {
		if got := mustFilter(t, c.a).Overlaps(mustFilter(t, c.b)); got != c.want {
			t.Errorf("%q overlaps %q: %v, want %v", c.a, c.b, got, c.want)
		}
		if got := mustFilter(t, c.b).Overlaps(mustFilter(t, c.a)); got != c.want {
			t.Errorf("%q overlaps %q: %v, want %v", c.b, c.a, got, c.want)
		}
	}
	within := []struct {
		narrow, wide string
		want         bool
	}{
		{"sensors/+/temp", "sensors/{device}/temp", true},
		{"sensors/d1/temp", "sensors/{device}/temp", true},
		{"sensors/{device}/temp", "sensors/+/temp", true},
		{"sensors/d1/temp", "sensors/#", true},
		{"sensors", "sensors/#", true},
		{"sensors/#", "sensors/+", false},
		{"sensors/+/temp", "sensors/d1/temp", false},
		{"sensors/d1", "sensors/d1/temp", false},
		{"sensors/d1/temp/x", "sensors/+/temp", false},
		{"$share/g/sensors/+/temp", "sensors/{device}/temp", true},
	}
	for _, c := range within {
		if got := mustFilter(t, c.narrow).Within(mustFilter(t, c.wide)); got != c.want {
			t.Errorf("%q within %q: %v, want %v", c.narrow, c.wide, got, c.want)
		}
	}
}
