package metrics

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cmdhost/cmdhost/internal/state"
)

// StateSource is what the state store's metrics read at scrape time:
// *state.Disk.
type StateSource interface {
	Stats() state.Stats
	Namespaces(ctx context.Context) (map[string]state.Usage, error)
	Limits() state.Limits
	Health() error
}

// MaxNamespaceSeries bounds the namespaces the per-namespace gauges
// show, the first in byte order; cmdhost_state_namespaces counts them
// all. Namespaces are the plugins' (bounded by the plugins folder, a
// removed plugin's kept until its keys are deleted) and the shared ones
// operator files grant, so the bound is seldom reached.
const MaxNamespaceSeries = 500

var (
	stateCommits = prometheus.NewDesc("cmdhost_state_commits_total",
		"Commits of the state store (a call's writes with its outcome, an admin op's write), by result: applied; conflict (a condition failed: the call runs again); refused (a bound or a fence); failed (the store could not write).",
		[]string{"result"}, nil)
	stateBatches = prometheus.NewDesc("cmdhost_state_batches_total",
		"Batches the state store wrote, each with one sync: commits that arrive together share one (group commit).", nil, nil)
	stateCommitSeconds = prometheus.NewDesc("cmdhost_state_commit_duration_seconds",
		"Time from a commit to its fate known: the wait for the writer, the batch's apply and its sync.", nil, nil)
	stateNamespaceKeys = prometheus.NewDesc("cmdhost_state_namespace_keys",
		"Keys a state namespace holds (plugin/NAME, shared/NAME, aio), expired ones not yet swept included.", []string{"namespace"}, nil)
	stateNamespaceBytes = prometheus.NewDesc("cmdhost_state_namespace_bytes",
		"Bytes (keys plus values) a state namespace holds.", []string{"namespace"}, nil)
	stateNamespaces = prometheus.NewDesc("cmdhost_state_namespaces",
		"State namespaces that hold keys.", nil, nil)
	stateKeys = prometheus.NewDesc("cmdhost_state_keys",
		"Keys the state store holds, every namespace together.", nil, nil)
	stateBytes = prometheus.NewDesc("cmdhost_state_bytes",
		"Bytes (keys plus values) the state store holds, every namespace together.", nil, nil)
	stateMaxBytes = prometheus.NewDesc("cmdhost_state_max_bytes",
		"The state store's bound of keys and values (serve --state-max-bytes).", nil, nil)
	stateHealthy = prometheus.NewDesc("cmdhost_state_healthy",
		"1 while the state store writes, 0 once a write failed (until one succeeds again) or it is closed; /readyz says why.", nil, nil)
)

// stateCollector reads the state store at scrape time; with no store
// (Sources.State nil, or returning nil) it reports nothing.
type stateCollector struct {
	src func() StateSource
}

// Describe describes nothing: the collector is unchecked, its metrics
// present only with a state store.
func (c *stateCollector) Describe(chan<- *prometheus.Desc) {}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	if c.src == nil {
		return
	}
	src := c.src()
	if src == nil {
		return
	}
	st := src.Stats()
	for _, r := range []struct {
		result string
		n      uint64
	}{{"applied", st.Commits}, {"conflict", st.Conflicts}, {"refused", st.Refused - st.Conflicts}, {"failed", st.Failed}} {
		ch <- prometheus.MustNewConstMetric(stateCommits, prometheus.CounterValue, float64(r.n), r.result)
	}
	ch <- prometheus.MustNewConstMetric(stateBatches, prometheus.CounterValue, float64(st.Batches))
	h := st.CommitLatency
	buckets := make(map[float64]uint64, len(h.Buckets))
	var below uint64
	for i, b := range h.Buckets {
		below += h.Counts[i]
		buckets[b] = below
	}
	ch <- prometheus.MustNewConstHistogram(stateCommitSeconds, h.Count, h.Sum, buckets)
	healthy := 1.0
	if src.Health() != nil {
		healthy = 0
	}
	ch <- prometheus.MustNewConstMetric(stateHealthy, prometheus.GaugeValue, healthy)
	ch <- prometheus.MustNewConstMetric(stateMaxBytes, prometheus.GaugeValue, float64(src.Limits().MaxTotalBytes))
	all, err := src.Namespaces(context.Background())
	if err != nil {
		return // the store cannot be read: stateHealthy says so
	}
	var keys, bytes int64
	for _, u := range all {
		keys += u.Keys
		bytes += u.Bytes
	}
	ch <- prometheus.MustNewConstMetric(stateNamespaces, prometheus.GaugeValue, float64(len(all)))
	ch <- prometheus.MustNewConstMetric(stateKeys, prometheus.GaugeValue, float64(keys))
	ch <- prometheus.MustNewConstMetric(stateBytes, prometheus.GaugeValue, float64(bytes))
	names := slices.Sorted(maps.Keys(all))
	seen := make(map[string]bool, min(len(names), MaxNamespaceSeries))
	for _, ns := range names[:min(len(names), MaxNamespaceSeries)] {
		label := strings.ToValidUTF8(ns, "\uFFFD") // a label value must be UTF-8
		if seen[label] {
			continue // two names alike once made UTF-8: one series
		}
		seen[label] = true
		ch <- prometheus.MustNewConstMetric(stateNamespaceKeys, prometheus.GaugeValue, float64(all[ns].Keys), label)
		ch <- prometheus.MustNewConstMetric(stateNamespaceBytes, prometheus.GaugeValue, float64(all[ns].Bytes), label)
	}
}
