// Package metrics exports the host's metrics in the Prometheus text format
// (serve --metrics ADDR). A Collector is the executor's rpc.Observer
// (requests, latencies) and an events.Sink (timeouts, budget warnings), and
// reads the rest at scrape time: the
// dedup store's size and the reuse cache's counters from the executor, the
// plugins' instances, reloads, load failures and calls from the plugin
// manager's Status.
//
// Metrics:
//
//	cmdhost_requests_total{command,status}       counter; status "none" when no reply is owed
//	cmdhost_request_duration_seconds{command}    histogram, receipt to reply known
//	cmdhost_timeouts_total{command,type,policy}  counter; type execution, expiry, queue, nested or sync
//	cmdhost_budget_warnings_total{command,type}  counter; calls past 80 % of their budget
//	cmdhost_replies_dropped_total{command,reason} counter; replies the broker would refuse, not sent
//	cmdhost_dedup_store_unavailable_total{command,reason} counter; requests the shared dedup store could not record
//	cmdhost_dedup_entries                        gauge
//	cmdhost_dedup_bytes                          gauge; bytes of the replies the dedup store holds (serve --max-dedup-bytes)
//	cmdhost_dedup_digests_total                  counter; replies kept as a digest: over --max-dedup-bytes
//	cmdhost_reuse_hits_total                     counter
//	cmdhost_reuse_misses_total                   counter
//	cmdhost_reuse_evictions_total                counter
//	cmdhost_reuse_cost_bytes                     gauge
//	cmdhost_reuse_shared_hits_total              counter; hits found in Redis (serve --store), in hits_total too
//	cmdhost_reuse_shared_errors_total            counter; calls to the reuse cache's Redis that failed
//	cmdhost_reuse_shared_over_budget_total       counter; replies kept out of Redis: this host's share there was full
//	cmdhost_response_topics_refused_total        counter; requests whose response topic a client may not publish to (acked, not answered)
//	cmdhost_replies_unacknowledged_total         counter; replies the broker did not ack in time, their send slots released
//	cmdhost_broker_connections_recycled_total    counter; connections dropped because the broker acked nothing for too long
//	cmdhost_session_takeovers_total              counter; DISCONNECTs "session taken over" (another client with the host's id)
//	cmdhost_sessions_lost_total                  counter; reconnections that found the host's session gone
//	cmdhost_replies_awaiting_ack                 gauge; replies waiting for the broker's PUBACK
//	cmdhost_broker_clients_refused_total         counter; embedded broker: CONNECTs refused (reserved id, too many clients)
//	cmdhost_broker_pending_closed_total          counter; embedded broker: connections closed before their CONNECT
//	cmdhost_broker_logins_throttled_total        counter; embedded broker: password logins refused without a check (0x9F)
//	cmdhost_broker_clients_dropped_total         counter; embedded broker: clients disconnected for not reading or not acknowledging
//	cmdhost_broker_messages_dropped_total        counter; embedded broker: messages not delivered to a client over its in-flight bounds, or dropped from what it held
//	cmdhost_broker_held_bytes                    gauge; embedded broker: bytes held for its clients (unacknowledged, queued)
//	cmdhost_broker_packets_too_large_total       counter; embedded broker: connections ended for a packet over --max-request-bytes
//	cmdhost_guest_memory_limit_bytes             gauge; serve --max-guest-memory
//	cmdhost_guest_memory_reserved_bytes          gauge; what live instances reserve of it
//	cmdhost_guest_memory_refusals_total          counter; nested calls refused 503: the budget was full
//	cmdhost_plugin_instances{plugin}             gauge
//	cmdhost_plugin_reloads_total{plugin}         counter
//	cmdhost_plugin_load_failures_total{plugin}   counter
//	cmdhost_plugin_calls_total{plugin}           counter
//	cmdhost_plugin_mount_refusals_total{plugin}  counter; file system calls refused for leaving a mount
//	cmdhost_plugin_fuel_units{plugin}            histogram; work units (fuel) per call, buckets 10^3 to 10^11
//	cmdhost_http_requests_total{plugin,outcome}  counter; handlers' outbound HTTP requests: 2xx to 5xx, or the failure (denied, timeout, ...)
//	cmdhost_http_request_duration_seconds{plugin} histogram; their time, buckets 5 ms to 30 s
//	cmdhost_plugin_state_ops_total{plugin,op,result} counter; the guest's state calls (the results seen only)
//	cmdhost_state_commits_total{result}          counter; state store commits: applied, conflict, refused, failed
//	cmdhost_state_batches_total                  counter; batches written, one sync each (group commit)
//	cmdhost_state_commit_duration_seconds        histogram; a commit's wait, apply and sync
//	cmdhost_state_namespace_keys{namespace}      gauge; at most MaxNamespaceSeries namespaces
//	cmdhost_state_namespace_bytes{namespace}     gauge; keys plus values
//	cmdhost_state_namespaces                     gauge
//	cmdhost_state_keys                           gauge; every namespace together
//	cmdhost_state_bytes                          gauge; every namespace together
//	cmdhost_state_max_bytes                      gauge; serve --state-max-bytes
//	cmdhost_state_healthy                        gauge; 0 once a write failed or the store closed (/readyz says why)
//	cmdhost_outbox_sent_total                    counter; messages handlers published, acknowledged by the broker
//	cmdhost_outbox_dropped_total                 counter; refused by the broker, never sendable, or in memory at a stop
//	cmdhost_outbox_retries_total                 counter; sends that failed and are tried again
//	cmdhost_outbox_taken_over_total              counter; messages taken over from a replica that did not send them (--store)
//	cmdhost_outbox_queued_bytes                  gauge; non-idempotent calls' messages not yet acknowledged
//	cmdhost_trigger_messages_total{trigger,outcome} counter; handled, duplicate or dropped (triggers.go)
//	cmdhost_trigger_failures_total{trigger,reason}  counter; failed attempts: error, timeout, commit
//	cmdhost_trigger_duration_seconds{trigger}       histogram, receipt to done
//
// plus the Go runtime's and the process's standard collectors.
package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/httpout"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// DurationBuckets are the request duration histogram's buckets, in
// seconds: 0.5 ms to 30 s.
var DurationBuckets = []float64{
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
}

