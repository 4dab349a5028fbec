package plugins

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/cmdhost/cmdhost/abi"
)

// Who may call a plugin's commands, and how often (the operator file's
// "allow" and "quota", per plugin and per command; docs/plugins.md). Both
// judge a request by its verified caller (abi.Caller): the identity the
// host knows from a source no client controls (docs/security.md), never
// what the request says of itself.

// Callers is an "allow" list: who may call a command.
type Callers struct {
	entries []callerEntry
}

// callerEntry is one "allow" entry: a user name or client id pattern, in
// which * stands for any run of characters.
type callerEntry struct {
	text   string // as written
	client bool   // a client id (client:ID), else a user name
	glob   string // the pattern after its prefix
}

// Allows reports whether c is one of the callers. A caller the host did
// not verify is never one: an "allow" list admits verified callers only.
func (cs *Callers) Allows(c abi.Caller) bool {
	if cs == nil || !c.Verified() {
		return false
	}
	for _, e := range cs.entries {
		switch {
		case e.client && c.ClientID != "" && globMatch(e.glob, c.ClientID):
			return true
		case !e.client && c.User != "" && globMatch(e.glob, c.User):
			return true
		case e.text == "*":
			return true
		}
	}
	return false
}

// String is the list as written, comma-separated.
func (cs *Callers) String() string {
	if cs == nil {
		return "anyone"
	}
	if len(cs.entries) == 0 {
		return "nobody"
	}
	out := make([]string, len(cs.entries))
	for i, e := range cs.entries {
		out[i] = e.text
	}
	return strings.Join(out, ", ")
}

// globMatch reports whether s matches pattern, in which * stands for any
// run of characters (none included) and every other character for
// itself.
func globMatch(pattern, s string) bool {
	// The classic greedy match with one backtrack point: linear in
	// practice, never exponential.
	p, i, star, mark := 0, 0, -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p, mark = star+1, mark+1
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// maxCallerEntry bounds an "allow" entry: user names and client ids are
// MQTT strings, but no operator means one of kilobytes.
const maxCallerEntry = 256

// callers reads an "allow" list.
func (p *opParser) callers(raw json.RawMessage, at string) (*Callers, error) {
	var items []json.RawMessage
	if kind(raw) != "a list" || json.Unmarshal(raw, &items) != nil {
		return nil, p.errf(at, `is %s: write a list of callers, e.g. ["alice", "client:sensor-*"]`, kind(raw))
	}
	cs := &Callers{entries: make([]callerEntry, 0, len(items))}
	for i, item := range items {
		where := fmt.Sprintf("%s[%d]", at, i)
		s, err := p.str(item, where)
		if err != nil {
			return nil, err
		}
		e := callerEntry{text: s, glob: s}
		switch {
		case strings.HasPrefix(s, "client:"):
			e.client, e.glob = true, strings.TrimPrefix(s, "client:")
		case strings.HasPrefix(s, "user:"):
			e.glob = strings.TrimPrefix(s, "user:")
		}
		switch {
		case e.glob == "":
			return nil, p.errf(where, `%q names no one: write a user name ("alice" or "user:alice"), a client id ("client:sensor-1"), a pattern with * ("client:sensor-*"), or "*" for any verified caller`, s)
		case len(s) > maxCallerEntry:
			return nil, p.errf(where, "is %d bytes long: an entry may have %d", len(s), maxCallerEntry)
		case strings.IndexFunc(s, unicode.IsControl) >= 0:
			return nil, p.errf(where, "%q holds a control character: user names and client ids have none", s)
		}
		cs.entries = append(cs.entries, e)
	}
	return cs, nil
}

// Quota is a "quota": at most Limit calls per Per, per caller.
type Quota struct {
	Limit int
	Per   time.Duration
}

// IsZero reports whether q sets no quota.
func (q Quota) IsZero() bool { return q.Limit == 0 }

// String is the quota as written, e.g. "5/s".
func (q Quota) String() string {
	if q.IsZero() {
		return "none"
	}
	unit := "s"
	if q.Per == time.Minute {
		unit = "m"
	}
	return strconv.Itoa(q.Limit) + "/" + unit
}

// maxQuota bounds a quota's count.
const maxQuota = 1_000_000

// quota reads a "quota": "N/s" (per second) or "N/m" (per minute).
func (p *opParser) quota(raw json.RawMessage, at string) (Quota, error) {
	s, err := p.str(raw, at)
	if err != nil {
		return Quota{}, p.errf(at, `is %s: write a string "N/s" (calls per second per caller) or "N/m" (per minute), e.g. "5/s"`, kind(raw))
	}
	n, unit, ok := strings.Cut(s, "/")
	limit, err := strconv.Atoi(n)
	var per time.Duration
	switch unit {
	case "s":
		per = time.Second
	case "m":
		per = time.Minute
	}
	switch {
	case !ok || err != nil || per == 0:
		return Quota{}, p.errf(at, `%q is not a quota: write "N/s" (calls per second per caller) or "N/m" (per minute), e.g. "5/s"`, s)
	case limit < 1 || limit > maxQuota:
		return Quota{}, p.errf(at, "%q: the count must be from 1 to %d", s, maxQuota)
	}
	return Quota{Limit: limit, Per: per}, nil
}

// allowOf is the "allow" list of command: op's "commands" entry's, else
// op's; nil when neither sets one (anyone may call).
func (op *Operator) allowOf(command string) *Callers {
	switch {
	case op == nil:
		return nil
	case op.Commands[command].Allow != nil:
		return op.Commands[command].Allow
	}
	return op.Allow
}

// quotaOf is the quota of plugin's command and what it counts: the
// command's calls alone for its "commands" entry's, all the plugin's
// commands' together for the file's "quota".
func (op *Operator) quotaOf(plugin, command string) (Quota, string) {
	switch {
	case op == nil:
		return Quota{}, ""
	case !op.Commands[command].Quota.IsZero():
		return op.Commands[command].Quota, plugin + "/" + command
	case !op.Quota.IsZero():
		return op.Quota, plugin
	}
	return Quota{}, ""
}
