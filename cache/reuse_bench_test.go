package cache

import (
	"encoding/binary"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// reuseBenchKeys returns n distinct ReuseKeys, built before the timed loop.
func reuseBenchKeys(n int) []string {
	keys := make([]string, n)
	var b [8]byte
	for i := range keys {
		binary.BigEndian.PutUint64(b[:], uint64(i))
		keys[i] = ReuseKey([]byte("bench"), b[:])
	}
	return keys
}

// newReuseBench returns a cache of the default size holding a 1 KiB reply
// under each of keys.
func newReuseBench(b *testing.B, keys []string) (*ReuseCache[[]byte], []byte) {
	b.Helper()
	c, err := NewReuseCache[[]byte](ReuseConfig{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	reply := make([]byte, 1<<10)
	for i, k := range keys {
		c.Set(k, reply, int64(len(reply)), time.Hour)
		if i%1024 == 1023 {
			c.Wait()
		}
	}
	c.Wait()
	return c, reply
}

// BenchmarkReuseGet measures a hit: ristretto's lookup, the key compare and
// the expiry check by the clock.
func BenchmarkReuseGet(b *testing.B) {
	keys := reuseBenchKeys(1024)
	c, _ := newReuseBench(b, keys)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.Get(keys[i&1023]); !ok {
			b.Fatal("miss on a held key")
		}
		i++
	}
}

// BenchmarkReuseSet measures handing a 1 KiB reply to ristretto, for a new
// key (admission, with evictions once the default 64 MiB is full) and for a
// held key (an update in place). A Wait every 1024 Sets keeps the set buffer
// from overflowing, so the figure includes ristretto's applying of the Sets.
func BenchmarkReuseSet(b *testing.B) {
	b.Run("new", func(b *testing.B) {
		keys := reuseBenchKeys(1 << 17) // 128 MiB of replies: twice the bound
		c, reply := newReuseBench(b, nil)
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			c.Set(keys[i&(1<<17-1)], reply, int64(len(reply)), time.Hour)
			if i&1023 == 1023 {
				c.Wait()
			}
			i++
		}
		c.Wait()
		s := c.Stats()
		b.ReportMetric(float64(s.Rejections)/float64(i), "rejected/op")
	})
	b.Run("update", func(b *testing.B) {
		keys := reuseBenchKeys(1024)
		c, reply := newReuseBench(b, keys)
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			c.Set(keys[i&1023], reply, int64(len(reply)), time.Hour)
			if i&1023 == 1023 {
				c.Wait()
			}
			i++
		}
	})
}

// BenchmarkReuseGetSetParallel runs two goroutines (one per core on the
// 2-core reference machine) doing 90% Gets and 10% Sets of 1 KiB replies over
// a hot set of 1024 keys, and reports the throughput of both together.
func BenchmarkReuseGetSetParallel(b *testing.B) {
	const goroutines = 2
	keys := reuseBenchKeys(1024)
	c, reply := newReuseBench(b, keys)
	// RunParallel starts parallelism × GOMAXPROCS goroutines.
	b.SetParallelism(max(1, goroutines/runtime.GOMAXPROCS(0)))
	var seed, hits, gets atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		x := uint64(seed.Add(1))*0x9E3779B97F4A7C15 | 1 // xorshift state, per goroutine
		var h, g int64
		for pb.Next() {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			k := keys[x&1023]
			if (x>>10)%10 == 0 {
				c.Set(k, reply, int64(len(reply)), time.Hour)
				continue
			}
			g++
			if _, ok := c.Get(k); ok {
				h++
			}
		}
		hits.Add(h)
		gets.Add(g)
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(runtime.GOMAXPROCS(0)*max(1, goroutines/runtime.GOMAXPROCS(0))), "goroutines")
	if g := gets.Load(); g > 0 {
		b.ReportMetric(float64(hits.Load())/float64(g), "hit-ratio")
	}
}