// Sources are what a Collector reads at scrape time: the executor's dedup
// store and reuse cache, and the plugins. A nil source reads as zero
// (Plugins: no plugin series).
type Sources struct {
	DedupLen func() int
	// Dedup reads the dedup store's byte counters.
	Dedup   func() cache.DedupStats
	Reuse   func() cache.ReuseStats
	Plugins func() []plugins.PluginStatus
	// Session reads the executor's connection counters
	// (rpc.Executor.SessionStats); nil reads as zero.
	Session func() rpc.SessionStats
	// Broker reads the embedded broker's counters (nil with an external
	// broker: zero); GuestMemory the engine's guest memory budget
	// (bounds.go).
	Broker      func() broker.Stats
	GuestMemory func() wasm.GuestMemoryStats
	// HTTP reads the plugins' outbound HTTP counters
	// (wasm.Engine.HTTPStats); nil: no series.
	HTTP func() map[string]httpout.Snapshot
	// State returns the handlers' state store (state.go); nil, or nil
	// returned: no state metrics.
	State func() StateSource
	// Outbox reads the outbox's counters (outbox.go); nil reads as zero.
	Outbox func() OutboxStats
}

// Collector holds the host's metrics on a registry of its own (never the
// global one). It implements rpc.Observer.
type Collector struct {
	reg       *prometheus.Registry
	src       Sources
	requests  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	timeouts  *prometheus.CounterVec
	warnings  *prometheus.CounterVec
	dropped   *prometheus.CounterVec
	storeDown *prometheus.CounterVec
	triggers  triggerMetrics // triggers.go
}

var (
	_ rpc.Observer = (*Collector)(nil)
	_ events.Sink  = (*Collector)(nil)
)

