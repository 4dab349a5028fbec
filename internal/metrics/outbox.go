package metrics

import "github.com/prometheus/client_golang/prometheus"

// OutboxStats are the counters of the messages handlers publish (package
// outbox, Sources.Outbox): an outbox whose queued bytes grow while its
// sent count stands still has a broker that does not take its messages.
type OutboxStats struct {
	Sent, Dropped, Retries uint64
	// TakenOver counts the messages this host took over from a replica
	// that read them and did not send them (the outbox in Redis).
	TakenOver uint64
	// QueuedBytes is what the outbox holds, not yet acknowledged by the
	// broker (on disk, or, with --store, in Redis as last read).
	QueuedBytes int64
}

// outboxCollectors are the outbox's metrics.
func (c *Collector) outboxCollectors() []prometheus.Collector {
	stats := func() OutboxStats {
		if c.src.Outbox == nil {
			return OutboxStats{}
		}
		return c.src.Outbox()
	}
	counter := func(name, help string, field func(OutboxStats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(field(stats())) })
	}
	return []prometheus.Collector{
		counter("cmdhost_outbox_sent_total", "Messages handlers published that the broker acknowledged (PUBACK).",
			func(s OutboxStats) uint64 { return s.Sent }),
		counter("cmdhost_outbox_dropped_total", "Messages handlers published that were dropped: refused by the broker, never sendable, or waiting in memory when the host stopped.",
			func(s OutboxStats) uint64 { return s.Dropped }),
		counter("cmdhost_outbox_retries_total", "Sends of messages that failed (no broker acknowledgement in time, not connected) and are tried again.",
			func(s OutboxStats) uint64 { return s.Retries }),
		counter("cmdhost_outbox_taken_over_total", "Messages this host took over from a replica that read them and did not send them within the claim idle time (--store).",
			func(s OutboxStats) uint64 { return s.TakenOver }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cmdhost_outbox_queued_bytes",
			Help: "Bytes of non-idempotent calls' messages waiting in the outbox for the broker's acknowledgement (the state folder's, or with --store Redis's, as last read).",
		}, func() float64 { return float64(stats().QueuedBytes) }),
	}
}
