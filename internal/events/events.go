// Package events carries the host's timeout events, so that every cut call
// can be seen and explained: every timeout, whatever cut the
// call, and the warning when a call passes 80 % of its budget, become one
// Event that the log, the metrics and, when asked for, an MQTT topic
// receive. Producers (the executor, nested invocations) know nothing of
// where events go: they hand them to a Sink. The admin ops that change a
// plugin report there too (KindAdmin), the audit of who changed what.
package events

import (
	"context"
	"log/slog"
	"time"
)

// Kinds of event.
const (
	// KindTimeout: a timeout ended a call, or a wait, of a command.
	KindTimeout = "timeout"
	// KindBudgetWarning: a call still runs past WarnFraction of its budget.
	KindBudgetWarning = "budget_warning"
	// KindAdmin: an admin op that changes a plugin (Op: install, remove,
	// reload, rollback) or the state store (state-set, state-delete,
	// state-import: Target) served it, or was refused (Verdict): the
	// audit of who changed what (Invoker, Digest).
	KindAdmin = "admin"
	// KindTriggerDrop: a trigger's message was dropped, acknowledged
	// without being handled: its attempts failed, or it was refused
	// (Reason says why; Attempt counts the runs, 0 for none).
	KindTriggerDrop = "trigger_drop"
)

// Verdicts of a KindAdmin event.
const (
	VerdictDone    = "done"    // the op did what it was asked
	VerdictRefused = "refused" // the host refused it (Reason says why); what served goes on
	// VerdictForbidden: the op was refused before it was looked at (no
	// token, or a wrong one).
	VerdictForbidden = "forbidden"
)

// Timeout types: what cut the call.
const (
	// TypeExpiry: the request's message expiry (no reply is owed).
	TypeExpiry = "expiry"
	// TypeExecution: the command's execution timeout (408).
	TypeExecution = "execution"
	// TypeQueue: the request expired while waiting for a slot.
	TypeQueue = "queue"
	// TypeNested: a nested invocation's deadline cut the child call.
	TypeNested = "nested"
	// TypeSync: a fan-out's synchronization timeout ended the wait for
	// its branches.
	TypeSync = "sync"
)

// Policy is what the host does about a timeout: the on_timeout policy of
// a command (PolicyFail, PolicyRetry, which the plugins' operator files
// name) or of a fan-out's sync timeout (PolicyProceedWithAvailable,
// PolicyFail). One type for both, so an event names the policy a setting
// chose.
type Policy string

// Policies applied on a timeout.
const (
	// PolicyFail: the call is answered with its timeout (408, or a failed
	// branch).
	PolicyFail Policy = "fail"
	// PolicyRetry: the call runs again on a fresh instance, while the
	// request's expiry leaves time.
	PolicyRetry Policy = "retry"
	// PolicyProceedWithAvailable: a fan-out completes with the branches
	// that answered.
	PolicyProceedWithAvailable Policy = "proceed_with_available"
	// PolicyNone: nothing to apply (the request expired: nobody waits).
	PolicyNone Policy = "none"
)

// WarnFraction of a call's budget after which a KindBudgetWarning event
// is emitted while the call still runs.
const WarnFraction = 0.8

