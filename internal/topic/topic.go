// Package topic parses MQTT request topic patterns: levels that are
// literal or a {token}. It is shared by the executor (internal/rpc), which
// subscribes patterns and matches request topics against them, and the
// plugins manager, which checks the host's topic rules and refuses
// overlapping patterns before anything is subscribed; neither imports the
// other.
package topic

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Default is the request topic pattern of a command that names none.
const Default = "rpc/{executorId}/{commandName}"

// Pattern is a parsed request topic pattern: levels that are literal
// or a {token}. Tokens with a replacement become literals; the others
// subscribe as "+" and their values are recovered from each request topic.
type Pattern struct {
	levels []level
}

type level struct {
	literal string // when token == ""
	token   string
}

// Parse parses pattern, replaces the tokens in replacements and
// prefixes namespace (which may hold several levels). Errors name the
// offending part.
func Parse(namespace, pattern string, replacements map[string]string) (Pattern, error) {
	var p Pattern
	if namespace != "" {
		if err := checkLiteral(namespace, true); err != nil {
			return p, fmt.Errorf("topic namespace %q: %w", namespace, err)
		}
		for _, l := range strings.Split(namespace, "/") {
			p.levels = append(p.levels, level{literal: l})
		}
	}
	if pattern == "" {
		return p, fmt.Errorf("empty request topic pattern")
	}
	for _, l := range strings.Split(pattern, "/") {
		if strings.HasPrefix(l, "{") && strings.HasSuffix(l, "}") {
			name := l[1 : len(l)-1]
			if !validTokenName(name) {
				return p, fmt.Errorf("topic pattern %q: token %q: names are letters, digits, ':', '_' or '-'", pattern, l)
			}
			if v, ok := replacements[name]; ok {
				if err := checkLiteral(v, false); err != nil {
					return p, fmt.Errorf("topic token %s: replacement %q: %w", name, v, err)
				}
				p.levels = append(p.levels, level{literal: v})
				continue
			}
			p.levels = append(p.levels, level{token: name})
			continue
		}
		if err := checkLiteral(l, false); err != nil {
			return p, fmt.Errorf("topic pattern %q: level %q: %w", pattern, l, err)
		}
		p.levels = append(p.levels, level{literal: l})
	}
	return p, nil
}

func validTokenName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == ':' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

// CheckLevel says why s cannot be one level of a topic (an executor id,
// a command name), or nil when it can: what checkLiteral accepts.
func CheckLevel(s string) error { return checkLiteral(s, false) }

// checkLiteral accepts printable ASCII without space, '+', '#', '{' or
// '}'; '/' only when multiLevel, and never an empty level.
func checkLiteral(s string, multiLevel bool) error {
	if s == "" {
		return fmt.Errorf("empty")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '/' && multiLevel:
			if i == 0 || i == len(s)-1 || s[i-1] == '/' {
				return fmt.Errorf("empty topic level")
			}
		case c <= ' ' || c > '~' || strings.IndexByte("+#{}/", c) >= 0:
			return fmt.Errorf("%q is not allowed in a topic level (printable ASCII without space, '+', '#', '{', '}' or '/')", c)
		}
	}
	return nil
}

// Filter is the subscription filter: unresolved tokens become "+".
func (p Pattern) Filter() string {
	parts := make([]string, len(p.levels))
	for i, l := range p.levels {
		if l.token != "" {
			parts[i] = "+"
		} else {
			parts[i] = l.literal
		}
	}
	return strings.Join(parts, "/")
}

// String is the pattern with its resolved tokens as literals and the
// others as {token}, e.g. rpc/{executorId}/echo.
func (p Pattern) String() string {
	parts := make([]string, len(p.levels))
	for i, l := range p.levels {
		if l.token != "" {
			parts[i] = "{" + l.token + "}"
		} else {
			parts[i] = l.literal
		}
	}
	return strings.Join(parts, "/")
}

// Overlaps reports whether some topic matches both p and q: they have as
// many levels and, level by level, the same literal or an unresolved token
// on either side. An unresolved token matches any level, except the one
// named shared (if any): it stands for one value, the same in both
// patterns and at every level, so that rpc/{executorId}/a/x and
// rpc/b/{executorId}/x do not overlap (the executor id cannot be both a
// and b) while rpc/{executorId}/echo and rpc/host-1/echo do. Two patterns
// compared with shared "executorId" overlap when they can overlap on some
// executor, whatever its id.
func (p Pattern) Overlaps(q Pattern, shared string) bool {
	if len(p.levels) != len(q.levels) {
		return false
	}
	var value string // shared's value, once a literal faces it
	bound := false
	bind := func(v string) bool {
		if bound {
			return v == value
		}
		value, bound = v, true
		return true
	}
	for i, a := range p.levels {
		b := q.levels[i]
		switch {
		case a.token == "" && b.token == "":
			if a.literal != b.literal {
				return false
			}
		case shared != "" && a.token == shared && b.token == "":
			if !bind(b.literal) {
				return false
			}
		case shared != "" && b.token == shared && a.token == "":
			if !bind(a.literal) {
				return false
			}
		}
		// Otherwise a free token faces anything, or the shared token
		// faces a token: some value fits both.
	}
	return true
}

// Match reports whether topic fits the pattern and returns the values of
// its unresolved tokens (nil when there are none).
func (p Pattern) Match(topic string) (map[string]string, bool) {
	var tokens map[string]string
	for i, l := range p.levels {
		var level string
		if i == len(p.levels)-1 {
			level = topic
			if strings.IndexByte(level, '/') >= 0 {
				return nil, false
			}
		} else {
			var ok bool
			level, topic, ok = strings.Cut(topic, "/")
			if !ok {
				return nil, false
			}
		}
		if l.token == "" {
			if level != l.literal {
				return nil, false
			}
			continue
		}
		if level == "" {
			return nil, false
		}
		if tokens == nil {
			tokens = make(map[string]string)
		}
		tokens[l.token] = level
	}
	return tokens, true
}

// ValidName reports whether s may be published to: a non-empty UTF-8
// topic name without wildcards (MQTT v5 §4.7) and without empty levels.
// MQTT allows empty levels, but the RPC protocol's topics are made of
// non-empty labels, so an executor sends nothing to a response topic such
// as "//invalid", as the other SDKs' executors do.
func ValidName(s string) bool {
	return s != "" && !strings.ContainsAny(s, "+#\x00") && utf8.ValidString(s) &&
		!strings.HasPrefix(s, "/") && !strings.HasSuffix(s, "/") && !strings.Contains(s, "//")
}
