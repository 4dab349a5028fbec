package host

import (
	"slices"

	"github.com/cmdhost/cmdhost/host/events"
	"github.com/cmdhost/cmdhost/plugins"
)

// EventsWithPlugins names, in each event, the plugin serving its command
// and that plugin's module digest (the executor knows only commands), then
// hands the event to next. status is the plugins manager's Status; it is
// read per event, and events are rare (timeouts and warnings).
func EventsWithPlugins(status func() []plugins.PluginStatus, next events.Sink) events.Sink {
	return events.SinkFunc(func(ev events.Event) {
		if ev.Plugin == "" {
			for _, p := range status() {
				if p.Digest != "" && slices.Contains(p.Commands, ev.Command) {
					ev.Plugin, ev.Digest = p.Name, p.Digest
					break
				}
			}
		}
		next.Emit(ev)
	})
}

// EventsTopic is the topic of the timeout events' telemetry of an
// executor (serve --events).
func EventsTopic(executorID string) string { return "cmdhost/" + executorID + "/events" }
