package wasm

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// TestFaultSoak cycles calls through panic, oom, fail, bigout and echo and
// checks that the pools stay healthy, goroutines stay flat and memory
// stays bounded. `make soak` runs 10,000 calls (CMDHOST_SOAK=1); the
// default run does a short version of the same cycle.
func TestFaultSoak(t *testing.T) {
	total := 50
	if os.Getenv("CMDHOST_SOAK") != "" {
		total = 10000
	}
	names := []string{"panic", "oom", "fail", "bigout", "echo"}
	plugins := map[string]*Plugin{}
	for _, n := range names {
		plugins[n] = load(t, n, PluginConfig{PoolSize: 2, MemoryPages: 1024})
	}
	goroutines0 := runtime.NumGoroutine()
	var rssWarm uint64
	start := time.Now()
	for i := range total {
		n := names[i%len(names)]
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		resp, err := plugins[n].Invoke(ctx, &abi.Request{Command: n, Payload: []byte(strconv.Itoa(i))})
		cancel()
		switch n {
		case "echo":
			if err != nil || string(resp.Payload) != strconv.Itoa(i) {
				t.Fatalf("call %d: echo answered %v, %v", i, resp, err)
			}
		case "fail":
			if err != nil || !resp.AppError {
				t.Fatalf("call %d: fail answered %v, %v", i, resp, err)
			}
		default:
			want := map[string]Kind{"panic": KindTrap, "oom": KindOutOfMemory, "bigout": KindBadOutput}[n]
			if KindOf(err) != want {
				t.Fatalf("call %d: %s: want %v, got %v", i, n, want, err)
			}
		}
		if i == total/5 {
			rssWarm = rss(t)
		}
	}
	elapsed := time.Since(start)
	runtime.GC()
	debug.FreeOSMemory()
	rssEnd := rss(t)
	testkit.WaitFor(t, "the goroutines to end", func() bool { return runtime.NumGoroutine() <= goroutines0+2 })
	for _, n := range names {
		st := plugins[n].Stats()
		if st.Instances > 2 || st.InUse != 0 {
			t.Errorf("%s pool after the soak: %+v", n, st)
		}
	}
	t.Logf("%d calls in %v (%.0f/s); goroutines %d → %d; RSS %d MiB after warm-up, %d MiB at the end",
		total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(),
		goroutines0, runtime.NumGoroutine(), rssWarm>>20, rssEnd>>20)
	if rssEnd > rssWarm+rssWarm/2+64<<20 {
		t.Errorf("RSS grew from %d MiB to %d MiB: something leaks", rssWarm>>20, rssEnd>>20)
	}
}

// rss reads the process's resident set size.
func rss(t *testing.T) uint64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc: cannot measure RSS")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Skip("VmRSS not found")
	return 0
}
