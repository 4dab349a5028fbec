package cache

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/ristretto/v2"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

func newReuse[V any](t testing.TB, maxBytes int64) (*ReuseCache[V], *testkit.Clock) {
	t.Helper()
	clk := newClock()
	c, err := NewReuseCache[V](ReuseConfig{MaxBytes: maxBytes, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, clk
}

func wantStats(t *testing.T, c *ReuseCache[string], want ReuseStats) {
	t.Helper()
	if got := c.Stats(); got != want {
		t.Fatalf("stats = %+v, want %+v", got, want)
	}
}

func TestReuseGetAfterSet(t *testing.T) {
	c, _ := newReuse[string](t, 1<<20)
	k := ReuseKey([]byte("echo"), []byte("hello"))
	if _, ok := c.Get(k); ok {
		t.Fatal("hit on an empty cache")
	}
	if !c.Set(k, "Hello!:1", 8, time.Hour) {
		t.Fatal("Set refused on an empty cache")
	}
	c.Wait()
	if v, ok := c.Get(k); !ok || v != "Hello!:1" {
		t.Fatalf("Get = %q, %v; want Hello!:1, true", v, ok)
	}
	if _, ok := c.Get(ReuseKey([]byte("echo"), []byte("other"))); ok {
		t.Fatal("hit for a key never set")
	}
	wantStats(t, c, ReuseStats{Hits: 1, Misses: 2, CostUsed: 8, Entries: 1})
}

// An entry is expired by the injected clock at its expiry instant, even
// though ristretto, whose TTL runs on the wall clock, still holds it.
func TestReuseTTLByInjectedClock(t *testing.T) {
	c, clk := newReuse[string](t, 1<<20)
	k := ReuseKey([]byte("k"))
	c.Set(k, "v", 1, 10*time.Second)
	c.Wait()

	clk.Add(10*time.Second - time.Nanosecond)
	if _, ok := c.Get(k); !ok {
		t.Fatal("miss before the TTL passed")
	}
	clk.Add(time.Nanosecond)
	if _, ok := c.Get(k); ok {
		t.Fatal("hit at the expiry instant")
	}
	clk.Add(time.Hour)
	if _, ok := c.Get(k); ok {
		t.Fatal("hit after the TTL passed")
	}
	wantStats(t, c, ReuseStats{Hits: 1, Misses: 2, CostUsed: 1, Entries: 1})

	// Ristretto still holds the entry, with its own (wall clock) TTL set so
	// that its sweep reclaims the memory.
	e, ok := c.rc.Get(k)
	if !ok || e.value != "v" {
		t.Fatalf("ristretto Get = %+v, %v; want the entry still held", e, ok)
	}
	if d, ok := c.rc.GetTTL(k); !ok || d <= 0 || d > 10*time.Second {
		t.Fatalf("ristretto TTL = %v, %v; want in (0, 10s]", d, ok)
	}
}

func TestReuseNonPositiveTTLNotStored(t *testing.T) {
	c, _ := newReuse[string](t, 1<<20)
	for _, ttl := range []time.Duration{0, -time.Second} {
		k := ReuseKey([]byte(ttl.String()))
		if c.Set(k, "v", 1, ttl) {
			t.Fatalf("Set with ttl %v returned true", ttl)
		}
		c.Wait()
		if _, ok := c.Get(k); ok {
			t.Fatalf("hit for a Set with ttl %v", ttl)
		}
	}
	wantStats(t, c, ReuseStats{Misses: 2})
}

func TestReuseOverwrite(t *testing.T) {
	c, clk := newReuse[string](t, 1<<20)
	k := ReuseKey([]byte("k"))
	c.Set(k, "first", 10, time.Hour)
	c.Wait()
	c.Set(k, "second", 20, time.Second) // new reply, cost and TTL
	c.Wait()
	if v, ok := c.Get(k); !ok || v != "second" {
		t.Fatalf("Get = %q, %v; want second, true", v, ok)
	}
	wantStats(t, c, ReuseStats{Hits: 1, CostUsed: 20, Entries: 1})
	clk.Add(time.Second) // the new, shorter TTL applies
	if v, ok := c.Get(k); ok {
		t.Fatalf("Get = %q after the overwritten TTL passed", v)
	}
}

func TestReuseCostFloorAndTooLarge(t *testing.T) {
	c, _ := newReuse[string](t, 1<<10)
	if !c.Set(ReuseKey([]byte("zero")), "", 0, time.Hour) {
		t.Fatal("Set with cost 0 refused")
	}
	if c.Set(ReuseKey([]byte("big")), "", 1<<10+1, time.Hour) {
		t.Fatal("Set larger than MaxBytes returned true")
	}
	c.Wait()
	wantStats(t, c, ReuseStats{Rejections: 1, CostUsed: 1, Entries: 1})
}

// A reply stored under other hashes' key is never returned: Get compares the
// full key (simulated here, since a real 128-bit hash collision cannot be
// produced on demand).
func TestReuseKeyMismatchIsMiss(t *testing.T) {
	c, clk := newReuse[string](t, 1<<20)
	k := ReuseKey([]byte("k"))
	other := reuseEntry[string]{key: ReuseKey([]byte("other")), value: "x", expiresAt: clk.Now().Add(time.Hour)}
	c.rc.SetWithTTL(k, other, 1, time.Hour)
	c.Wait()
	if v, ok := c.Get(k); ok {
		t.Fatalf("Get = %q: a reply stored for another key was returned", v)
	}
	wantStats(t, c, ReuseStats{Misses: 1, CostUsed: 1, Entries: 1})
}

func TestReuseStatsCountsHitsAndMisses(t *testing.T) {
	c, clk := newReuse[string](t, 1<<20)
	keys := make([]string, 10)
	for i := range keys {
		keys[i] = ReuseKey([]byte{byte(i)})
		c.Set(keys[i], "v", 100, time.Duration(i+1)*time.Second)
	}
	c.Wait()
	for range 3 {
		for _, k := range keys {
			c.Get(k)
		}
	}
	clk.Add(5 * time.Second) // keys[0..4] expire
	for _, k := range keys {
		c.Get(k)
	}
	c.Get(ReuseKey([]byte("absent")))
	wantStats(t, c, ReuseStats{Hits: 35, Misses: 6, CostUsed: 1000, Entries: 10})
}

// Under size pressure the cache stays within MaxBytes and the Go heap stays
// flat, while replies that are asked for often keep being reused.
func TestReuseSizePressure(t *testing.T) {
	const (
		maxBytes = 64 << 10
		reply    = 1 << 10
		total    = 10 << 20 // bytes of distinct replies offered
		hotN     = 8
	)
	c, _ := newReuse[[]byte](t, maxBytes)
	hot := make([]string, hotN)
	for i := range hot {
		hot[i] = ReuseKey([]byte("hot"), []byte{byte(i)})
	}
	var hotHits, hotGets int
	// serveHot is the executor's path for a popular idempotent request:
	// reuse the reply, or run the command and offer its reply.
	serveHot := func() {
		for _, k := range hot {
			hotGets++
			if _, ok := c.Get(k); ok {
				hotHits++
				continue
			}
			c.Set(k, make([]byte, reply), reply, time.Hour)
		}
	}
	for range 16 {
		serveHot()
		c.Wait()
	}

	runtime.GC()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	var key [8]byte
	for i := range total / reply {
		key[0], key[1], key[2], key[3] = byte(i), byte(i>>8), byte(i>>16), byte(i>>24)
		c.Set(ReuseKey([]byte("cold"), key[:]), make([]byte, reply), reply, time.Hour)
		if i%16 == 15 {
			serveHot()
		}
		if i%256 == 255 {
			c.Wait() // let ristretto keep up, so no Set is dropped for a full buffer
			if s := c.Stats(); s.CostUsed > maxBytes {
				t.Fatalf("after %d Sets: CostUsed %d > MaxBytes %d", i+1, s.CostUsed, maxBytes)
			}
		}
	}
	c.Wait()

	runtime.GC()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)

	s := c.Stats()
	t.Logf("stats %+v; heap growth %d KiB; hot hits %d/%d", s, growth>>10, hotHits, hotGets)
	if s.Evictions+s.Rejections == 0 {
		t.Errorf("10 MiB offered to a 64 KiB cache: no evictions nor rejections")
	}
	if s.CostUsed > maxBytes || s.Entries > maxBytes/reply {
		t.Errorf("CostUsed %d, Entries %d: over MaxBytes %d", s.CostUsed, s.Entries, maxBytes)
	}
	if growth > 4<<20 {
		t.Errorf("heap grew by %d KiB after offering 10 MiB: want < 4 MiB", growth>>10)
	}
	// Ristretto feeds Gets to its admission policy through lossy sync.Pool
	// buffers of 64; the race detector makes sync.Pool drop a quarter of its
	// Puts, so under -race those buffers hardly ever fill, the policy sees no
	// frequencies and eviction is close to random. Only then is a low hot
	// hit ratio expected.
	if want := hotGets * 9 / 10; !raceEnabled() && hotHits < want {
		t.Errorf("hot keys hit %d of %d times under pressure: want at least %d", hotHits, hotGets, want)
	}
	if hotHits == 0 {
		t.Errorf("hot keys never hit under pressure")
	}
	hits := 0
	for _, k := range hot {
		if _, ok := c.Get(k); ok {
			hits++
		}
	}
	// For the same reason, under -race eviction may have taken every hot
	// key by the end (seen once in make test on a loaded machine).
	if hits == 0 && !raceEnabled() {
		t.Error("no hot key held after the pressure")
	}
}

// Ristretto reports cost-policy victims, TTL-sweep removals and Close's
// clearing all through OnEvict; only fresh cost-policy victims are evictions.
func TestReuseEvictionClassification(t *testing.T) {
	c, clk := newReuse[string](t, 1<<20)
	fresh := reuseEntry[string]{expiresAt: clk.Now().Add(time.Minute)}
	stale := reuseEntry[string]{expiresAt: clk.Now()}
	for _, tc := range []struct {
		name string
		item ristretto.Item[reuseEntry[string]]
		want int64
	}{
		{"cost victim", ristretto.Item[reuseEntry[string]]{Cost: 10, Value: fresh}, 1},
		{"cost victim already expired", ristretto.Item[reuseEntry[string]]{Cost: 10, Value: stale}, 0},
		{"TTL sweep", ristretto.Item[reuseEntry[string]]{Cost: 10, Value: fresh, Expiration: time.Now()}, 0},
		{"TTL sweep of a key gone", ristretto.Item[reuseEntry[string]]{Cost: -1}, 0},
	} {
		before := c.evictions.Load()
		c.onEvict(&tc.item)
		if got := c.evictions.Load() - before; got != tc.want {
			t.Errorf("%s: counted %d evictions, want %d", tc.name, got, tc.want)
		}
	}

	// Close clears every entry through OnEvict with a zero Expiration: not
	// counted.
	for i := range 100 {
		c.Set(ReuseKey([]byte{byte(i)}), "v", 1, time.Hour)
	}
	c.Wait()
	before := c.Stats().Evictions
	c.Close()
	if got := c.evictions.Load(); got != before {
		t.Fatalf("Close counted %d evictions", got-before)
	}
}

func TestReuseClose(t *testing.T) {
	c, _ := newReuse[string](t, 1<<20)
	k := ReuseKey([]byte("k"))
	c.Set(k, "v", 5, time.Hour)
	c.Get(k) // a miss or a hit: the Set may still be buffered
	c.Close()
	final := c.Stats()
	if final.Entries != 1 || final.CostUsed != 5 || final.Hits+final.Misses != 1 {
		t.Fatalf("stats after Close = %+v; want the snapshot of 1 entry, 1 Get", final)
	}
	if _, ok := c.Get(k); ok {
		t.Fatal("hit after Close")
	}
	if c.Set(k, "v", 1, time.Hour) {
		t.Fatal("Set after Close returned true")
	}
	c.Wait()
	c.Close()
	if got := c.Stats(); got != final {
		t.Fatalf("stats changed after Close: %+v, then %+v", final, got)
	}
}

// Close may run while Gets and Sets are in flight (an executor stopping on
// a deadline): they must neither panic nor race, and do nothing afterwards.
func TestReuseCloseWhileInUse(t *testing.T) {
	for range 20 {
		c, _ := newReuse[int](t, 1<<10)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				<-start
				for i := range 2_000 {
					k := ReuseKey([]byte{byte(w), byte(i)})
					c.Set(k, i, 64, time.Hour)
					c.Get(k)
					if i%500 == 0 {
						c.Wait()
					}
				}
			})
		}
		close(start)
		runtime.Gosched()
		c.Close()
		wg.Wait()
		if c.Set("k", 1, 1, time.Hour) {
			t.Fatal("Set after Close returned true")
		}
		if s := c.Stats(); s.CostUsed > 1<<10 {
			t.Fatalf("final stats %+v over MaxBytes", s)
		}
	}
}

