package metrics

import (
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/trigger"
)

func TestTriggerMetrics(t *testing.T) {
	c := New(Sources{})
	var obs trigger.Observer = c
	obs.TriggerMessage("on-temp", trigger.OutcomeHandled, 2*time.Millisecond)
	obs.TriggerMessage("on-temp", trigger.OutcomeHandled, 3*time.Millisecond)
	obs.TriggerMessage("on-temp", trigger.OutcomeDropped, time.Second)
	obs.TriggerMessage("on-temp", trigger.OutcomeDuplicate, time.Millisecond)
	obs.TriggerFailure("on-temp", trigger.ReasonTimeout)
	obs.TriggerFailure("on-temp", trigger.ReasonError)
	obs.TriggerFailure("on-temp", trigger.ReasonError)
	lines := scrape(t, c.Handler())
	expect(t, lines,
		"# TYPE cmdhost_trigger_messages_total counter",
		`cmdhost_trigger_messages_total{outcome="handled",trigger="on-temp"} 2`,
		`cmdhost_trigger_messages_total{outcome="dropped",trigger="on-temp"} 1`,
		`cmdhost_trigger_messages_total{outcome="duplicate",trigger="on-temp"} 1`,
		`cmdhost_trigger_failures_total{reason="error",trigger="on-temp"} 2`,
		`cmdhost_trigger_failures_total{reason="timeout",trigger="on-temp"} 1`,
		`cmdhost_trigger_duration_seconds_count{trigger="on-temp"} 4`,
	)
	absent(t, scrape(t, New(Sources{}).Handler()), "cmdhost_trigger_messages_total{")
}
