package state

import (
	"sync/atomic"
	"time"
)

// CommitBuckets are the upper bounds, in seconds, of the commit latency
// histogram (Stats.CommitLatency): 100 µs to 5 s. A commit's latency is
// its wait for the writer plus its batch's apply and sync: what a call's
// reply waits for.
var CommitBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// Histogram is a histogram of durations: Counts[i] is the number of
// observations of at most Buckets[i] seconds and more than the bound
// before it (not cumulative); those over the last bound are in Count
// only.
type Histogram struct {
	Buckets []float64 // upper bounds in seconds (CommitBuckets)
	Counts  []uint64
	Count   uint64
	Sum     float64 // seconds
}

// latencies counts commit latencies in CommitBuckets, without a lock.
type latencies struct {
	counts [len(commitBucketNanos)]atomic.Uint64
	count  atomic.Uint64
	sum    atomic.Int64 // nanoseconds
}

// commitBucketNanos are CommitBuckets in nanoseconds.
var commitBucketNanos = [15]int64{1e5, 2.5e5, 5e5, 1e6, 2.5e6, 5e6, 1e7, 2.5e7, 5e7, 1e8, 2.5e8, 5e8, 1e9, 2.5e9, 5e9}

func (l *latencies) observe(d time.Duration) {
	for i, b := range commitBucketNanos {
		if int64(d) <= b {
			l.counts[i].Add(1)
			break
		}
	}
	l.count.Add(1)
	l.sum.Add(int64(d))
}

func (l *latencies) read() Histogram {
	h := Histogram{Buckets: CommitBuckets, Counts: make([]uint64, len(commitBucketNanos))}
	for i := range l.counts {
		h.Counts[i] = l.counts[i].Load()
	}
	h.Count, h.Sum = l.count.Load(), time.Duration(l.sum.Load()).Seconds()
	return h
}
