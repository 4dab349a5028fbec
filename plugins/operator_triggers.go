package plugins

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/topic"
)

// The operator file's "triggers": the module's triggers the host
// subscribes (docs/messages.md, "Handlers triggered by messages"). A
// trigger the file does not name is not subscribed.
//
//	"triggers": {
//	  "on-temp": {
//	    "topic": "sensors/+/temp",   the filter subscribed: the declared one, or narrower
//	    "attempts": 3,               runs of a message before it is dropped
//	    "concurrency": 4             its messages handled at once
//	  },
//	  "on-alarm": {}                 confirmed, with the defaults
//	}
var triggerFields = []string{"topic", "attempts", "concurrency"}

// TriggerSettings are a trigger's entry in the operator file.
type TriggerSettings struct {
	// Topic is the filter to subscribe ("topic"): within the declared one
	// (every topic it matches, the declared one matches), and may name a
	// share group ($share/GROUP/…). nil: not set (the declared filter).
	Topic *topic.Filter
	// Attempts is how many times a message runs before it is dropped
	// ("attempts"); 0: not set (DefaultAttempts).
	Attempts int
	// Concurrency bounds the trigger's messages handled at once
	// ("concurrency"); 0: not set (the plugin's concurrency).
	Concurrency int
}

// DefaultAttempts is a trigger's attempts when the operator file sets
// none; MaxAttempts the most it may set.
const (
	DefaultAttempts = 3
	MaxAttempts     = 100
)

// MaxTriggerConcurrency bounds a trigger's "concurrency": the messages a
// trigger session leaves unacknowledged (its Receive Maximum) are at most
// 65,535 in all.
const MaxTriggerConcurrency = 4096

func (p *opParser) triggers(raw json.RawMessage, at string) (map[string]TriggerSettings, error) {
	fields, err := p.object(raw, at, nil)
	if err != nil {
		return nil, err
	}
	out := make(map[string]TriggerSettings, len(fields))
	for _, f := range fields {
		where := join(at, f.key)
		entry, err := p.object(f.raw, where, triggerFields)
		if err != nil {
			return nil, err
		}
		var ts TriggerSettings
		for _, e := range entry {
			w := join(where, e.key)
			switch e.key {
			case "topic":
				var s string
				if s, err = p.str(e.raw, w); err != nil {
					return nil, err
				}
				flt, ferr := topic.ParseFilter(s, true)
				if ferr != nil {
					return nil, p.errf(w, "%v", ferr)
				}
				ts.Topic = &flt
			case "attempts":
				ts.Attempts, err = p.integer(e.raw, w, 1, MaxAttempts)
			case "concurrency":
				ts.Concurrency, err = p.integer(e.raw, w, 1, MaxTriggerConcurrency)
			}
			if err != nil {
				return nil, err
			}
		}
		out[f.key] = ts
	}
	return out, nil
}

// checkTriggers verifies the file's "triggers" against the module's
// description: each names a trigger the module declares, its "topic" is
// within the declared filter; and a "commands" entry for a trigger sets
// only what applies to one (timeout, fuel).
func (op *Operator) checkTriggers(desc *abi.Description) error {
	if op == nil {
		return nil
	}
	file := filepath.Base(op.File)
	var declared []string
	for _, c := range desc.Commands {
		if c.IsTrigger() {
			declared = append(declared, c.Name)
		}
	}
	names := make([]string, 0, len(op.Triggers))
	for name := range op.Triggers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := desc.Command(name)
		if c == nil || !c.IsTrigger() {
			has := "it declares none"
			if len(declared) > 0 {
				has = "it declares " + strings.Join(declared, ", ")
			}
			return &OperatorError{File: file, Field: "triggers." + name,
				Problem: fmt.Sprintf("the module declares no trigger %q (%s): fix the name or remove the entry", name, has)}
		}
		ts := op.Triggers[name]
		if ts.Topic == nil {
			continue
		}
		decl, err := topic.ParseFilter(c.Trigger, false)
		if err == nil && !ts.Topic.Within(decl) {
			return &OperatorError{File: file, Field: "triggers." + name + ".topic",
				Problem: fmt.Sprintf("%q is not within the module's filter %q: give the declared filter or a narrower one (a literal or + for a {token} or +, any levels for #)", ts.Topic, c.Trigger)}
		}
	}
	for name, cs := range op.Commands {
		c := desc.Command(name)
		if c == nil || !c.IsTrigger() {
			continue
		}
		if cs.OnTimeout != nil || cs.Allow != nil || !cs.Quota.IsZero() {
			return &OperatorError{File: file, Field: "commands." + name,
				Problem: fmt.Sprintf(`%s is a trigger: only "timeout" and "fuel" apply to it here; its runs are set by "triggers": {%q: {"attempts": N}}`, name, name)}
		}
	}
	return nil
}

