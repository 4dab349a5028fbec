package plugins

import (
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/setting"
	"github.com/cmdhost/cmdhost/internal/topic"
)

// Defaults are the host's settings for what neither a plugin's operator
// file nor its module sets (serve --exec-timeout and --pool).
type Defaults struct {
	// ExecTimeout is the execution timeout of a command nothing else gives
	// one; 0: DefaultExecTimeout, NoTimeout: none, only the request's
	// expiry bounds its calls.
	ExecTimeout time.Duration
	// Concurrency is the calls at once per command when the operator file
	// sets neither "concurrency" nor "pool"; 0: Config.Plugin.PoolSize,
	// the plugin's instance count.
	Concurrency int
}

// DefaultExecTimeout is Defaults.ExecTimeout when it is not set (the
// default of serve --exec-timeout).
const DefaultExecTimeout = 10 * time.Second

// NoTimeout, as Defaults.ExecTimeout, gives the commands nothing else
// gives a timeout none (setting.Off).
const NoTimeout = setting.Off

// withDefaults resolves the zero fields (package setting's rule) but
// Concurrency, which the Manager resolves from its Config.Plugin.
func (d Defaults) withDefaults() Defaults {
	d.ExecTimeout = setting.Or(d.ExecTimeout, DefaultExecTimeout)
	return d
}

// execTimeout is the host's execution timeout as Command.Timeout says it:
// 0 for none.
func (d Defaults) execTimeout() time.Duration {
	if setting.IsOff(d.ExecTimeout) {
		return 0
	}
	return d.ExecTimeout
}

// Command is a command as it is served: as its module declares it, with
// every setting resolved once, here, from the plugin's operator file, the
// module and the host's Defaults. The executor, nested calls, the admin
// ops and the CLI all read these values; none resolves them again.
type Command struct {
	// Plugin is the plugin serving the command.
	Plugin string
	// Declared is the command as the module declares it.
	Declared abi.Command
	// Topic is the request topic pattern: the declared one, else
	// topic.Default.
	Topic string
	// Timeout is the execution timeout, first found: the operator file's
	// "commands" entry's, the file's "timeout", the module's declared
	// default, Defaults.ExecTimeout; 0: none. The request's expiry caps
	// it at run time.
	Timeout time.Duration
	// TimeoutSource says where Timeout comes from.
	TimeoutSource TimeoutSource
	// OnTimeout is the on_timeout policy: the operator file's "commands"
	// entry's, else the file's, else fail. A retry policy is only ever set
	// on a command the module declares idempotent (a load that would do
	// otherwise is refused).
	OnTimeout OnTimeout
	// Concurrency is the calls at once the command is allowed: the
	// operator file's "concurrency", else its "pool", else
	// Defaults.Concurrency.
	Concurrency int
	// Allow is who may call the command (its verified callers): the
	// operator file's "commands" entry's "allow", else the file's; nil
	// when neither sets one: anyone, verified or not.
	Allow *Callers
	// Quota bounds each caller's calls: the "commands" entry's "quota"
	// (QuotaKey "PLUGIN/COMMAND": the command's calls alone), else the
	// file's (QuotaKey "PLUGIN": the plugin's commands together); zero:
	// none.
	Quota    Quota
	QuotaKey string
	// CommitErrors commits the state writes of the command's calls that
	// answer an error too (the operator file's "state": {"commitErrors"}).
	CommitErrors bool
	// Trigger is how a trigger is served (operator_triggers.go); nil for
	// a command, which has a request topic. A trigger has none (Topic is
	// "").
	Trigger *Trigger
}

// Name is the command's name.
func (c Command) Name() string { return c.Declared.Name }

// Resolve returns the module's command c of plugin as served with the
// operator file op (nil: none) by a host with the defaults d.
func Resolve(plugin string, c abi.Command, op *Operator, d Defaults) Command {
	d = d.withDefaults()
	out := Command{Plugin: plugin, Declared: c, Topic: c.Topic,
		OnTimeout: op.onTimeoutOf(c.Name), Concurrency: op.concurrency()}
	if out.Topic == "" {
		out.Topic = topic.Default
	}
	out.Timeout, out.TimeoutSource = op.execTimeout(c, d.execTimeout())
	out.Allow = op.allowOf(c.Name)
	out.Quota, out.QuotaKey = op.quotaOf(plugin, c.Name)
	out.CommitErrors = op != nil && op.State != nil && op.State.CommitErrors
	if out.Concurrency == 0 {
		out.Concurrency = d.Concurrency
	}
	if c.IsTrigger() {
		out.Topic = ""
		out.Trigger = op.triggerOf(c, out.Concurrency)
	}
	return out
}
