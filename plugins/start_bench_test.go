//go:build unix

package plugins

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/bench/fleet"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// BenchmarkStart is what a host's start costs with a folder of N copies
// of the WAT echo (each a plugin of its own with a digest of its own, as
// make bench-scale has them): LoadAll in a fresh engine and Manager, up to
// every command served; the close is not counted. "warm" finds every
// module in the compilation cache on disk, as a restart does; "cold"
// starts from an empty one. Besides ns/op (wall time, which a loaded
// machine stretches) it reports cpu-s/op, the process's CPU time per
// start (user and system, all threads, the collector's included: the
// figure issue 40's targets are checked against, since the loads run in
// parallel), and ns/plugin. Profiles are labelled (labelled).
//
//	go test ./plugins -run '^$' -bench BenchmarkStart -benchtime 3x
func BenchmarkStart(b *testing.B) {
	src, err := os.ReadFile(filepath.Join(pluginDir, "wat-echo.wasm"))
	if err != nil {
		b.Skipf("the WAT echo is not built (make plugins needs wat2wasm): %v", err)
	}
	for _, n := range []int{100, 1000} {
		dir := b.TempDir()
		if _, err := fleet.Write(dir, src, fleet.WATMarker, n, fleet.WATName); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("plugins=%d/warm", n), func(b *testing.B) {
			cache := b.TempDir()
			labelled("fill", func() { startFleet(b, dir, cache, n)() })
			measureStarts(b, n, func() func() { return startFleet(b, dir, cache, n) }, "warm")
		})
		b.Run(fmt.Sprintf("plugins=%d/cold", n), func(b *testing.B) {
			measureStarts(b, n, func() func() {
				cache, err := os.MkdirTemp(b.TempDir(), "cache")
				if err != nil {
					b.Fatal(err)
				}
				return startFleet(b, dir, cache, n)
			}, "cold")
		})
	}
}

// labelled runs f with the profiler label start=what, which its
// goroutines inherit: go tool pprof -tagfocus start=warm shows the warm
// starts alone, without the start that filled the cache or the closes.
func labelled(what string, f func()) {
	pprof.Do(context.Background(), pprof.Labels("start", what), func(context.Context) { f() })
}

// measureStarts runs start b.N times, labelled what, and reports its CPU
// time and wall time per plugin besides ns/op; the function start returns
// (the close) runs outside the count.
func measureStarts(b *testing.B, n int, start func() (stop func()), what string) {
	var cpu, wall time.Duration
	for b.Loop() {
		cpu0, t0 := processCPU(b), time.Now()
		var stop func()
		labelled(what, func() { stop = start() })
		cpu += processCPU(b) - cpu0
		wall += time.Since(t0)
		b.StopTimer()
		stop()
		b.StartTimer()
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(wall.Nanoseconds())/float64(b.N)/float64(n), "ns/plugin")
}

// startFleet starts a host's plugins from dir with the compilation cache
// in cache, checks that all n serve, and returns what closes them.
func startFleet(b *testing.B, dir, cache string, n int) (stop func()) {
	ctx := context.Background()
	e, err := wasm.NewEngine(wasm.Config{CacheDir: cache})
	if err != nil {
		b.Fatal(err)
	}
	m := NewManager(Config{Dir: dir, Engine: e})
	stop = func() {
		if err := m.Close(ctx); err != nil {
			b.Fatal(err)
		}
		_ = e.Close(ctx)
	}
	if errs := m.LoadAll(ctx); len(errs) > 0 {
		stop()
		b.Fatalf("%d plugins not loaded, the first: %v", len(errs), errs[0])
	}
	if got := len(m.Commands()); got != n {
		stop()
		b.Fatalf("%d commands served, want %d", got, n)
	}
	return stop
}

// processCPU is the CPU time the process used so far, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
