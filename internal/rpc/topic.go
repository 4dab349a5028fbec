package rpc

import "github.com/cmdhost/cmdhost/internal/topic"

// DefaultTopic is the request topic pattern of a command that names none.
const DefaultTopic = topic.Default

// TopicPattern is a parsed request topic pattern (package topic).
type TopicPattern = topic.Pattern

// ParseTopic parses pattern, replaces the tokens in replacements and
// prefixes namespace (which may hold several levels). Errors name the
// offending part.
func ParseTopic(namespace, pattern string, replacements map[string]string) (TopicPattern, error) {
	return topic.Parse(namespace, pattern, replacements)
}

// validTopicName reports whether s is a topic name a response or a
// telemetry message can be published to.
func validTopicName(s string) bool { return topic.ValidName(s) }