// triggerOf resolves the module's trigger c with the file (nil: none):
// confirmed when the file names it.
func (op *Operator) triggerOf(c abi.Command, concurrency int) *Trigger {
	t := &Trigger{Filter: c.Trigger, Topic: c.Trigger, Attempts: DefaultAttempts, Concurrency: concurrency, State: TriggerUnconfirmed}
	if op == nil {
		t.Why = "the plugin has no operator file to confirm it: add one with \"triggers\": {\"" + c.Name + "\": {}}"
		return t
	}
	ts, ok := op.Triggers[c.Name]
	if !ok {
		t.Why = fmt.Sprintf("not confirmed: %s names it in no \"triggers\" entry; add \"triggers\": {%q: {}}", filepath.Base(op.File), c.Name)
		return t
	}
	t.State, t.Why = TriggerSubscribed, ""
	if ts.Topic != nil {
		t.Topic = ts.Topic.String()
	}
	if ts.Attempts > 0 {
		t.Attempts = ts.Attempts
	}
	if ts.Concurrency > 0 {
		t.Concurrency = ts.Concurrency
	}
	return t
}

// Trigger is how a trigger is served (Command.Trigger).
type Trigger struct {
	// Filter is the module's declared filter: its {token} levels give the
	// handler's topic tokens.
	Filter string `json:"filter"`
	// Topic is the filter subscribed: the operator file's "topic", else
	// Filter (before serve --share's prefix).
	Topic string `json:"topic"`
	// Attempts is how many times a message runs before it is dropped.
	Attempts int `json:"attempts"`
	// Concurrency bounds its messages handled at once.
	Concurrency int `json:"concurrency"`
	// State says whether the host subscribes it; Why, when it does not,
	// why and how to change that.
	State TriggerState `json:"state"`
	Why   string       `json:"why,omitempty"`
}

// TriggerState is whether a trigger is subscribed.
type TriggerState string

// States of a trigger.
const (
	// TriggerSubscribed: confirmed by the operator file, subscribed.
	TriggerSubscribed TriggerState = "subscribed"
	// TriggerUnconfirmed: the operator file does not name it.
	TriggerUnconfirmed TriggerState = "unconfirmed"
	// TriggerOverlaps: some topic matches both its filter and one of a
	// trigger subscribed before it: the broker would deliver such a
	// message twice.
	TriggerOverlaps TriggerState = "overlaps"
)

// resolveOverlaps leaves subscribed only triggers whose filters overlap no
// other's: those subscribed in old first (a reload never takes a trigger's
// messages away from one serving), then the rest by name. cmds is sorted
// by name; old is the table before.
func resolveOverlaps(cmds []Command, old []Command) {
	wasSubscribed := map[string]string{}
	for _, c := range old {
		if c.Trigger != nil && c.Trigger.State == TriggerSubscribed {
			wasSubscribed[c.Name()] = c.Trigger.Topic
		}
	}
	order := make([]int, 0, len(cmds))
	for i, c := range cmds {
		if c.Trigger != nil && c.Trigger.State == TriggerSubscribed {
			order = append(order, i)
		}
	}
	kept := func(i int) bool { t, ok := wasSubscribed[cmds[i].Name()]; return ok && t == cmds[i].Trigger.Topic }
	slices.SortStableFunc(order, func(a, b int) int {
		switch ka, kb := kept(a), kept(b); {
		case ka && !kb:
			return -1
		case kb && !ka:
			return 1
		}
		return 0
	})
	var accepted []int
	var filters []topic.Filter
	for _, i := range order {
		t := cmds[i].Trigger
		f, err := topic.ParseFilter(t.Topic, true)
		if err != nil { // checked at load: cannot happen
			t.State, t.Why = TriggerOverlaps, err.Error()
			continue
		}
		clash := slices.IndexFunc(filters, f.Overlaps)
		if clash < 0 {
			accepted, filters = append(accepted, i), append(filters, f)
			continue
		}
		other := cmds[accepted[clash]]
		t.State = TriggerOverlaps
		t.Why = fmt.Sprintf("its filter %q overlaps %q of trigger %s (plugin %s), subscribed first: a message on both would be delivered twice; narrow one with the operator file's \"topic\"",
			t.Topic, other.Trigger.Topic, other.Name(), other.Plugin)
	}
}
