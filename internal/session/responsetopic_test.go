package session

import (
	"strings"
	"testing"
)

func TestResponseTopicProblem(t *testing.T) {
	for _, ok := range []string{"resp/a", "a", "a/b/c", "r$/x", "x/$SYS"} {
		if p := ResponseTopicProblem(ok); p != "" {
			t.Errorf("%q refused: %s", ok, p)
		}
	}
	long := strings.Repeat("a", MaxString+1)
	for topic, want := range map[string]string{
		"": "no response topic", "$SYS/x": "starts with $", "a/+": "wildcard", "#": "wildcard",
		"a//b": "not a valid topic name", "\xff": "not a valid topic name", long: "more than MQTT's",
		"a\u0085b": "cannot be sent",
	} {
		if p := ResponseTopicProblem(topic); !strings.Contains(p, want) {
			t.Errorf("%.20q: %q, want it to say %q", topic, p, want)
		}
	}
}
