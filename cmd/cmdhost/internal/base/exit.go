package base

// Exit statuses of the subcommands that call a host over MQTT (invoke,
// watch, plugin list/reload/remove), one per kind of failure so that a script
// can tell them apart (docs/cli.md "Exit status").
const (
	ExitFailed      = 1 // an error status from the host, or a failure not named below
	ExitNoBroker    = 3 // nothing answers at --broker
	ExitNoExecutor  = 4 // no executor answers on the topic: no host with that --executor
	ExitNoCommand   = 5 // the host answers but serves no such command
	ExitTimeout     = 6 // no reply before --timeout
	ExitInterrupted = 130
)
