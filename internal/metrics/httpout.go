package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cmdhost/cmdhost/internal/httpout"
)

// httpCollector reads the plugins' outbound HTTP counters at scrape time
// (wasm.Engine.HTTPStats).
type httpCollector struct {
	stats func() map[string]httpout.Snapshot
}

var (
	httpRequests = prometheus.NewDesc("cmdhost_http_requests_total",
		"Outbound HTTP requests of the plugin's handlers, by outcome: the response's status class (2xx to 5xx), or why there was none (denied, dns, connect, tls, timeout, too_large, limit, redirects, invalid, failed).",
		[]string{"plugin", "outcome"}, nil)
	httpDuration = prometheus.NewDesc("cmdhost_http_request_duration_seconds",
		"Time of the plugin's outbound HTTP requests, from the handler's call until the response's body was read or the request failed.",
		[]string{"plugin"}, nil)
)

func (h *httpCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- httpRequests
	ch <- httpDuration
}

func (h *httpCollector) Collect(ch chan<- prometheus.Metric) {
	if h.stats == nil {
		return
	}
	for plugin, s := range h.stats() {
		for outcome, n := range s.Requests {
			ch <- prometheus.MustNewConstMetric(httpRequests, prometheus.CounterValue, float64(n), plugin, outcome)
		}
		buckets := make(map[float64]uint64, len(httpout.DurationBuckets))
		for i, b := range httpout.DurationBuckets {
			buckets[b] = s.Buckets[i]
		}
		ch <- prometheus.MustNewConstHistogram(httpDuration, s.Count, s.Sum, buckets, plugin)
	}
}
