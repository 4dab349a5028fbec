package host

import "github.com/cmdhost/cmdhost/internal/events"

// eventsWithPlugins names, in each event, the plugin serving its command
// and that plugin's module digest (the executor knows only commands), then
// hands the event to next. origin is the plugins manager's Origin: a
// lock-free read of the served snapshot.
func eventsWithPlugins(origin func(command string) (plugin, digest string, ok bool), next events.Sink) events.Sink {
	return events.SinkFunc(func(ev events.Event) {
		if ev.Plugin == "" {
			if plugin, digest, ok := origin(ev.Command); ok {
				ev.Plugin, ev.Digest = plugin, digest
			}
		}
		next.Emit(ev)
	})
}
