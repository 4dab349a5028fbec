package httpout

import (
	"maps"
	"sync"
	"time"
)

// DurationBuckets are the buckets of a plugin's request durations, in
// seconds: 5 ms to 30 s.
var DurationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Stats counts a plugin's requests by outcome and their durations. The
// engine keeps one per plugin name, so that it outlives the plugin's
// versions; safe for concurrent use.
type Stats struct {
	mu       sync.Mutex
	outcomes map[string]int64
	counts   [13]uint64 // per bucket of DurationBuckets, and past the last
	sum      float64
}

// Snapshot is what Stats counted.
type Snapshot struct {
	// Requests counts the requests by outcome: the status class of a
	// response ("2xx" to "5xx"), else the failure's reason
	// (abi.HTTPReason's name: "denied", "timeout", ...).
	Requests map[string]int64
	// Count and Sum are the requests timed and their seconds; Buckets
	// the cumulative count at or under each of DurationBuckets.
	Count   uint64
	Sum     float64
	Buckets []uint64
}

// Record counts a request of outcome that took d: Client.Do records its
// own; the engine records those it refuses before the Client.
func (s *Stats) Record(outcome string, d time.Duration) {
	if s == nil {
		return
	}
	sec := d.Seconds()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.outcomes == nil {
		s.outcomes = map[string]int64{}
	}
	s.outcomes[outcome]++
	i := 0
	for i < len(DurationBuckets) && sec > DurationBuckets[i] {
		i++
	}
	s.counts[i]++
	s.sum += sec
}

// Snapshot returns what s counted.
func (s *Stats) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Snapshot{Requests: maps.Clone(s.outcomes), Sum: s.sum, Buckets: make([]uint64, len(DurationBuckets))}
	for i, n := range s.counts {
		out.Count += n
		if i < len(DurationBuckets) {
			out.Buckets[i] = out.Count
		}
	}
	return out
}