// New returns a collector reading src. It is the executor's
// Config.Observer.
func New(src Sources) *Collector {
	c := &Collector{
		reg: prometheus.NewRegistry(),
		src: src,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cmdhost_requests_total",
			Help: "Requests received for served commands (duplicates excluded), by command and reply status (\"none\": no reply owed).",
		}, []string{"command", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cmdhost_request_duration_seconds",
			Help:    "Time from a request's receipt until its reply is known, by command.",
			Buckets: DurationBuckets,
		}, []string{"command"}),
		timeouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cmdhost_timeouts_total",
			Help: "Timeouts, by command, type (execution: 408 or a retry; expiry: cut while running; queue: expired waiting for a slot; nested: a nested call's deadline; sync: a fan-out's synchronization timeout) and the policy applied.",
		}, []string{"command", "type", "policy"}),
		warnings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cmdhost_budget_warnings_total",
			Help: "Calls still running past 80 % of their budget, by command and the budget's type (execution timeout or expiry).",
		}, []string{"command", "type"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cmdhost_replies_dropped_total",
			Help: "Replies not sent as made because the broker would refuse them, by command and reason (too_large: over the broker's maximum packet size; invalid: a string it refuses or a payload marked UTF-8 that is not); a short 500 went instead when it could.",
		}, []string{"command", "reason"}),
		storeDown: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cmdhost_dedup_store_unavailable_total",
			Help: "Requests the shared dedup store (serve --store) could not record, by command and reason (unreachable: Redis did not answer or answered an error; full: it reached its maxmemory): a non-idempotent command's were answered 503 and not run, an idempotent command's ran unrecorded.",
		}, []string{"command", "reason"}),
	}
	c.reg.MustRegister(
		c.requests, c.duration, c.timeouts, c.warnings, c.dropped, c.storeDown,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cmdhost_dedup_entries",
			Help: "Entries in the dedup store, expired ones not yet swept included.",
		}, func() float64 { return float64(c.dedupLen()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cmdhost_dedup_bytes",
			Help: "Bytes of the replies the dedup store holds for duplicates, in memory (0 with serve --store: they are in Redis); bounded by serve --max-dedup-bytes.",
		}, func() float64 { return float64(c.dedup().Bytes) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cmdhost_dedup_digests_total",
			Help: "Replies the dedup store kept as a digest because keeping them whole would pass serve --max-dedup-bytes: a duplicate of their request gets 500, and the request is not run again.",
		}, func() float64 { return float64(c.dedup().Digested) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cmdhost_reuse_hits_total",
			Help: "Requests answered from the reuse cache of idempotent replies.",
		}, func() float64 { return float64(c.reuse().Hits) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cmdhost_reuse_misses_total",
			Help: "Reuse cache lookups that found no fresh reply.",
		}, func() float64 { return float64(c.reuse().Misses) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cmdhost_reuse_evictions_total",
			Help: "Fresh replies evicted from the reuse cache by its size bound.",
		}, func() float64 { return float64(c.reuse().Evictions) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cmdhost_reuse_cost_bytes",
			Help: "Bytes held by the reuse cache, as its cost accounting counts them.",
		}, func() float64 { return float64(c.reuse().CostUsed) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cmdhost_reuse_shared_hits_total",
			Help: "Reuse cache hits found in the shared Redis tier (serve --store), a reply computed by another replica or before a restart; counted in cmdhost_reuse_hits_total too.",
		}, func() float64 { return float64(c.reuse().SharedHits) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cmdhost_reuse_shared_errors_total",
			Help: "Calls to the reuse cache's shared Redis tier that failed; the host then reuses from memory alone for a second.",
		}, func() float64 { return float64(c.reuse().SharedErrors) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cmdhost_reuse_shared_over_budget_total",
			Help: "Reusable replies kept in memory only because this host already held its --reuse-max-bytes in the shared Redis tier.",
		}, func() float64 { return float64(c.reuse().SharedOverBudget) }),
		&pluginCollector{status: src.Plugins},
		sessionCounter("cmdhost_response_topics_refused_total",
			"Requests refused for their response topic ($-topics, wildcards, empty, unsendable): acked, not answered.",
			c.session, func(s rpc.SessionStats) float64 { return float64(s.ResponseTopicsRefused) }),
		sessionCounter("cmdhost_replies_unacknowledged_total",
			"Replies the broker did not acknowledge within their bound (their expiry, at most 30 s): their send slots were released and they are not resent.",
			c.session, func(s rpc.SessionStats) float64 { return float64(s.RepliesAbandoned) }),
		sessionCounter("cmdhost_broker_connections_recycled_total",
			"Connections to the broker dropped (and made again) because it acknowledged none of the host's replies for 30 s.",
			c.session, func(s rpc.SessionStats) float64 { return float64(s.ConnectionsRecycled) }),
		sessionCounter("cmdhost_session_takeovers_total",
			"DISCONNECTs \"session taken over\" from the broker: another client connected with the host's client id.",
			c.session, func(s rpc.SessionStats) float64 { return float64(s.SessionTakeovers) }),
		sessionCounter("cmdhost_sessions_lost_total",
			"Reconnections that found no session at the broker although the host had one (taken by a client with a clean start, or a broker restart).",
			c.session, func(s rpc.SessionStats) float64 { return float64(s.SessionsLost) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cmdhost_replies_awaiting_ack",
			Help: "Replies sent and waiting for the broker's PUBACK, each holding one slot of its Receive Maximum.",
		}, func() float64 { return float64(c.session().RepliesWaiting) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	c.reg.MustRegister(c.boundCollectors()...)
	c.reg.MustRegister(c.outboxCollectors()...)
	c.reg.MustRegister(&httpCollector{stats: src.HTTP})
	c.reg.MustRegister(&stateCollector{src: src.State})
	c.triggers = newTriggerMetrics(c.reg)
	return c
}

// Registry returns the collector's registry, for further collectors.
func (c *Collector) Registry() *prometheus.Registry { return c.reg }

// Request implements rpc.Observer.
func (c *Collector) Request(command string, status int, answered bool, d time.Duration) {
	label := "none"
	if answered {
		label = strconv.Itoa(status)
	}
	c.requests.WithLabelValues(command, label).Inc()
	c.duration.WithLabelValues(command).Observe(d.Seconds())
}

// ReplyDropped implements rpc.Observer.
func (c *Collector) ReplyDropped(command, reason string) {
	c.dropped.WithLabelValues(command, reason).Inc()
}

// StoreUnavailable implements rpc.Observer.
func (c *Collector) StoreUnavailable(command, reason string) {
	c.storeDown.WithLabelValues(command, reason).Inc()
}

// Emit implements events.Sink: it counts timeouts and budget warnings.
func (c *Collector) Emit(ev events.Event) {
	switch ev.Kind {
	case events.KindTimeout:
		c.timeouts.WithLabelValues(ev.Command, ev.Type, string(ev.Policy)).Inc()
	case events.KindBudgetWarning:
		c.warnings.WithLabelValues(ev.Command, ev.Type).Inc()
	}
}

func (c *Collector) dedupLen() int {
	if c.src.DedupLen != nil {
		return c.src.DedupLen()
	}
	return 0
}

func (c *Collector) dedup() cache.DedupStats {
	if c.src.Dedup != nil {
		return c.src.Dedup()
	}
	return cache.DedupStats{}
}

func (c *Collector) session() rpc.SessionStats {
	if c.src.Session != nil {
		return c.src.Session()
	}
	return rpc.SessionStats{}
}

// sessionCounter is a counter of the executor's SessionStats, read at
// scrape time.
func sessionCounter(name, help string, read func() rpc.SessionStats, field func(rpc.SessionStats) float64) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return field(read()) })
}

