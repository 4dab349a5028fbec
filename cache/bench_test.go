package cache

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// benchKeys returns n distinct keys, built before the timed loop.
func benchKeys(n int) []Key {
	keys := make([]Key, n)
	for i := range keys {
		keys[i] = Key{Correlation: fmt.Sprintf("%016x", i), ResponseTopic: "clients/bench/response"}
	}
	return keys
}

// stepClock advances by step at every reading, so a benchmark holds about
// live = ttl/step entries in steady state and sweeps one per Begin. The
// stores arm no timers: AfterFunc is the system clock's.
type stepClock struct {
	clock.Clock
	t    time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time {
	c.t = c.t.Add(c.step)
	return c.t
}

// BenchmarkBeginComplete measures a first receipt plus its Complete (with
// the lazy sweep of one expired entry) at several steady-state sizes, a
// duplicate answered from a completed entry, and parallel first receipts.
func BenchmarkBeginComplete(b *testing.B) {
	for _, live := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("first/live=%d", live), func(b *testing.B) {
			keys := benchKeys(4 * live)
			// Each iteration reads the clock twice (Begin, Complete).
			c := &stepClock{Clock: clock.System(), t: time.Unix(0, 0), step: time.Microsecond}
			ttl := time.Duration(2*live) * time.Microsecond
			s := NewDedupStore[int](DedupConfig{MaxEntries: 2 * live, Clock: c})
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				e, first, err := s.Begin(keys[i%len(keys)], c.t.Add(ttl))
				if err != nil || !first {
					b.Fatalf("first=%v err=%v", first, err)
				}
				s.Complete(e, i, time.Time{})
				i++
			}
			b.ReportMetric(float64(s.Len()), "live")
		})
	}

	// The same with invokers' shares: 100 invokers in turn, each within
	// its share (a tenth of the store).
	b.Run("first/live=100000/shares", func(b *testing.B) {
		const live = 100_000
		keys := benchKeys(4 * live)
		invokers := make([]string, 100)
		for i := range invokers {
			invokers[i] = fmt.Sprintf("srcId:invoker-%d", i)
		}
		c := &stepClock{Clock: clock.System(), t: time.Unix(0, 0), step: time.Microsecond}
		ttl := time.Duration(2*live) * time.Microsecond
		s := NewDedupStore[int](DedupConfig{MaxEntries: 2 * live, MaxPerInvoker: 2 * live / 10, Clock: c})
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			e, first, err := s.BeginFrom(invokers[i%len(invokers)], keys[i%len(keys)], c.t.Add(ttl))
			if err != nil || !first {
				b.Fatalf("first=%v err=%v", first, err)
			}
			s.Complete(e, i, time.Time{})
			i++
		}
		b.ReportMetric(float64(s.Len()), "live")
	})

	b.Run("duplicate", func(b *testing.B) {
		keys := benchKeys(1024)
		start := time.Unix(0, 0)
		s := NewDedupStore[int](DedupConfig{Clock: testkit.NewClock(start)})
		for i, k := range keys {
			e, _, _ := s.Begin(k, start.Add(time.Hour))
			s.Complete(e, i, time.Time{})
		}
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			e, first, err := s.Begin(keys[i%len(keys)], start.Add(time.Hour))
			if err != nil || first {
				b.Fatalf("first=%v err=%v", first, err)
			}
			<-e.Done()
			_ = e.Value()
			i++
		}
	})

	b.Run("parallel", func(b *testing.B) {
		keys := benchKeys(1 << 20)
		s := NewDedupStore[int](DedupConfig{MaxEntries: 1 << 20})
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := int(next.Add(1))
				e, first, err := s.Begin(keys[i%len(keys)], time.Now().Add(time.Millisecond))
				if err != nil {
					b.Errorf("Begin: %v", err)
					return
				}
				if first {
					s.Complete(e, i, time.Time{})
				}
			}
		})
	})
}
