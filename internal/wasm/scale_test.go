package wasm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/internal/bench/fleet"
)

// footprint is what the process holds: the Go heap in use and the
// resident set (which adds what lives outside the heap: compiled code and
// the guests' linear memories, both mapped by hand).
type footprint struct{ heap, rss, goroutines int64 }

func measureFootprint(t testing.TB) footprint {
	t.Helper()
	debug.FreeOSMemory() // the RSS counts no freed heap
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	fields := strings.Fields(string(statm))
	pages, _ := strconv.ParseInt(fields[1], 10, 64)
	return footprint{heap: int64(ms.HeapInuse + ms.StackInuse + ms.MSpanInuse), rss: pages * int64(os.Getpagesize()),
		goroutines: int64(runtime.NumGoroutine())}
}

// perPlugin is the growth from a to b divided among n plugins.
func (b footprint) perPlugin(a footprint, n int) (heapKiB, rssKiB, goroutines float64) {
	return float64(b.heap-a.heap) / float64(n) / 1024, float64(b.rss-a.rss) / float64(n) / 1024,
		float64(b.goroutines-a.goroutines) / float64(n)
}

// TestIdlePluginMemory measures what one loaded WAT echo plugin holds,
// with its warm instance and once that instance is released, by loading
// a fleet of copies into one engine (the compilation cache on disk, as
// serve has it). CMDHOST_HEAP_PROFILE=FILE writes a heap profile of the
// fleet without instances, for go tool pprof.
func TestIdlePluginMemory(t *testing.T) {
	const idlePluginHeapKiB, closedPluginHeapKiB = 64, 6
	if testing.Short() {
		t.Skip("loads hundreds of plugins")
	}
	const n = 300
	if os.Getenv("CMDHOST_HEAP_PROFILE") != "" {
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 1
	}
	src := readPlugin(t, "wat-echo")
	dir := t.TempDir()
	names, err := fleet.Write(dir, src, fleet.WATMarker, n, fleet.WATName)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(Config{CacheDir: filepath.Join(dir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	ctx := context.Background()
	mods := make([][]byte, n)
	for i, name := range names {
		if mods[i], err = os.ReadFile(filepath.Join(dir, name+".wasm")); err != nil {
			t.Fatal(err)
		}
	}
	before := measureFootprint(t)
	ps := make([]*Plugin, n)
	for i, name := range names {
		if ps[i], err = e.Load(ctx, name, mods[i], PluginConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	warm := measureFootprint(t)
	for _, p := range ps {
		p.ReleaseIdle()
	}
	idle := measureFootprint(t)
	if f := os.Getenv("CMDHOST_HEAP_PROFILE"); f != "" {
		var buf bytes.Buffer
		if err := pprof.WriteHeapProfile(&buf); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, r, g := warm.perPlugin(before, n)
	t.Logf("per plugin with its warm instance: heap %.1f KiB, RSS %.1f KiB, %.2f goroutines", h, r, g)
	h, r, g = idle.perPlugin(before, n)
	t.Logf("per plugin without an instance:    heap %.1f KiB, RSS %.1f KiB, %.2f goroutines", h, r, g)
	// Issue 40's bound, on the heap (the RSS moves with the collector's
	// timing): 94.6 KiB before each plugin stopped holding WASI's host
	// module, the import checks' definitions and a random source of its
	// own, 21.4 KiB after. No goroutine per plugin. Under the race
	// detector a plugin's heap reads ~100 KiB: the bound is checked
	// without it (make test runs this test so first).
	if (h > idlePluginHeapKiB && !raceEnabled) || g >= 1 {
		t.Errorf("an idle plugin without an instance holds %.1f KiB of heap (bound %d KiB) and %.2f goroutines", h, idlePluginHeapKiB, g)
	}
	for i, p := range ps {
		if err := p.Close(ctx); err != nil {
			t.Fatal(err)
		}
		ps[i] = nil
	}
	// A closed plugin leaves in the engine, which outlives it, only what
	// outlives versions by design (its name's variables and counters: ~2
	// KiB read here). Its compiled code and decoded module stayed, 20.2
	// KiB, until the plugin closed its compiled modules and wazero's list
	// of them stopped keeping deleted ones (third_party/wazero/CMDHOST.md):
	// every version a host had reloaded stayed in memory.
	closed := measureFootprint(t)
	if h, _, _ = closed.perPlugin(before, n); h > closedPluginHeapKiB && !raceEnabled {
		t.Errorf("a closed plugin still holds %.1f KiB of heap (bound %d KiB)", h, closedPluginHeapKiB)
	}
	t.Logf("per plugin closed:                   heap %.1f KiB", h)
}