func TestReuseDefaults(t *testing.T) {
	c, err := NewReuseCache[string](ReuseConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.rc.MaxCost(); got != DefaultReuseMaxBytes {
		t.Errorf("MaxCost = %d, want %d", got, DefaultReuseMaxBytes)
	}
	k := ReuseKey([]byte("k"))
	c.Set(k, "v", 1, time.Hour) // time.Now is the clock
	c.Wait()
	if v, ok := c.Get(k); !ok || v != "v" {
		t.Errorf("Get = %q, %v with the default clock", v, ok)
	}
	for _, tc := range []struct{ maxBytes, want int64 }{
		{64 << 10, 10_000},                    // 64 entries: the floor
		{DefaultReuseMaxBytes, 10 * 64 << 10}, // 65,536 entries of 1 KiB
		{1 << 40, 1 << 24},                    // the ceiling
	} {
		if got := reuseCounters(tc.maxBytes); got != tc.want {
			t.Errorf("reuseCounters(%d) = %d, want %d", tc.maxBytes, got, tc.want)
		}
	}
}

func TestReuseKey(t *testing.T) {
	b := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i := range s {
			out[i] = []byte(s[i])
		}
		return out
	}
	base := b("cmd", "topic/a", "application/json", `{"x":1}`)
	k := ReuseKey(base...)
	if len(k) != 32 {
		t.Fatalf("len(ReuseKey) = %d, want 32", len(k))
	}
	if k != ReuseKey(b("cmd", "topic/a", "application/json", `{"x":1}`)...) {
		t.Fatal("ReuseKey is not deterministic")
	}
	for i := range base {
		changed := b("cmd", "topic/a", "application/json", `{"x":1}`)
		changed[i] = append(changed[i], '!')
		if ReuseKey(changed...) == k {
			t.Errorf("changing part %d does not change the key", i)
		}
	}
	distinct := [][][]byte{
		b("ab", "c"), b("a", "bc"), b("abc"), b("", "abc"), b("abc", ""),
		b(), b(""), b("", ""), b("a", "b", "c"),
	}
	seen := map[string]int{}
	for i, parts := range distinct {
		k := ReuseKey(parts...)
		if j, dup := seen[k]; dup {
			t.Errorf("ReuseKey(%q) == ReuseKey(%q)", distinct[j], parts)
		}
		seen[k] = i
	}
	if ReuseKey(nil) != ReuseKey([]byte{}) {
		t.Error("a nil part and an empty part differ")
	}
}

