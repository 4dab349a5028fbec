package state

import (
	"errors"
	"sync/atomic"
	"time"
)

// Stats counts what a Disk store did, for the metrics.
type Stats struct {
	Commits   uint64 // commits applied
	Refused   uint64 // commits refused: a condition, a bound, a fence
	Conflicts uint64 // of Refused, those whose condition failed
	Failed    uint64 // commits that could not be written (ErrUnavailable)
	Batches   uint64 // batches written (each one sync)
	// BatchSeconds is the time the batches took, apply and sync, summed.
	BatchSeconds float64
	// CommitLatency is each commit's time from Commit to its fate known,
	// refused ones included: the wait for the writer, the batch's apply
	// and its sync.
	CommitLatency Histogram
}

type diskStats struct {
	commits, refused, conflicts, failed, batches atomic.Uint64
	batchNanos                                   atomic.Int64
	latency                                      latencies
	health                                       health
}

// Stats returns the store's counters.
func (d *Disk) Stats() Stats {
	s := &d.stats
	return Stats{Commits: s.commits.Load(), Refused: s.refused.Load(), Conflicts: s.conflicts.Load(), Failed: s.failed.Load(),
		Batches: s.batches.Load(), BatchSeconds: time.Duration(s.batchNanos.Load()).Seconds(), CommitLatency: s.latency.read()}
}

func (s *diskStats) record(batch []*pending, took time.Duration) {
	wrote := false
	for _, p := range batch {
		switch {
		case p.sweep || p.dequeue != nil:
			continue
		case p.err == nil:
			s.commits.Add(1)
			wrote = true
		case errors.Is(p.err, ErrUnavailable):
			s.failed.Add(1)
		default:
			s.refused.Add(1)
			if errors.Is(p.err, ErrConflict) {
				s.conflicts.Add(1)
			}
		}
	}
	if wrote {
		s.batches.Add(1)
		s.batchNanos.Add(int64(took))
	}
}