func (c *Collector) reuse() cache.ReuseStats {
	if c.src.Reuse != nil {
		return c.src.Reuse()
	}
	return cache.ReuseStats{}
}

// pluginCollector reads the plugin manager's Status at scrape time.
type pluginCollector struct {
	status func() []plugins.PluginStatus
}

var (
	pluginInstances = prometheus.NewDesc("cmdhost_plugin_instances",
		"Instances of the plugin alive now (draining versions' included).", []string{"plugin"}, nil)
	pluginReloads = prometheus.NewDesc("cmdhost_plugin_reloads_total",
		"Times a new version of the plugin replaced a serving one.", []string{"plugin"}, nil)
	pluginLoadFailures = prometheus.NewDesc("cmdhost_plugin_load_failures_total",
		"Loads of the plugin refused (bad module, command clash, unreadable file).", []string{"plugin"}, nil)
	pluginCalls = prometheus.NewDesc("cmdhost_plugin_calls_total",
		"Calls of the plugin's commands, over all its versions.", []string{"plugin"}, nil)
	pluginOutputDropped = prometheus.NewDesc("cmdhost_guest_output_dropped_lines_total",
		"Lines of the plugin's stdout, stderr and log calls dropped over its output limits.", []string{"plugin"}, nil)
	pluginMountRefusals = prometheus.NewDesc("cmdhost_plugin_mount_refusals_total",
		"File system calls of the plugin refused because they would have left its mounts (a symlink, .., link or rename out).", []string{"plugin"}, nil)
	pluginStateOps = prometheus.NewDesc("cmdhost_plugin_state_ops_total",
		"The plugin's calls to the state store, by op (get, set, delete, add, list) and result (ok, not_found, conflict, quota, too_large, denied, unavailable, …); a result never seen has no series.",
		[]string{"plugin", "op", "result"}, nil)
	pluginFuel = prometheus.NewDesc("cmdhost_plugin_fuel_units",
		"Work units (fuel: about one per WebAssembly instruction) each call of the plugin used, failed calls included, over all its versions.", []string{"plugin"}, nil)
)

