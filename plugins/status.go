package plugins

import (
	"sort"
	"time"

	"github.com/cmdhost/cmdhost/internal/wasm"
)

// State is where a plugin stands (PluginStatus.State).
type State string

// States of a plugin in Status.
const (
	// StateLoading: the first version is loading; nothing is served yet.
	StateLoading State = "loading"
	// StateServing: a version serves the plugin's commands. LastError set
	// means a newer file failed to load and this older version goes on.
	StateServing State = "serving"
	// StateFailed: the file is there but no version serves it: it failed
	// to load, a topic it declares is not the host's to give (CheckTopics),
	// or a command or topic it declares is served by another plugin.
	StateFailed State = "failed"
	// StateDraining: the plugin is no longer served (file removed or
	// Remove called); its last version is finishing its calls in flight.
	StateDraining State = "draining"
	// StateRemoved: Remove stopped serving the plugin; its file stays.
	StateRemoved State = "removed"
	// StateDisabled: the plugin's operator file says "enabled": false; the
	// module is not loaded. Operator names the file.
	StateDisabled State = "disabled"
)

// PluginStatus describes one plugin for the operator.
type PluginStatus struct {
	Name   string `json:"name"`
	File   string `json:"file"`   // the plugin's file path
	Digest string `json:"digest"` // hex sha256 of the module file content serving now; "" when none
	State  State  `json:"state"`
	// Operator is the path of the operator file (NAME.json) whose settings
	// apply to the version serving, or that disabled the plugin; "" when
	// none does (the host's settings and the module's defaults apply).
	Operator string `json:"operator"`
	// OperatorDigest is the hex sha256 of that operator file's content;
	// "" when none. A plugin's content is the pair (Digest,
	// OperatorDigest): a change of either reloads it.
	OperatorDigest string `json:"operatorDigest"`
	// Commands are the command names of the version serving.
	Commands []string `json:"commands"`
	// Since is when the version serving started serving.
	Since time.Time `json:"since,omitzero"`

	Loads        int `json:"loads"`        // times a version started serving with none before
	Reloads      int `json:"reloads"`      // times a new version replaced a serving one
	LoadFailures int `json:"loadFailures"` // loads refused (bad module, clash, unreadable file)

	// Call counters, summed over every version of the plugin.
	Calls    int64 `json:"calls"`
	Failures int64 `json:"failures"` // calls that returned an error (trap, timeout, bad reply)
	// ErrorReplies counts the calls the command answered with an error
	// status (an application error, a 4xx or 5xx of its own).
	ErrorReplies int64 `json:"errorReplies"`
	Replaced     int64 `json:"replaced"` // instances discarded after a failed call
	// OutputDroppedLines and OutputDroppedBytes count the guest output
	// dropped over the plugin's output limits (wasm.OutputLimits).
	OutputDroppedLines int64 `json:"outputDroppedLines"`
	OutputDroppedBytes int64 `json:"outputDroppedBytes"`
	// MountRefusals counts the guest's file system calls refused because
	// they would have left a mount (wasm.Stats.MountRefusals).
	MountRefusals int64 `json:"mountRefusals"`
	// Fuel is the work units the plugin's calls used (wasm.FuelStats).
	Fuel      wasm.FuelStats `json:"fuel"`
	Instances int64          `json:"instances"` // instances alive now, draining versions' included
	// InUse counts the calls running now on the version serving. (A
	// draining version's calls are not counted: while a version closes,
	// wasm.Stats.InUse reports its whole pool as in use.)
	InUse    int `json:"inUse"`
	Draining int `json:"draining"` // replaced versions still finishing their calls

	// Triggers are the triggers of the version serving, sorted by name:
	// how each is served and what the host did with its messages.
	Triggers []TriggerStatus `json:"triggers,omitempty"`

	LastError string `json:"lastError,omitempty"` // the last load failure; cleared by a successful load
	// RefusedDigest is the hex sha256 of the module file content whose
	// load failed or clashed (LastError says why), "" when none: what
	// `cmdhost plugin install` waits for, beside Digest, to tell the
	// host's verdict on the file it installed. A refusal for a clash is
	// retried when what refused it is freed.
	RefusedDigest string    `json:"refusedDigest,omitempty"`
	LastErrorAt   time.Time `json:"lastErrorAt,omitzero"` // when it happened

	// StateOps counts its calls to the state store by op and result, for
	// the metrics (wasm.StateOps).
	StateOps wasm.StateOps `json:"-"`
}

// TriggerStatus is one trigger of a plugin in its PluginStatus.
type TriggerStatus struct {
	Name string `json:"name"`
	Trigger
	TriggerCounters
}

