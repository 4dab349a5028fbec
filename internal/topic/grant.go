package topic

import (
	"fmt"
	"strings"
)

// A Grant is a topic filter an operator grants a plugin to publish to:
// levels that are literal, a {token} (the value the request being handled
// gives it: {executorId}, {commandName}, {callerClientId}, {callerUser},
// or a token of the request's topic), + (any one level) or, last, # (any
// levels after). A topic is granted when one of a plugin's grants matches
// it with the tokens' values.
//
// The host's own topics are never granted, whatever a grant says: a topic
// whose first level is one of reserved, or starts with $, is refused (the
// requests and admin ops of every host, every client's replies, the state
// store protocol, the broker's own).
type Grant struct {
	text   string
	levels []string
}

// reserved are the first levels of the topics a plugin never publishes
// to.
var reserved = []string{"rpc", "cmdhost", "clients", "statestore"}

// ParseGrant parses a grant. Errors name the fix.
func ParseGrant(s string) (Grant, error) {
	if s == "" {
		return Grant{}, fmt.Errorf("an empty topic")
	}
	levels := strings.Split(s, "/")
	for i, l := range levels {
		switch {
		case l == "+":
		case l == "#":
			if i != len(levels)-1 {
				return Grant{}, fmt.Errorf("topic %q: # must be the last level", s)
			}
		case strings.HasPrefix(l, "{") && strings.HasSuffix(l, "}"):
			if !validTokenName(l[1 : len(l)-1]) {
				return Grant{}, fmt.Errorf("topic %q: token %q: names are letters, digits, ':', '_' or '-'", s, l)
			}
		default:
			if err := checkLiteral(l, false); err != nil {
				return Grant{}, fmt.Errorf("topic %q: level %q: %w", s, l, err)
			}
		}
	}
	if first := levels[0]; IsReserved(first) {
		return Grant{}, fmt.Errorf("topic %q: topics under %s/ are the host's (its requests, admin ops, replies or the state store), never a plugin's", s, first)
	}
	return Grant{text: s, levels: levels}, nil
}

// IsReserved reports whether a first level is one of the host's.
func IsReserved(first string) bool {
	if strings.HasPrefix(first, "$") {
		return true
	}
	for _, r := range reserved {
		if first == r {
			return true
		}
	}
	return false
}

// String is the grant as written.
func (g Grant) String() string { return g.text }

// Allows reports whether g grants topic, a topic name, with tokens'
// values. A token without a value (or an empty one) matches nothing; a
// reserved topic is never granted.
func (g Grant) Allows(topic string, tokens func(name string) string) bool {
	first, _, _ := strings.Cut(topic, "/")
	if IsReserved(first) {
		return false
	}
	for i, l := range g.levels {
		if l == "#" {
			return true
		}
		var level string
		var more bool
		level, topic, more = strings.Cut(topic, "/")
		switch {
		case l == "+":
		case strings.HasPrefix(l, "{"):
			if v := tokens(l[1 : len(l)-1]); v == "" || v != level {
				return false
			}
		case l != level:
			return false
		}
		if !more {
			return i == len(g.levels)-1 || (i == len(g.levels)-2 && g.levels[i+1] == "#")
		}
	}
	return false
}
