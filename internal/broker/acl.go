package broker

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	mqtt "github.com/mochi-mqtt/server/v2"

	"github.com/cmdhost/cmdhost/internal/topic"
)

// What a client over the network may publish and subscribe to, with an
// ACL file (Config.ACLFile), or without one on a broker that
// authenticates its clients (DefaultACL):
//
//   - every client may subscribe under its own response prefix,
//     clients/<clientId>/ (cmdhost's invokers take
//     clients/<clientId>/rpc/response), and nowhere else unless granted:
//     not to #, not to a + that reaches other clients' prefixes;
//   - a user's `call PATTERN` lines grant publishing to the command topics
//     the pattern matches (rpc/<executor>/<command>);
//   - `admin` grants the admin ops of every executor: publishing to
//     cmdhost/+/admin/# and cmdhost/+/replica/+/admin/#, and subscribing to
//     cmdhost/+/replicas (the replicas' announcements);
//   - `events` grants subscribing to cmdhost/+/events;
//   - `publish FILTER` grants publishing to the topics FILTER matches
//     (telemetry for the hosts' triggers), `subscribe FILTER` subscribing
//     within it, never to the host's own topics;
//   - `host EXECUTOR` lets the user serve as that executor (a cmdhost
//     serve --broker, a replica): subscribing to its request and admin
//     topics, publishing its replies (to every client's prefix), events
//     and announcements;
//   - `state read PREFIX` and `state write PREFIX` grant the keys of the
//     state store protocol that start with PREFIX (statestore.go).
//
// A subscription is granted only if every topic its filter matches is
// granted (filterWithin), so a wildcard cannot reach past a grant. The
// host's own clients, in process, are never checked.
//
// The ACL file is re-read when it changes (Reload, called by the
// broker's file watch): a version that does not parse keeps the grants
// last read, and the error says why.

// ACL is an ACL: the grants of each user, as last read. Safe for
// concurrent use.
type ACL struct {
	path  string // "": DefaultACL
	rules atomic.Pointer[aclRules]
}

// aclRules are the grants of one version of an ACL file.
type aclRules struct {
	users map[string]*grants
	// anyUser, if set, are the grants of an authenticated user the file
	// does not name (DefaultACL).
	anyUser *grants
}

// grants is what one user may do beyond its own response prefix.
type grants struct {
	write []string     // topic filters the user may publish to
	read  []string     // topic filters the user may subscribe to
	state []stateGrant // state store keys (statestore.go)
}

// The topics the `admin` and `events` lines grant.
var (
	adminWrite = []string{"cmdhost/+/admin/#", "cmdhost/+/replica/+/admin/#"}
	adminRead  = []string{"cmdhost/+/replicas"}
	eventsRead = []string{"cmdhost/+/events"}
)

// hostGrants are the topics a `host ID` line grants: what a host serving
// as executor ID subscribes to and publishes.
func hostGrants(id string) (read, write []string) {
	return []string{"rpc/" + id + "/#", "cmdhost/" + id + "/admin/#", "cmdhost/" + id + "/replica/+/admin/#"},
		[]string{responsePrefix + "#", "cmdhost/" + id + "/events", "cmdhost/" + id + "/replicas"}
}

// responsePrefix starts every client's own prefix, clients/<clientId>/.
const responsePrefix = "clients/"

// DefaultACL is the ACL of a broker that authenticates its clients
// (users, client certificates or service account tokens) and was given
// no ACL file: least privilege. Every authenticated user may call every
// command (publish to rpc/#) and read its own replies; nobody may
// subscribe to # or to others' replies, use the admin ops, read the
// events or serve as a host. An anonymous client (the plain listener on
// loopback beside an mTLS one) calls nothing.
func DefaultACL() *ACL {
	a := &ACL{}
	a.rules.Store(&aclRules{users: map[string]*grants{}, anyUser: &grants{write: []string{"rpc/#"}}})
	return a
}

// maxACLBytes bounds an ACL file.
const maxACLBytes = 4 << 20

