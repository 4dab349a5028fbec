package state

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// BenchmarkCommit measures a commit of a request's outcome (300 bytes)
// and one write, synced, from 1, 16 and 128 goroutines at once: what a
// non-idempotent request pays on the embedded default. It reports the
// commits per sync and the latency's p50 and p99.
func BenchmarkCommit(b *testing.B) {
	for _, par := range []int{1, 16, 128} {
		b.Run(fmt.Sprintf("inflight=%d", par), func(b *testing.B) {
			d, err := OpenDisk(DiskConfig{Dir: b.TempDir(), SweepEvery: time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			value := make([]byte, 300)
			var next atomic.Int64
			var mu sync.Mutex
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			var wg sync.WaitGroup
			for range par {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var mine []time.Duration
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							break
						}
						key := fmt.Sprint(i)
						start := time.Now()
						if _, err := d.Commit(ctx, &Commit{Ops: []Op{{Kind: OpSet, NS: "plugin/bench", Key: []byte(key), Value: []byte("v")}},
							Outcome: &Outcome{ID: OutcomeID{Correlation: key, ResponseTopic: "r"}, Value: value, KeepUntil: time.Now().Add(time.Minute)}}); err != nil {
							b.Error(err)
							return
						}
						mine = append(mine, time.Since(start))
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			b.StopTimer()
			s := d.Stats()
			if s.Batches > 0 {
				b.ReportMetric(float64(s.Commits)/float64(s.Batches), "commits/sync")
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			if n := len(lat); n > 0 {
				b.ReportMetric(float64(lat[n/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[n*99/100].Microseconds()), "p99-µs")
			}
		})
	}
}

// BenchmarkTxnGetSet measures a call's get and set of one key in its
// staging area, with the read of the committed value: what a guest's
// state_get and state_set cost the host, without the engine.
func BenchmarkTxnGetSet(b *testing.B) {
	d, err := OpenDisk(DiskConfig{Dir: b.TempDir(), SweepEvery: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{{Kind: OpSet, NS: "plugin/bench", Key: []byte("k"), Value: []byte("committed")}}}); err != nil {
		b.Fatal(err)
	}
	sp := Space{NS: "plugin/bench"}
	b.ReportAllocs()
	for b.Loop() {
		tx := NewTxn(d, d.Limits(), time.Now)
		if _, err := tx.Get(ctx, sp, []byte("k")); err != nil {
			b.Fatal(err)
		}
		if err := tx.Set(ctx, sp, []byte("k2"), []byte("value"), SetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSweepOutcomes is the sweep's cost per expired outcome, each
// flushed to a table first (as a busy host's are by their keep-until):
// "here", recorded by this process, goes without a read; "before-open",
// recorded before the store was opened again, is read back first, as
// every outcome was before writer.live.
func BenchmarkSweepOutcomes(b *testing.B) {
	for _, reopen := range []bool{false, true} {
		name := "here"
		if reopen {
			name = "before-open"
		}
		b.Run(name, func(b *testing.B) {
			clk := testkit.NewClock(time.Unix(1_700_000_000, 0))
			dir := b.TempDir()
			cfg := DiskConfig{Dir: dir, Clock: clk, SweepEvery: time.Hour}
			d, err := OpenDisk(cfg)
			if err != nil {
				b.Fatal(err)
			}
			value := make([]byte, 200)
			for i := range b.N {
				id := OutcomeID{Correlation: fmt.Sprint(i), ResponseTopic: "r"}
				if _, err := d.Commit(ctx, &Commit{Outcome: &Outcome{ID: id, Value: value, KeepUntil: clk.Now().Add(time.Second)}}); err != nil {
					b.Fatal(err)
				}
			}
			if reopen {
				_ = d.Close()
				if d, err = OpenDisk(cfg); err != nil {
					b.Fatal(err)
				}
			}
			defer d.Close()
			if err := d.db.Flush(); err != nil {
				b.Fatal(err)
			}
			clk.Add(2 * time.Second)
			b.ResetTimer()
			for range (b.N + sweepMax - 1) / sweepMax {
				if err := d.Sweep(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