func (p *pluginCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- pluginInstances
	ch <- pluginReloads
	ch <- pluginLoadFailures
	ch <- pluginCalls
	ch <- pluginOutputDropped
	ch <- pluginMountRefusals
	ch <- pluginStateOps
	ch <- pluginFuel
}

func (p *pluginCollector) Collect(ch chan<- prometheus.Metric) {
	if p.status == nil {
		return
	}
	for _, st := range p.status() {
		ch <- prometheus.MustNewConstMetric(pluginInstances, prometheus.GaugeValue, float64(st.Instances), st.Name)
		ch <- prometheus.MustNewConstMetric(pluginReloads, prometheus.CounterValue, float64(st.Reloads), st.Name)
		ch <- prometheus.MustNewConstMetric(pluginLoadFailures, prometheus.CounterValue, float64(st.LoadFailures), st.Name)
		ch <- prometheus.MustNewConstMetric(pluginCalls, prometheus.CounterValue, float64(st.Calls), st.Name)
		ch <- prometheus.MustNewConstMetric(pluginOutputDropped, prometheus.CounterValue, float64(st.OutputDroppedLines), st.Name)
		ch <- prometheus.MustNewConstMetric(pluginMountRefusals, prometheus.CounterValue, float64(st.MountRefusals), st.Name)
		for op, results := range st.StateOps {
			for result, n := range results {
				if n > 0 {
					ch <- prometheus.MustNewConstMetric(pluginStateOps, prometheus.CounterValue, float64(n), st.Name,
						wasm.StateOpNames[op], wasm.StateResultNames[result])
				}
			}
		}
		buckets := make(map[float64]uint64, len(wasm.FuelBuckets))
		for i, b := range wasm.FuelBuckets {
			buckets[float64(b)] = uint64(st.Fuel.Buckets[i])
		}
		ch <- prometheus.MustNewConstHistogram(pluginFuel, uint64(st.Fuel.Calls), float64(st.Fuel.Sum), buckets, st.Name)
	}
}
