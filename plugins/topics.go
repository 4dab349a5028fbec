package plugins

import (
	"fmt"
	"iter"
	"strings"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/topic"
)

// Topics belong to the host, not to plugins. A command's request topic is
// its module's declared pattern, else topic.Default
// (rpc/{executorId}/{commandName}); the host serves a pattern only when:
//
//   - its first level is a literal that does not start with '$' (the
//     broker's: $SYS, $share) and is not HostTopicPrefix (the host's own
//     topics: admin ops on cmdhost/{executorId}/admin/{op}, events on
//     cmdhost/{executorId}/events). A leading {token} would subscribe to
//     every first level, the host's included.
//   - its second level is {executorId}, so that an executor's requests are
//     all under <first level>/<its id>/: a command answers for its own
//     executor only, never for another one. (Anywhere else, a level in
//     front of it could take another executor's id: with our id "echo",
//     rpc/{x}/{executorId} would match rpc/other-host/echo.) With serve
//     --share, {executorId} is the service's name, the same for all its
//     replicas.
//   - no topic matches both it and the pattern of another command served,
//     of the same plugin or of another: otherwise a request would reach
//     two commands, or the wrong one. {executorId} stands for the same
//     executor id in both patterns, {commandName} for each command's own
//     name, and any other token for any level (the host replaces none).
//
// A module breaking the first two rules, or whose own commands' topics
// overlap, is refused at load. One whose topic overlaps that of a command
// another plugin serves is refused like
// one declaring a command name another plugin serves: the plugin serving
// keeps its topic (at startup, the one whose file name sorts first), and
// the refused one is retried when that topic is freed.

// HostTopicPrefix is the first level of the host's own topics (admin ops
// and events); no plugin's topic may start with it.
const HostTopicPrefix = "cmdhost"

// executorToken is the token that names the executor in a topic pattern.
const executorToken = "executorId"

// commandTopic is the request topic pattern of one command, checked.
type commandTopic struct {
	command string
	source  string        // the pattern as declared, or topic.Default
	pattern topic.Pattern // with {commandName} resolved
}

// String quotes the pattern, with its resolved form when that differs:
// "rpc/{executorId}/{commandName}" (= rpc/{executorId}/echo).
func (ct commandTopic) String() string {
	if s := ct.pattern.String(); s != ct.source {
		return fmt.Sprintf("%q (= %s)", ct.source, s)
	}
	return fmt.Sprintf("%q", ct.source)
}

// overlaps reports whether some request topic matches both ct and o,
// whatever the executor id.
func (ct commandTopic) overlaps(o commandTopic) bool {
	return ct.pattern.Overlaps(o.pattern, executorToken)
}

// CheckTopics checks the topic patterns of a module's commands against the
// host's rule (see HostTopicPrefix and the package documentation): each
// must start with a literal level that is neither '$'-prefixed nor the
// host's, have {executorId} as its second level, and overlap no other
// command's; and its triggers' filters (topic.ParseFilter): each starts
// with a literal level that is not the host's (rpc, cmdhost, clients,
// statestore, $…) and names no share group.
// Its errors name the command, the pattern and the fix.
func CheckTopics(desc *abi.Description) error {
	_, err := commandTopics(desc)
	return err
}

// commandTopics returns the checked topics of desc's commands.
func commandTopics(desc *abi.Description) ([]commandTopic, error) {
	out := make([]commandTopic, 0, len(desc.Commands))
	for _, c := range desc.Commands {
		if c.IsTrigger() { // no request topic: its filter is checked against the rule of triggers
			if _, err := topic.ParseFilter(c.Trigger, false); err != nil {
				return nil, fmt.Errorf("trigger %s: %w", c.Name, err)
			}
			continue
		}
		ct, err := checkTopic(c)
		if err != nil {
			return nil, err
		}
		for _, prev := range out {
			if ct.overlaps(prev) {
				return nil, fmt.Errorf("commands %s and %s have overlapping topics %s and %s: a request could reach both; give each command a topic of its own",
					prev.command, ct.command, prev, ct)
			}
		}
		out = append(out, ct)
	}
	return out, nil
}

// checkTopic checks one command's pattern against the rule.
func checkTopic(c abi.Command) (commandTopic, error) {
	ct := commandTopic{command: c.Name, source: c.Topic}
	if ct.source == "" {
		ct.source = topic.Default
	}
	fail := func(format string, args ...any) (commandTopic, error) {
		return ct, fmt.Errorf("command %s: topic pattern %q %s", c.Name, ct.source, fmt.Sprintf(format, args...))
	}
	levels := strings.Split(ct.source, "/")
	first := levels[0]
	switch {
	case strings.HasPrefix(first, "{") && strings.HasSuffix(first, "}"):
		return fail("starts with the token %s: start with a literal level, e.g. %s; topics belong to the host", first, topic.Default)
	case strings.HasPrefix(first, "$"):
		return fail("starts with %q: levels starting with '$' are the broker's ($SYS, $share); start with a level such as \"rpc\", e.g. %s", first, topic.Default)
	case first == HostTopicPrefix:
		return fail("starts with %q, the host's own topics (admin ops %s/{executorId}/admin/{op}, events %s/{executorId}/events); start with another level, e.g. %s",
			first, HostTopicPrefix, HostTopicPrefix, topic.Default)
	}
	if len(levels) < 2 || levels[1] != "{"+executorToken+"}" {
		return fail("does not have {%s} as its second level: a command answers for its own executor only, under <prefix>/{%s}/…, e.g. %s",
			executorToken, executorToken, topic.Default)
	}
	p, err := topic.Parse("", ct.source, map[string]string{"commandName": c.Name})
	if err != nil {
		return ct, fmt.Errorf("command %s: %w", c.Name, err)
	}
	ct.pattern = p
	return ct, nil
}

// servedTopic is a command's topic as served, with its plugin.
type servedTopic struct {
	plugin string
	commandTopic
}

// topicClash returns an error naming both plugins and both patterns when
// one of topics (those of plugin name's new version) overlaps the topic of
// a command another plugin serves now. Manager.mu is held.
func (m *Manager) topicClash(name string, topics []commandTopic) error {
	served := m.served.Load().topics
	for _, ct := range topics {
		for other := range chainTopics(m.unpublished.topics, served) {
			if other.plugin == name || !ct.overlaps(other.commandTopic) {
				continue
			}
			msg := fmt.Sprintf("plugin %s: command %s's topic %s overlaps command %s's %s, served by plugin %s",
				name, ct.command, ct, other.command, other.commandTopic, other.plugin)
			if e := m.entries[name]; e != nil && e.cur != nil {
				msg += fmt.Sprintf("; the new version of %s is refused and the old one keeps serving", name)
			} else {
				msg += fmt.Sprintf("; %s not loaded", name)
			}
			return &ClashError{Plugin: name, Command: ct.command, Other: other.plugin, OtherCommand: other.command,
				Topic: ct.String(), OtherTopic: other.commandTopic.String(), msg: msg}
		}
	}
	return nil
}

// chainTopics yields the topics of a, then those of b, copying neither.
func chainTopics(a, b []servedTopic) iter.Seq[servedTopic] {
	return func(yield func(servedTopic) bool) {
		for _, s := range [][]servedTopic{a, b} {
			for _, t := range s {
				if !yield(t) {
					return
				}
			}
		}
	}
}