// ReadACL reads the ACL file at path (see parseACL for its lines).
func ReadACL(path string) (*ACL, error) {
	a := &ACL{path: path}
	if err := a.Reload(); err != nil {
		return nil, err
	}
	return a, nil
}

// Reload reads the ACL file again. A file that does not read or parse
// leaves the grants as they were, and the error says why.
func (a *ACL) Reload() error {
	if a.path == "" {
		return nil
	}
	f, err := os.Open(a.path)
	if err != nil {
		return fmt.Errorf("ACL file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxACLBytes+1))
	switch {
	case err != nil:
		return fmt.Errorf("ACL file %s: %w", a.path, err)
	case len(b) > maxACLBytes:
		return fmt.Errorf("ACL file %s: more than %d bytes", a.path, maxACLBytes)
	}
	rules, err := parseACL(a.path, b)
	if err != nil {
		return err
	}
	a.rules.Store(rules)
	return nil
}

// Path is the ACL file's path; "" for DefaultACL.
func (a *ACL) Path() string { return a.path }

// parseACL parses an ACL file's content. Its lines (blank lines and #
// comments ignored):
//
//	user NAME        the lines below, to the next user line, are NAME's
//	call PATTERN     may publish to the command topics PATTERN matches
//	                 (rpc/<executor>/<command>, + and # allowed)
//	admin            may use the admin ops (plugin list, inspect, ...)
//	events           may subscribe to the timeout events
//	host EXECUTOR    may serve as that executor (serve --broker --id EXECUTOR)
//	state read P     may read the state store's keys that start with P
//	state write P    may read and write them (P * is every key)
//	publish FILTER   may publish messages to the topics FILTER matches
//	                 (telemetry a trigger receives), never the host's
//	subscribe FILTER may subscribe to FILTER, or within it, never the host's
func parseACL(path string, content []byte) (*aclRules, error) {
	acl := &aclRules{users: map[string]*grants{}}
	var cur *grants
	sc := bufio.NewScanner(bytes.NewReader(content))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		bad := func(why string) error {
			return fmt.Errorf("ACL file %s line %d: %s (lines: user NAME, call rpc/EXECUTOR/COMMAND, admin, events, host EXECUTOR, state read|write PREFIX, publish FILTER, subscribe FILTER)", path, n, why)
		}
		if fields[0] == "user" {
			if len(fields) != 2 {
				return nil, bad("`user` takes one user name")
			}
			if cur = acl.users[fields[1]]; cur == nil {
				cur = &grants{}
				acl.users[fields[1]] = cur
			}
			continue
		}
		if cur == nil {
			return nil, bad(fmt.Sprintf("%q before any `user NAME` line", fields[0]))
		}
		switch fields[0] {
		case "call":
			if len(fields) != 2 {
				return nil, bad("`call` takes one topic pattern")
			}
			if p := fields[1]; !strings.HasPrefix(p, "rpc/") || !validFilter(p) {
				return nil, bad(fmt.Sprintf("%q is not a command topic pattern: rpc/EXECUTOR/COMMAND, each level a name, + or a final #", p))
			}
			cur.write = append(cur.write, fields[1])
		case "publish", "subscribe":
			first, _, _ := strings.Cut(fields[len(fields)-1], "/")
			if len(fields) != 2 || !validFilter(fields[1]) || first == "+" || first == "#" || topic.IsReserved(first) {
				return nil, bad(fmt.Sprintf("`%s` takes one topic filter whose first level is a name and not the host's (rpc, cmdhost, clients, statestore, $…), e.g. %[1]s sensors/#", fields[0]))
			}
			if fields[0] == "publish" {
				cur.write = append(cur.write, fields[1])
			} else {
				cur.read = append(cur.read, fields[1])
			}
		case "admin", "events":
			if len(fields) != 1 {
				return nil, bad(fmt.Sprintf("`%s` takes nothing after it", fields[0]))
			}
			if fields[0] == "admin" {
				cur.write, cur.read = append(cur.write, adminWrite...), append(cur.read, adminRead...)
			} else {
				cur.read = append(cur.read, eventsRead...)
			}
		case "host":
			if len(fields) != 2 || !validFilter(fields[1]) || strings.Contains(fields[1], "/") || fields[1] == "#" {
				return nil, bad("`host` takes one executor id (a topic level, or +)")
			}
			read, write := hostGrants(fields[1])
			cur.write, cur.read = append(cur.write, write...), append(cur.read, read...)
		case "state":
			g, err := parseStateLine(fields)
			if err != nil {
				return nil, bad(err.Error())
			}
			cur.state = append(cur.state, g)
		default:
			return nil, bad(fmt.Sprintf("unknown line %q", fields[0]))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ACL file %s: %w", path, err)
	}
	return acl, nil
}

// allows reports whether the client may publish to topic (write) or
// subscribe to filter (or receive a message on a topic it subscribed to).
func (a *ACL) allows(cl *mqtt.Client, user, filter string, write bool) bool {
	if !write {
		filter = unshare(filter)
		if ownPrefix(cl.ID, filter) || ownNotify(cl.ID, filter) {
			return true
		}
	}
	rules := a.rules.Load()
	g := rules.users[user]
	if g == nil && user != "" {
		g = rules.anyUser
	}
	if g == nil {
		return false
	}
	if write && filter == StateStoreTopic {
		return true // the state store refuses what the grants do not allow (statestore.go)
	}
	granted := g.read
	if write {
		granted = g.write
	}
	for _, p := range granted {
		if filterWithin(filter, p) {
			return true
		}
	}
	return false
}

// ownPrefix reports whether filter is under the client's own response
// prefix, clients/<clientId>/, or is its Go SDK state store response
// topic (statestore.go). A client id with a wildcard or a / in it has no
// prefix of its own (clients/+/… would be everyone's); the state store's
// notify topics and the Go SDK's response topics are no one's prefix but
// their client's.
func ownPrefix(clientID, filter string) bool {
	switch {
	case clientID == "":
		return false
	case isHexResponseTopic(filter):
		return filter == hexResponseTopic(clientID)
	case strings.HasPrefix(filter, stateNotifyRoot), strings.ContainsAny(clientID, "+#/"):
		return false
	}
	return strings.HasPrefix(filter, responsePrefix+clientID+"/")
}

// unshare returns the filter of a shared subscription ($share/GROUP/filter).
func unshare(filter string) string {
	if rest, ok := strings.CutPrefix(filter, "$share/"); ok {
		if _, f, ok := strings.Cut(rest, "/"); ok {
			return f
		}
	}
	return filter
}

// validFilter reports whether p is a topic filter: + and # whole levels,
// # last.
func validFilter(p string) bool {
	levels := strings.Split(p, "/")
	for i, l := range levels {
		if l == "" || l == "#" && i != len(levels)-1 {
			return false
		}
		if l != "+" && l != "#" && strings.ContainsAny(l, "+#") {
			return false
		}
	}
	return true
}

// filterWithin reports whether every topic filter f matches is one grant
// g matches: f's levels are g's, a + in f only where g has + or #, a # in
// f only where g has #. A topic name (no wildcards) is a filter too.
func filterWithin(f, g string) bool {
	fl, gl := strings.Split(f, "/"), strings.Split(g, "/")
	for i, l := range fl {
		if i >= len(gl) {
			return false
		}
		switch gl[i] {
		case "#":
			return !strings.HasPrefix(l, "$") || i > 0
		case "+":
			if l == "#" || i == 0 && strings.HasPrefix(l, "$") {
				return false
			}
		default:
			if l != gl[i] {
				return false
			}
		}
	}
	// f ends here: g must too, or go on with a # that matches its parent
	// (a/# matches a).
	return len(fl) == len(gl) || len(gl) == len(fl)+1 && gl[len(fl)] == "#"
}
