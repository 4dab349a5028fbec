package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// boundCollectors are the metrics of the host's resource bounds that hold
// off hostile clients and plugins: the embedded broker's refusals and drops
// (Sources.Broker) and the guest memory budget (Sources.GuestMemory). An
// operator who sees them climb knows who is being pushed back, and which
// serve flag sets the bound.
func (c *Collector) boundCollectors() []prometheus.Collector {
	brokerCounter := func(name, help string, field func(broker.Stats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 {
			if c.src.Broker == nil {
				return 0
			}
			return float64(field(c.src.Broker()))
		})
	}
	guest := func() wasm.GuestMemoryStats {
		if c.src.GuestMemory == nil {
			return wasm.GuestMemoryStats{}
		}
		return c.src.GuestMemory()
	}
	return []prometheus.Collector{
		brokerCounter("cmdhost_broker_clients_refused_total",
			"Clients the embedded broker refused: a client id the host uses, over --broker-max-clients, or too many connections open.",
			func(s broker.Stats) uint64 { return s.ClientsRefused }),
		brokerCounter("cmdhost_broker_clients_dropped_total",
			"Clients the embedded broker disconnected because they did not read what they were sent (a socket that took nothing for the write timeout, or over --broker-queue-bytes), acknowledged none of it for a minute, or held the most when all held --broker-held-bytes.",
			func(s broker.Stats) uint64 { return s.ClientsDropped }),
		brokerCounter("cmdhost_broker_messages_dropped_total",
			"Messages the embedded broker did not deliver to a client that left --broker-max-inflight messages or --broker-inflight-bytes unacknowledged, whose packet queue was full or whose session was left long ago, and messages held for a client that were dropped.",
			func(s broker.Stats) uint64 { return s.MessagesDropped }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cmdhost_broker_held_bytes",
			Help: "Bytes the embedded broker holds for its clients over the network: messages they have not acknowledged and bytes queued for their sockets (bounded by --broker-held-bytes).",
		}, func() float64 {
			if c.src.Broker == nil {
				return 0
			}
			return float64(c.src.Broker().HeldBytes)
		}),
		brokerCounter("cmdhost_broker_packets_too_large_total",
			"Connections the embedded broker ended for a packet over --max-request-bytes, before reading its body.",
			func(s broker.Stats) uint64 { return s.PacketsTooLarge }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cmdhost_guest_memory_limit_bytes",
			Help: "The host-wide budget of guest memory (serve --max-guest-memory).",
		}, func() float64 { return float64(guest().Limit) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cmdhost_guest_memory_reserved_bytes",
			Help: "Guest memory the live plugin instances reserve of the budget (each its memory limit plus the runtime's overhead).",
		}, func() float64 { return float64(guest().Reserved) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cmdhost_guest_memory_refusals_total",
			Help: "Nested calls refused at once (503) because the guest memory budget was full even after closing every idle instance.",
		}, func() float64 { return float64(guest().Refusals) }),
	}
}
