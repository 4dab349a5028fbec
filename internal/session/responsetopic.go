package session

import (
	"fmt"
	"strings"

	"github.com/cmdhost/cmdhost/internal/topic"
)

// ResponseTopicProblem says why a client may not publish a reply to s,
// or returns "" when it may. A request names the topic its reply goes
// to, and the reply, at QoS 1, holds one slot of the broker's Receive
// Maximum until the broker acks it; to a topic an ordinary client may
// not publish to, a broker answers with an error, drops the client, or
// (mochi, for `$SYS/…`) drops the PUBLISH silently and never acks it.
func ResponseTopicProblem(s string) string {
	switch {
	case s == "":
		return "the request has no response topic"
	case len(s) > MaxString:
		return fmt.Sprintf("the response topic is %d bytes, more than MQTT's %d", len(s), MaxString)
	case strings.HasPrefix(s, "$"):
		return "the response topic starts with $, which names the broker's own topics: a client may not publish there"
	case strings.ContainsAny(s, "+#"):
		return "the response topic holds a wildcard (+ or #): only a topic filter may"
	case !topic.ValidName(s):
		return "the response topic is not a valid topic name (NUL, an empty level, or not UTF-8)"
	}
	if p := WireProblem(s); p != "" {
		return "the response topic cannot be sent: " + p
	}
	return ""
}