// Event is one timeout or budget warning. Its JSON form is what --events
// publishes.
type Event struct {
	Kind    string `json:"kind"`
	Command string `json:"command"`
	// Plugin and Digest name the plugin version serving Command (its
	// module's sha256), when one does.
	Plugin string `json:"plugin,omitempty"`
	Digest string `json:"digest,omitempty"`
	// Correlation is the request's correlation data as a UUID string.
	Correlation string `json:"correlation,omitempty"`
	// Type is what cut the call (Type*); for a warning, the budget that
	// is running out.
	Type string `json:"type"`
	// Budget is the timeout that applied; Elapsed how long the call, or
	// the wait, had run when the event happened.
	Budget  time.Duration `json:"-"`
	Elapsed time.Duration `json:"-"`
	// Policy is the policy applied (Policy*); empty for a warning.
	Policy Policy `json:"policy,omitempty"`
	// Attempt counts the call's runs, 1 for the first.
	Attempt int `json:"attempt,omitempty"`
	// Branch names the fan-out branch of a nested or sync event.
	Branch string `json:"branch,omitempty"`
	// Op, Invoker, User, ClientID, Verdict and Reason are a KindAdmin
	// event's: the admin op, who asked (Invoker: the client id the
	// request claims; User and ClientID: its verified caller, the user
	// and client id the embedded broker authenticated, "" when there is
	// none), what came of it, and why it was refused.
	Op       string    `json:"op,omitempty"`
	Invoker  string    `json:"invoker,omitempty"`
	User     string    `json:"user,omitempty"`
	ClientID string    `json:"clientId,omitempty"`
	Verdict  string    `json:"verdict,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Time     time.Time `json:"time"`
	// BudgetMS and ElapsedMS are Budget and Elapsed in the JSON form.
	BudgetMS  int64 `json:"budget_ms"`
	ElapsedMS int64 `json:"elapsed_ms"`

	// Target is what a KindAdmin event's op of the state store changed:
	// the namespace, and the key or the count of keys.
	Target string `json:"target,omitempty"`
}

// Sink receives events. Emit is called from many goroutines at once and
// must not block.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Emit calls f.
func (f SinkFunc) Emit(ev Event) { f(ev) }

// Multi returns a Sink that hands each event to every non-nil sink in
// turn.
func Multi(sinks ...Sink) Sink {
	var out multi
	for _, s := range sinks {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

type multi []Sink

func (m multi) Emit(ev Event) {
	for _, s := range m {
		s.Emit(ev)
	}
}

// Log returns a Sink that logs each event: timeouts at info, warnings at
// warn.
func Log(log *slog.Logger) Sink {
	return SinkFunc(func(ev Event) {
		if ev.Kind == KindAdmin {
			logAdmin(log, ev)
			return
		}
		level := slog.LevelInfo
		if ev.Kind == KindBudgetWarning || ev.Kind == KindTriggerDrop {
			level = slog.LevelWarn
		}
		attrs := []slog.Attr{
			slog.String("command", ev.Command), slog.String("type", ev.Type),
			slog.Duration("budget", ev.Budget), slog.Duration("elapsed", ev.Elapsed),
		}
		for _, a := range []struct{ k, v string }{
			{"plugin", ev.Plugin}, {"digest", ev.Digest}, {"correlation", ev.Correlation},
			{"policy", string(ev.Policy)}, {"branch", ev.Branch}, {"reason", ev.Reason},
		} {
			if a.v != "" {
				attrs = append(attrs, slog.String(a.k, a.v))
			}
		}
		if ev.Attempt > 1 {
			attrs = append(attrs, slog.Int("attempt", ev.Attempt))
		}
		log.LogAttrs(context.Background(), level, ev.Kind, attrs...)
	})
}

// logAdmin logs an admin event: a refusal at warn, the rest at info.
func logAdmin(log *slog.Logger, ev Event) {
	level := slog.LevelInfo
	if ev.Verdict != VerdictDone {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{slog.String("op", ev.Op), slog.String("verdict", ev.Verdict)}
	for _, a := range []struct{ k, v string }{
		{"plugin", ev.Plugin}, {"digest", ev.Digest}, {"invoker", ev.Invoker},
		{"user", ev.User}, {"client_id", ev.ClientID}, {"target", ev.Target}, {"reason", ev.Reason},
	} {
		if a.v != "" {
			attrs = append(attrs, slog.String(a.k, a.v))
		}
	}
	log.LogAttrs(context.Background(), level, "admin op", attrs...)
}

// Finish fills the derived fields of ev (Time when zero, BudgetMS,
// ElapsedMS) and returns it.
func Finish(ev Event) Event {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	ev.BudgetMS, ev.ElapsedMS = ev.Budget.Milliseconds(), ev.Elapsed.Milliseconds()
	return ev
}
