package plugins

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/events"
)

// TimeoutSource names the setting a command's execution timeout comes
// from. The execution timeout is, first found: the operator file's
// "commands" entry for the command, the operator file's "timeout", the
// module's declared default, the host's default (serve --exec-timeout).
// The request's expiry always caps it at run time.
type TimeoutSource string

// The sources of an execution timeout, most specific first.
const (
	// TimeoutFromOperatorCommand: "commands": {"NAME": {"timeout": ...}}
	// of the plugin's operator file.
	TimeoutFromOperatorCommand TimeoutSource = "operator command"
	// TimeoutFromOperatorPlugin: "timeout" of the plugin's operator file.
	TimeoutFromOperatorPlugin TimeoutSource = "operator plugin"
	// TimeoutFromModule: the command's default the module declares
	// (abi.Command.Timeout).
	TimeoutFromModule TimeoutSource = "module"
	// TimeoutFromHost: the host's default (serve --exec-timeout), which
	// applies when none of the others is set. 0 there is none: only the
	// request's expiry bounds the call.
	TimeoutFromHost TimeoutSource = "host default"
)

// The on_timeout policies of an operator file's "onTimeout" are
// events.PolicyFail (the default: a call cut by its execution timeout is
// answered 408) and events.PolicyRetry (it runs again, at most "retries"
// more times, while the request's expiry leaves time; only for commands
// the module declares idempotent): the policies the timeout events name.

// MaxTimeoutRetries bounds an operator file's "retries".
const MaxTimeoutRetries = 10

// OnTimeout is an on_timeout policy: what the host does with a call its
// execution timeout cut while the request's expiry leaves time. The zero
// value is policy fail.
type OnTimeout struct {
	// Retries is how many more times a cut call may run, each on a fresh
	// instance (policy retry); 0 answers it 408 (policy fail). It becomes
	// rpc.Command.TimeoutRetries.
	Retries int
}

// Policy returns events.PolicyRetry or events.PolicyFail.
func (o OnTimeout) Policy() events.Policy {
	if o.Retries > 0 {
		return events.PolicyRetry
	}
	return events.PolicyFail
}

// String returns "fail" or, e.g., "retry ×2".
func (o OnTimeout) String() string {
	if o.Retries > 0 {
		return fmt.Sprintf("%s ×%d", events.PolicyRetry, o.Retries)
	}
	return string(events.PolicyFail)
}

// CommandSettings are the settings of one command in an operator file's
// "commands". Zero and nil fields are not set.
type CommandSettings struct {
	// Timeout is the command's execution timeout ("timeout"); 0: not set.
	Timeout time.Duration
	// OnTimeout is the command's on_timeout policy ("onTimeout" and
	// "retries"); nil: not set.
	OnTimeout *OnTimeout
	// Allow is who may call the command ("allow"); nil: not set.
	Allow *Callers
	// Quota bounds each caller's calls to the command ("quota"); zero:
	// not set.
	Quota Quota
	// Fuel is the command's budget of work units per call ("fuel"),
	// overriding the plugin's; 0 gives the command none. nil: not set.
	Fuel *int64
}

// execTimeout returns the execution timeout of the module's command c
// served with the operator file op (nil: none), and where it comes from:
// first found, op's "commands" entry for c, op's "timeout", c.Timeout (the
// module's declared default), hostDefault.
func (op *Operator) execTimeout(c abi.Command, hostDefault time.Duration) (time.Duration, TimeoutSource) {
	if op != nil {
		if d := op.Commands[c.Name].Timeout; d > 0 {
			return d, TimeoutFromOperatorCommand
		}
		if op.Timeout > 0 {
			return op.Timeout, TimeoutFromOperatorPlugin
		}
	}
	if c.Timeout > 0 {
		return c.Timeout, TimeoutFromModule
	}
	return hostDefault, TimeoutFromHost
}

// onTimeoutOf returns the on_timeout policy of command: op's "commands"
// entry's, else op's plugin-level one, else fail.
func (op *Operator) onTimeoutOf(command string) OnTimeout {
	o, _ := op.onTimeout(command)
	return o
}

// onTimeout returns the policy of command and the field that sets it ("":
// none, the default).
func (op *Operator) onTimeout(command string) (OnTimeout, string) {
	switch {
	case op == nil:
		return OnTimeout{}, ""
	case op.Commands[command].OnTimeout != nil:
		return *op.Commands[command].OnTimeout, "commands." + command + ".onTimeout"
	case op.OnTimeout != nil:
		return *op.OnTimeout, "onTimeout"
	}
	return OnTimeout{}, ""
}

// checkOnTimeout refuses a retry policy that applies to a command the
// module does not declare idempotent: a retry would run its effects twice.
func (op *Operator) checkOnTimeout(desc *abi.Description) error {
	if op == nil {
		return nil
	}
	var idempotent []string
	for _, c := range desc.Commands {
		if c.Idempotent {
			idempotent = append(idempotent, c.Name)
		}
	}
	for _, c := range desc.Commands {
		o, field := op.onTimeout(c.Name)
		if o.Retries == 0 || c.Idempotent || c.IsTrigger() { // a trigger's runs are its "attempts"
			continue
		}
		e := &OperatorError{File: filepath.Base(op.File), Field: field}
		if field != "onTimeout" {
			e.Problem = fmt.Sprintf(`"retry" needs an idempotent command, and the module does not declare %s idempotent (a retry would run its effects twice): write "onTimeout": "fail", or remove "onTimeout" and "retries" from the entry`, c.Name)
			return e
		}
		fix := `remove "onTimeout" and "retries": the module declares no idempotent command`
		if len(idempotent) > 0 {
			fix = fmt.Sprintf(`set it per command instead, on idempotent commands only (%s), e.g. "commands": {%q: {"onTimeout": "retry", "retries": %d}}, and remove "onTimeout" and "retries" here`,
				strings.Join(idempotent, ", "), idempotent[0], o.Retries)
		}
		e.Problem = fmt.Sprintf(`"retry" applies to every command of the plugin, and the module does not declare %s idempotent (a retry would run its effects twice): %s`, c.Name, fix)
		return e
	}
	return nil
}
