package cache

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/internal/setting"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// roundTrips counts a client's round trips to Redis: each command sent
// alone and each pipeline, the heartbeat's left out.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !heartbeatCmd(cmd) {
			r.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) == 0 || !heartbeatCmd(cmds[0]) {
			r.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

func heartbeatCmd(cmd redis.Cmder) bool {
	args := cmd.Args()
	k, _ := args[len(args)-1].(string)
	if len(args) > 1 {
		k, _ = args[1].(string)
	}
	return strings.HasPrefix(k, redisOwnerPrefix)
}

// carriedStores is a dedup store carrying a reuse cache on url, with a
// round trip counter on both their clients.
func carriedStores(t testing.TB, url, name string, carry bool) (*RedisDedup[string], *RedisReuse[string], *roundTrips) {
	t.Helper()
	enc := func(v string) ([]byte, error) { return []byte(v), nil }
	dec := func(b []byte) (string, error) { return string(b), nil }
	d, err := NewRedisDedup(RedisConfig[string]{URL: url, Name: name, Encode: enc, Decode: dec, OwnerGone: func(bool) string { return "gone" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	r, err := NewRedisReuse(RedisReuseConfig[string]{URL: url, Encode: enc, Decode: dec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	if carry && !d.CarryReuse(r) {
		t.Fatal("the dedup store does not carry the reuse cache")
	}
	rt := &roundTrips{}
	d.rdb.AddHook(rt)
	r.rdb.AddHook(rt)
	return d, r, rt
}

// idempotentRequest is an executor's work for one request to an
// idempotent command with a reply TTL, carried or not: the claim and
// the reuse lookup, and on a miss the run, the reuse store and the
// outcome. It returns the reply.
func idempotentRequest(t testing.TB, d *RedisDedup[string], r *RedisReuse[string], carry bool, corr, reuseKey string) string {
	req := ClaimRequest{Invoker: "inv", Key: Key{corr, "resp"}, Expiry: time.Now().Add(time.Minute), Idempotent: true}
	if carry {
		req.Reuse = reuseKey
	}
	res := d.ClaimAll([]ClaimRequest{req})[0]
	if res.Err != nil || !res.First {
		t.Fatalf("%s: first=%v %v", corr, res.First, res.Err)
	}
	v, hit := res.Reused, res.ReuseHit
	if !res.ReuseAsked {
		v, hit = r.Get(reuseKey)
	}
	if hit {
		d.Complete(res.Entry, v, time.Time{})
		return v
	}
	v = "reply to " + reuseKey
	if carry {
		d.CompleteReusing(res.Entry, v, time.Time{}, ReuseSet{Key: reuseKey, Cost: int64(len(v)), TTL: time.Minute})
	} else {
		r.Set(reuseKey, v, int64(len(v)), time.Minute)
		d.Complete(res.Entry, v, time.Time{})
	}
	return v
}

// An idempotent request with a reply TTL costs two round trips when the
// dedup store carries the reuse cache (four when it does not): a miss
// (claim + lookup, outcome + reply), and an equivalent request on
// another process, answered from Redis (claim + lookup, outcome).
func TestRedisCarriedReuseTwoRoundTrips(t *testing.T) {
	url := testkit.StartRedis(t).URL
	for _, carry := range []bool{false, true} {
		t.Run(fmt.Sprintf("carried=%v", carry), func(t *testing.T) {
			a, ra, rtA := carriedStores(t, url, "a", carry)
			b, rb, rtB := carriedStores(t, url, "b", carry)
			const n = 50
			var baseA, baseB int64
			for i := range n + 1 {
				if i == 1 { // the first loaded the scripts: count from the second
					baseA, baseB = rtA.n.Load(), rtB.n.Load()
				}
				key := fmt.Sprintf("%v-reuse-%d", carry, i)
				if got := idempotentRequest(t, a, ra, carry, fmt.Sprintf("%v-a-%d", carry, i), key); got != "reply to "+key {
					t.Fatalf("a: %q", got)
				}
				if got := idempotentRequest(t, b, rb, carry, fmt.Sprintf("%v-b-%d", carry, i), key); got != "reply to "+key {
					t.Fatalf("b, an equivalent request: %q", got)
				}
			}
			perA, perB := float64(rtA.n.Load()-baseA)/n, float64(rtB.n.Load()-baseB)/n
			t.Logf("round trips per request: %.2f (a miss), %.2f (a hit in Redis)", perA, perB)
			want := 2.0
			if !carry {
				want = 4 // claim, GET, SET, outcome; a hit: claim, GET, outcome
			}
			if carry && (perA > want || perB > want) || !carry && perA < want {
				t.Errorf("round trips per request %.2f and %.2f, want %v", perA, perB, want)
			}
		})
	}
}

// Duplicates waiting on another process cost their process one round
// trip per poll, however many there are and however many claims their
// owner holds.
func TestRedisWaitingDuplicatesOneRoundTripPerPoll(t *testing.T) {
	url := testkit.StartRedis(t).URL
	a := newRedisDedup(t, url, "a")
	defer a.Close()
	b, _, rt := carriedStores(t, url, "b", false)
	expiry := time.Now().Add(time.Minute)
	var firsts []*Entry[string]
	for i := range 20 {
		e, ok, err := a.Claim("inv", Key{fmt.Sprintf("w-%d", i), "resp"}, expiry, false)
		if !ok || err != nil {
			t.Fatal(ok, err)
		}
		firsts = append(firsts, e)
		if _, ok, err := b.Claim("inv", Key{fmt.Sprintf("w-%d", i), "resp"}, expiry, false); ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	before, start := rt.n.Load(), time.Now()
	time.Sleep(time.Second) // the window the polls are counted in, not a synchronisation
	polls, took := rt.n.Load()-before, time.Since(start)
	t.Logf("20 duplicates waiting for %v: %d round trips (%.1f per 20 ms)", took.Round(time.Millisecond), polls, float64(polls)/float64(took/redisPollInterval))
	// One per poll, the ticker's phase one more, and the heartbeat's SET
	// (once a redisHeartbeat), which the hook counts too.
	if limit := int64(took/redisPollInterval) + 1 + int64(took/redisHeartbeat) + 1; polls > limit {
		t.Errorf("%d round trips in %v, want at most %d (one per poll, and the heartbeat's)", polls, took, limit)
	}
	for _, e := range firsts {
		a.Complete(e, "done", time.Time{})
	}
}

// BenchmarkRedisIdempotentRequest measures, in one run, an idempotent
// request with a reply TTL (a miss: claim, lookup, run, store, outcome)
// with the reuse cache's calls separate and carried by the dedup store:
// round trips and Redis CPU (INFO cpu) per request.
func BenchmarkRedisIdempotentRequest(b *testing.B) {
	r := testkit.StartRedis(b)
	for _, carry := range []bool{false, true} {
		name := "separate"
		if carry {
			name = "carried"
		}
		b.Run(name, func(b *testing.B) {
			d, ru, rt := carriedStores(b, r.URL, name, carry)
			run := fmt.Sprintf("%s-%d", name, time.Now().UnixNano())     // each run's requests are new
			idempotentRequest(b, d, ru, carry, run+"-warm", run+"-warm") // loads the scripts
			cpu0, rt0 := redisCPU(b, r.Addr), rt.n.Load()
			i := 0
			for b.Loop() {
				key := fmt.Sprintf("%s-%d", run, i)
				idempotentRequest(b, d, ru, carry, key, key)
				i++
			}
			b.ReportMetric(float64(rt.n.Load()-rt0)/float64(i), "roundtrips/req")
			b.ReportMetric((redisCPU(b, r.Addr)-cpu0)/float64(i)*1e6, "redis-cpu-µs/req")
		})
	}
}

// redisCPU is the CPU seconds the Redis at addr used (INFO cpu).
func redisCPU(tb testing.TB, addr string) float64 {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	rdb := redis.NewClient(&redis.Options{Dialer: func(context.Context, string, string) (net.Conn, error) { return c, nil }})
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(info, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return total
}

// BenchmarkRedisSentinelWait measures, in one run against one Sentinel
// set-up (primary, replica, three Sentinels, on loopback), a request's
// claim and outcome with the writes confirmed by the replica (WAIT, the
// default through Sentinel) and without (Replicas off): the cost of
// exactly once through a failover.
func BenchmarkRedisSentinelWait(b *testing.B) {
	rs := testkit.StartRedisSentinel(b)
	for _, c := range []struct {
		name     string
		replicas int
	}{{"wait", 0}, {"nowait", setting.Off}} {
		b.Run(c.name, func(b *testing.B) {
			s, err := NewRedisDedup(RedisConfig[string]{URL: rs.URL, Name: c.name, Replicas: c.replicas,
				Encode: func(v string) ([]byte, error) { return []byte(v), nil }, Decode: func(b []byte) (string, error) { return string(b), nil },
				OwnerGone: func(bool) string { return "gone" }})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if c.replicas == 0 {
				testkit.WaitFor(b, "the replica online", func() bool { return s.waitingFor() == 1 })
			}
			run := fmt.Sprintf("%s-%d", c.name, time.Now().UnixNano())
			cpu0, i := redisCPU(b, rs.MasterAddr()), 0
			for b.Loop() {
				res := s.ClaimAll([]ClaimRequest{{Invoker: "inv", Key: Key{fmt.Sprintf("%s-%d", run, i), "resp"}, Expiry: time.Now().Add(time.Minute)}})[0]
				if res.Err != nil || !res.First {
					b.Fatal(res.First, res.Err)
				}
				s.Complete(res.Entry, "done", time.Time{})
				i++
			}
			b.ReportMetric((redisCPU(b, rs.MasterAddr())-cpu0)/float64(i)*1e6, "primary-cpu-µs/req")
		})
	}
}

// requestCommit is an executor's work for one request to a
// non-idempotent command, writing nothing or one key: the claim, then
// the outcome alone (Complete) or with the write (CommitOutcome), and,
// with msg, a message of 64 bytes into the outbox (which d must have).
func requestCommit(tb testing.TB, d *RedisDedup[string], corr string, write bool, msg ...bool) {
	res := d.ClaimAll([]ClaimRequest{{Invoker: "inv", Key: Key{corr, "resp"}, Expiry: time.Now().Add(time.Minute)}})[0]
	if res.Err != nil || !res.First {
		tb.Fatalf("%s: first=%v %v", corr, res.First, res.Err)
	}
	if !write {
		d.Complete(res.Entry, "reply "+corr, time.Time{})
		return
	}
	op := state.Op{Kind: state.OpSet, NS: "plugin/bench", Key: []byte(corr), Value: []byte("v")}
	var ms []state.Message
	if len(msg) > 0 && msg[0] {
		ms = []state.Message{{ID: corr, Body: make([]byte, 64), NS: "plugin/bench"}}
	}
	if _, err := d.CommitOutcome(res.Entry, "reply "+corr, time.Time{}, []state.Op{op}, ms, "unknown"); err != nil {
		tb.Fatal(err)
	}
}

// A request that writes a key costs the round trips of one that writes
// nothing: two, the claim and the outcome, whose script carries the
// write.
func TestRedisWriteRidesInTheOutcome(t *testing.T) {
	url := testkit.StartRedis(t).URL
	d, _, rt := carriedStores(t, url, "w", false)
	d.State(state.Limits{})
	requestCommit(t, d, "warm-0", false) // loads the scripts
	requestCommit(t, d, "warm-1", true)
	for _, write := range []bool{false, true} {
		before := rt.n.Load()
		const n = 20
		for i := range n {
			requestCommit(t, d, fmt.Sprintf("rt-%v-%d", write, i), write)
		}
		if got := rt.n.Load() - before; got != 2*n {
			t.Errorf("write=%v: %d round trips for %d requests, want %d", write, got, n, 2*n)
		}
	}
}

// BenchmarkRedisRequestCommit measures a request to a non-idempotent
// command that writes nothing ("outcome"), one that writes one key
// ("outcome+write": the write in the outcome's script), and one that
// writes a key and publishes a message ("outcome+write+message": both in
// the script, the message into the outbox's stream), 1 and 16 at a
// time: round trips, Redis CPU and time per request.
func BenchmarkRedisRequestCommit(b *testing.B) {
	r := testkit.StartRedis(b)
	for _, inFlight := range []int{1, 16} {
		for _, kind := range []int{0, 1, 2} {
			name := []string{"outcome", "outcome+write", "outcome+write+message"}[kind]
			write, msg := kind > 0, kind > 1
			b.Run(fmt.Sprintf("%s/inflight=%d", name, inFlight), func(b *testing.B) {
				d, _, rt := carriedStores(b, r.URL, name, false)
				d.State(state.Limits{})
				d.Outbox(RedisOutboxConfig{Group: "bench", Consumer: name, MaxMessages: 1 << 40, MaxBytes: 1 << 40})
				run := fmt.Sprintf("%s-%d-%d", name, inFlight, time.Now().UnixNano())
				requestCommit(b, d, run+"-warm", write, msg)
				cpu0, rt0 := redisCPU(b, r.Addr), rt.n.Load()
				var next atomic.Int64
				b.ResetTimer()
				var wg sync.WaitGroup
				for range inFlight {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
							requestCommit(b, d, fmt.Sprintf("%s-%d", run, i), write, msg)
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(rt.n.Load()-rt0)/float64(b.N), "roundtrips/req")
				b.ReportMetric((redisCPU(b, r.Addr)-cpu0)/float64(b.N)*1e6, "redis-cpu-µs/req")
			})
		}
	}
}
