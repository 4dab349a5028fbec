package topic

import (
	"fmt"
	"strings"
)

// A Filter is a trigger's topic filter (abi.Command.Trigger): levels that
// are literal, a {token} (any one level, whose value the handler gets),
// + (any one level) or, last, # (any levels after, none included). It may
// be shared, $share/GROUP/FILTER, when the operator file says so.
//
// A filter never reaches the host's own topics: its first level (after a
// share prefix) is a literal that is not reserved (IsReserved: rpc,
// cmdhost, clients, statestore, or one starting with $). A leading
// wildcard would subscribe to every first level, the host's included.
type Filter struct {
	text   string
	share  string   // the share group of a $share/GROUP/… filter; "" when none
	levels []string // after the share prefix; a token as "{name}"
}

// MaxFilterBytes bounds a filter, share prefix included.
const MaxFilterBytes = 1024

// shareLevel is the first level of a shared subscription.
const shareLevel = "$share"

// ParseFilter parses a trigger's filter; shareOK allows a $share/GROUP/
// prefix. Errors name the fix.
func ParseFilter(s string, shareOK bool) (Filter, error) {
	f := Filter{text: s}
	if s == "" {
		return f, fmt.Errorf("an empty topic filter")
	}
	if len(s) > MaxFilterBytes {
		return f, fmt.Errorf("topic filter %.32q…: longer than %d bytes", s, MaxFilterBytes)
	}
	levels := strings.Split(s, "/")
	if levels[0] == shareLevel {
		if !shareOK {
			return f, fmt.Errorf("topic filter %q: a module does not choose a share group; the operator file's \"topic\" may, or serve --share for every trigger", s)
		}
		if len(levels) < 3 {
			return f, fmt.Errorf("topic filter %q: a shared filter is $share/GROUP/FILTER", s)
		}
		if err := checkLiteral(levels[1], false); err != nil {
			return f, fmt.Errorf("topic filter %q: share group %q: %w", s, levels[1], err)
		}
		f.share, levels = levels[1], levels[2:]
	}
	seen := map[string]bool{}
	for i, l := range levels {
		switch {
		case l == "+":
		case l == "#":
			if i != len(levels)-1 {
				return f, fmt.Errorf("topic filter %q: # must be the last level", s)
			}
		case strings.HasPrefix(l, "{") && strings.HasSuffix(l, "}"):
			name := l[1 : len(l)-1]
			if !validTokenName(name) {
				return f, fmt.Errorf("topic filter %q: token %q: names are letters, digits, ':', '_' or '-'", s, l)
			}
			if seen[name] {
				return f, fmt.Errorf("topic filter %q: token %q appears twice: give each level its own name", s, l)
			}
			seen[name] = true
		default:
			if err := checkLiteral(l, false); err != nil {
				return f, fmt.Errorf("topic filter %q: level %q: %w", s, l, err)
			}
		}
	}
	switch first := levels[0]; {
	case first == "+" || first == "#" || strings.HasPrefix(first, "{"):
		return f, fmt.Errorf("topic filter %q starts with a wildcard, which would reach the host's own topics: start with a literal level, e.g. sensors/+/temp", s)
	case IsReserved(first):
		return f, fmt.Errorf("topic filter %q: topics under %s/ are the host's (its requests, admin ops, replies, the state store or the broker's), never a trigger's", s, first)
	}
	f.levels = levels
	return f, nil
}

// String is the filter as written.
func (f Filter) String() string { return f.text }

// Share is the share group the filter names; "" when none.
func (f Filter) Share() string { return f.share }

// Subscription is the filter the host subscribes: its tokens as +, under
// $share/GROUP/ when it names a group, else when group (serve --share) is
// not "".
func (f Filter) Subscription(group string) string {
	parts := make([]string, len(f.levels))
	for i, l := range f.levels {
		if strings.HasPrefix(l, "{") {
			l = "+"
		}
		parts[i] = l
	}
	sub := strings.Join(parts, "/")
	if f.share != "" {
		group = f.share
	}
	if group != "" {
		sub = shareLevel + "/" + group + "/" + sub
	}
	return sub
}

// Match reports whether topic, a topic name, matches the filter, and
// returns the values of its tokens (nil when it has none).
func (f Filter) Match(topic string) (map[string]string, bool) {
	var tokens map[string]string
	for i, l := range f.levels {
		if l == "#" {
			return tokens, true
		}
		level, rest, more := strings.Cut(topic, "/")
		switch {
		case l == "+":
		case strings.HasPrefix(l, "{"):
			if tokens == nil {
				tokens = make(map[string]string)
			}
			tokens[l[1:len(l)-1]] = level
		case l != level:
			return nil, false
		}
		if !more {
			// The topic ends here: so must the filter, or go on with # (a/#
			// matches a).
			last := i == len(f.levels)-1 || (i == len(f.levels)-2 && f.levels[i+1] == "#")
			return tokens, last
		}
		topic = rest
	}
	return nil, false
}

// wild reports whether a level matches any one level.
func wild(l string) bool { return l == "+" || strings.HasPrefix(l, "{") }

// Overlaps reports whether some topic matches both filters (their share
// groups aside): a broker would deliver it once for each.
func (f Filter) Overlaps(g Filter) bool {
	a, b := f.levels, g.levels
	for i := 0; ; i++ {
		switch {
		case i == len(a) && i == len(b):
			return true
		case i == len(a):
			return b[i] == "#"
		case i == len(b):
			return a[i] == "#"
		case a[i] == "#" || b[i] == "#":
			return true
		case wild(a[i]) || wild(b[i]) || a[i] == b[i]:
		default:
			return false
		}
	}
}

// Within reports whether every topic f matches, g matches too: an
// operator's filter narrows a module's declared one.
func (f Filter) Within(g Filter) bool {
	n, w := f.levels, g.levels
	for i := 0; ; i++ {
		switch {
		case i < len(w) && w[i] == "#":
			return true
		case i == len(n):
			return i == len(w)
		case i == len(w) || n[i] == "#":
			return false
		case wild(w[i]):
		case wild(n[i]) || n[i] != w[i]:
			return false
		}
	}
}