// TestReuseHammer runs Gets, Sets and Stats from several goroutines while the
// clock moves and the cache is under size pressure (run with -race). A Get
// must only ever return the reply of its own key, never an expired one.
func TestReuseHammer(t *testing.T) {
	// hammerReply records its key and an upper bound of the expiry that Set
	// computed: the clock read just after Set returned, plus the TTL. (The
	// Set's own reading can be later than one taken before the call, so only
	// an upper bound proves a returned reply expired.)
	type hammerReply struct {
		key string
		hi  atomic.Int64 // unix ns; 0 until the Set returned
	}
	const (
		workers  = 4
		keyCount = 128
		cost     = 512
		maxBytes = 32 * cost // a quarter of the keys fit
	)
	ops := 20_000
	if testing.Short() {
		ops = 2_000
	}
	c, clk := newReuse[*hammerReply](t, maxBytes)
	keys := make([]string, keyCount)
	for i := range keys {
		keys[i] = ReuseKey([]byte(fmt.Sprint(i)))
	}

	stop := make(chan struct{})
	var tick sync.WaitGroup
	tick.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				clk.Add(time.Millisecond)
				c.Stats()
				runtime.Gosched()
			}
		}
	})

	var gets, hits, checked atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range ops {
				k := keys[r.IntN(keyCount)]
				if r.IntN(10) < 7 {
					before := clk.Now().UnixNano()
					v, ok := c.Get(k)
					gets.Add(1)
					if !ok {
						continue
					}
					hits.Add(1)
					if v.key != k {
						t.Errorf("Get(%x) returned the reply of %x", k, v.key)
					}
					if hi := v.hi.Load(); hi != 0 {
						checked.Add(1)
						if before >= hi {
							t.Errorf("Get returned a reply expired by %v", time.Duration(before-hi))
						}
					}
					continue
				}
				ttl := time.Duration(1+r.IntN(50)) * time.Millisecond
				v := &hammerReply{key: k}
				c.Set(k, v, cost, ttl)
				v.hi.Store(clk.Now().Add(ttl).UnixNano())
			}
		})
	}
	wg.Wait()
	close(stop)
	tick.Wait()
	c.Wait()

	s := c.Stats()
	t.Logf("stats %+v over %d Gets; %d hits checked for expiry", s, gets.Load(), checked.Load())
	if s.Hits != hits.Load() || s.Hits+s.Misses != gets.Load() {
		t.Errorf("Hits %d, Misses %d; want %d hits of %d Gets", s.Hits, s.Misses, hits.Load(), gets.Load())
	}
	if s.CostUsed > maxBytes || s.CostUsed < 0 || s.Entries < 0 || s.Entries > maxBytes/cost {
		t.Errorf("CostUsed %d, Entries %d: out of bounds for MaxBytes %d", s.CostUsed, s.Entries, maxBytes)
	}
}

// The executor looks up the reply of an equivalent request before running an
// idempotent command, and offers the reply afterwards with the command's TTL.
func ExampleReuseCache() {
	c, err := NewReuseCache[[]byte](ReuseConfig{MaxBytes: 16 << 20})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	key := ReuseKey([]byte("EchoWithTag"), []byte("rpc/echo"), []byte("text/plain"), []byte("Hello!"))
	serve := func() []byte {
		if reply, ok := c.Get(key); ok {
			return reply
		}
		reply := []byte("Hello!:1") // run the command
		c.Set(key, reply, int64(len(reply)), time.Hour)
		return reply
	}
	fmt.Printf("%s\n", serve())
	c.Wait() // Sets are applied asynchronously
	fmt.Printf("%s\n", serve())
	s := c.Stats()
	fmt.Println(s.Hits, s.Misses, s.CostUsed, bytes.Equal(serve(), []byte("Hello!:1")))
	// Output:
	// Hello!:1
	// Hello!:1
	// 1 1 8 true
}