// TriggerCounters count what the host did with a trigger's messages
// since it started.
type TriggerCounters struct {
	// Messages counts the messages received for it.
	Messages int64 `json:"messages"`
	// Handled counts those its handler completed (and whose effects
	// committed).
	Handled int64 `json:"handled"`
	// Failures counts failed attempts (an error status, a trap, a
	// timeout, a commit refused), each run again while attempts are left.
	Failures int64 `json:"failures"`
	// Dropped counts messages acknowledged without being handled: out of
	// attempts, refused (a bad header, content type) or over the host's
	// bound of messages waiting.
	Dropped int64 `json:"dropped"`
	// Duplicates counts messages whose id was handled before: acked, not
	// run again.
	Duplicates int64 `json:"duplicates"`
	// InFlight is the messages being handled now, waiting ones included.
	InFlight int64 `json:"inFlight"`
	// SubscribeError says why the broker did not take its subscription
	// (an ACL, a filter it refuses); "" when it did.
	SubscribeError string `json:"subscribeError,omitempty"`
}

// triggerStatus returns the triggers of plugin in t, with their counters.
func (m *Manager) triggerStatus(t *table, plugin string) []TriggerStatus {
	var out []TriggerStatus
	for _, c := range t.commands {
		if c.Plugin != plugin || c.Trigger == nil {
			continue
		}
		ts := TriggerStatus{Name: c.Name(), Trigger: *c.Trigger}
		if m.cfg.TriggerStats != nil {
			ts.TriggerCounters = m.cfg.TriggerStats(c.Name())
		}
		out = append(out, ts)
	}
	return out
}

// Status describes every plugin known, sorted by name: those serving,
// loading, failed, draining, removed or disabled. A plugin whose file is gone and
// whose last version has closed is no longer listed.
func (m *Manager) Status() []PluginStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []PluginStatus
	for _, e := range m.entries {
		st := PluginStatus{Commands: []string{}, // none: [] in JSON, not null
			Name: e.name, File: m.path(e.name),
			Loads: e.loads, Reloads: e.reloads, LoadFailures: e.loadFailures,
			Calls: e.retired.Calls, Failures: e.retired.Failures, ErrorReplies: e.retired.ErrorReplies, Replaced: e.retired.Replaced,
			OutputDroppedLines: e.retired.OutputDroppedLines, OutputDroppedBytes: e.retired.OutputDroppedBytes,
			MountRefusals: e.retired.MountRefusals, Fuel: e.retired.Fuel, StateOps: e.retired.StateOps, Draining: len(e.draining),
		}
		switch {
		case e.cur != nil:
			st.State = StateServing
		case e.loading:
			st.State = StateLoading
		case len(e.draining) > 0:
			st.State = StateDraining
		case e.refused.is(refusedDisabled):
			st.State = StateDisabled
		case e.refused.is(refusedRemoved):
			st.State = StateRemoved
		case e.lastErr != nil:
			st.State = StateFailed
		default:
			continue // file gone, nothing left
		}
		switch {
		case e.cur != nil:
			st.Digest, st.Commands, st.Since = e.cur.digest, commandNames(e.cur.p), e.cur.since
			st.Triggers = m.triggerStatus(m.served.Load(), e.name)
			if e.cur.op != nil {
				st.Operator, st.OperatorDigest = e.cur.op.File, e.cur.opDigest
			}
		case e.refused.is(refusedDisabled) && e.refused.op != nil:
			st.Operator, st.OperatorDigest = e.refused.op.File, e.refused.opDigest
		}
		var serving *wasm.Plugin
		if e.cur != nil {
			serving = e.cur.p
		}
		if e.lastErr != nil {
			st.LastError, st.LastErrorAt = e.lastErr.Error(), e.lastErrAt
		}
		if e.refused.is(refusedFailed) || e.refused.is(refusedClash) {
			st.RefusedDigest = e.refused.digest
		}
		for _, p := range append([]*wasm.Plugin{serving}, e.draining...) {
			if p == nil {
				continue
			}
			s := p.Stats()
			st.Calls += s.Calls
			st.Failures += s.Failures
			st.ErrorReplies += s.ErrorReplies
			st.Replaced += s.Replaced
			st.OutputDroppedLines += s.OutputDroppedLines
			st.OutputDroppedBytes += s.OutputDroppedBytes
			st.MountRefusals += s.MountRefusals
			st.Fuel.Add(s.Fuel)
			st.StateOps.Add(s.StateOps)
			st.Instances += s.Instances
			if p == serving {
				st.InUse = s.InUse
			}
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
