package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cmdhost/cmdhost/internal/trigger"
)

// The triggers' metrics (trigger.Observer):
//
//	cmdhost_trigger_messages_total{trigger,outcome}     counter; handled, duplicate (an id handled before) or dropped
//	cmdhost_trigger_failures_total{trigger,reason}      counter; failed attempts: error, timeout or commit
//	cmdhost_trigger_duration_seconds{trigger}           histogram, receipt to done

var _ trigger.Observer = (*Collector)(nil)

// triggerMetrics are the Collector's trigger series.
type triggerMetrics struct {
	messages, failures *prometheus.CounterVec
	duration           *prometheus.HistogramVec
}

func newTriggerMetrics(reg *prometheus.Registry) triggerMetrics {
	m := triggerMetrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cmdhost_trigger_messages_total",
			Help: "Messages received for the plugins' triggers, by trigger and outcome: handled, duplicate (its id was handled before: acknowledged, not run), dropped (its attempts failed, or it was refused).",
		}, []string{"trigger", "outcome"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cmdhost_trigger_failures_total",
			Help: "Failed attempts of the triggers' handlers, by trigger and reason (error: an error status or a trap; timeout: the execution timeout; commit: the state store refused the commit); each is run again while its attempts last.",
		}, []string{"trigger", "reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cmdhost_trigger_duration_seconds",
			Help:    "Time from a trigger's message's receipt until it is done (handled, a duplicate or dropped), by trigger.",
			Buckets: DurationBuckets,
		}, []string{"trigger"}),
	}
	reg.MustRegister(m.messages, m.failures, m.duration)
	return m
}

// TriggerMessage implements trigger.Observer.
func (c *Collector) TriggerMessage(name, outcome string, d time.Duration) {
	c.triggers.messages.WithLabelValues(name, outcome).Inc()
	c.triggers.duration.WithLabelValues(name).Observe(d.Seconds())
}

// TriggerFailure implements trigger.Observer.
func (c *Collector) TriggerFailure(name, reason string) {
	c.triggers.failures.WithLabelValues(name, reason).Inc()
}
