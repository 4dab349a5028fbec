package rpc

import "testing"

func TestMatchFilterLevels(t *testing.T) {
	for _, c := range []struct {
		filter, topic string
		want          bool
	}{
		{"a/+", "a/b", true}, {"a/+", "a/b/c", false}, {"a/+/c", "a/b/c", true}, {"a/+/c", "a/b/d", false},
		{"+", "a", true}, {"+", "a/b", false}, {"a/b", "a/b", true}, {"a/b", "a", false}, {"+/+", "/", true},
		{"a/+", "a/", true}, {"a//b", "a//b", true}, {"a/+/b", "a//b", true}, {"", "", true}, {"", "a", false},
	} {
		if got := matchFilter(c.filter, c.topic); got != c.want {
			t.Errorf("matchFilter(%q, %q) = %v, want %v", c.filter, c.topic, got, c.want)
		}
	}
}
