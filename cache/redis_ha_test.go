package cache

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// haLoad is requests to non-idempotent commands sent to the processes
// of one shared store, resent when refused "not run" or told to send
// again, as an invoker does; it counts each request's executions.
type haLoad struct {
	t      *testing.T
	stores []*RedisDedup[string]

	mu       sync.Mutex
	runs     map[string]int    // executions by correlation id
	answers  map[string]string // the outcome each request got
	refusals atomic.Int64      // "not run" answers (sent again)
	answered atomic.Int64
	// lastRefusal is the unix ns of the last refusal.
	lastRefusal atomic.Int64
}

func newHALoad(t *testing.T, url string, n int) *haLoad {
	l := &haLoad{t: t, runs: map[string]int{}, answers: map[string]string{}}
	for i := range n {
		s := newRedisDedup(t, url, fmt.Sprintf("p%d", i))
		t.Cleanup(s.Close)
		l.stores = append(l.stores, s)
	}
	return l
}

// send sends the request corr to process i, again and again (to the next
// process each time) until it is answered, and returns the answer.
func (l *haLoad) send(i int, corr string) string {
	key, expiry := Key{corr, "resp"}, time.Now().Add(time.Minute)
	for try := 0; ; try++ {
		s := l.stores[(i+try)%len(l.stores)]
		e, first, err := s.Claim("inv", key, expiry, false)
		switch {
		case errors.Is(err, ErrStoreUnavailable):
			l.refused()
			continue
		case err != nil:
			l.t.Errorf("%s: %v", corr, err)
			return ""
		case first:
			l.mu.Lock()
			l.runs[corr]++
			l.mu.Unlock()
			s.Complete(e, "ran "+corr, time.Time{})
		}
		v := waitDone(l.t, e)
		if v == "send again" {
			l.refused()
			continue
		}
		return v
	}
}

func (l *haLoad) refused() {
	l.refusals.Add(1)
	l.lastRefusal.Store(time.Now().UnixNano())
	time.Sleep(5 * time.Millisecond) // the invoker's pause before it sends again
}

// run sends requests from workers goroutines until stop is closed.
func (l *haLoad) run(workers int, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pace := time.NewTicker(4 * time.Millisecond) // a bounded load: ≤ 250 requests/s a worker
			defer pace.Stop()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				case <-pace.C:
				}
				corr := fmt.Sprintf("w%d-%d", w, n)
				v := l.send(w+n, corr)
				l.mu.Lock()
				l.answers[corr] = v
				l.mu.Unlock()
				l.answered.Add(1)
			}
		}()
	}
	return &wg
}

// check replays every answered request on every process: each gets the
// answer it got the first time, and no request ran twice.
func (l *haLoad) check() {
	l.t.Helper()
	twice, unknown := 0, 0
	for corr, n := range l.runs {
		if n > 1 {
			twice++
			l.t.Errorf("%s ran %d times", corr, n)
		}
	}
	for corr, v := range l.answers {
		if v != "ran "+corr {
			unknown++
		}
		for i := range l.stores {
			if got := l.send(i, corr); got != v {
				l.t.Errorf("%s replayed on p%d: %q, first answer %q", corr, i, got, v)
			}
		}
	}
	for corr, n := range l.runs {
		if n > 1 {
			twice++
			l.t.Errorf("%s ran %d times after the replays", corr, n)
		}
	}
	l.t.Logf("%d answered (%d outcome unknown), %d refused not run and sent again, %d run twice",
		len(l.answers), unknown, l.refusals.Load(), twice)
}

// waitAnswered waits until n more requests are answered.
func (l *haLoad) waitAnswered(n int64) {
	l.t.Helper()
	target := l.answered.Load() + n
	testkit.WaitFor(l.t, fmt.Sprintf("%d requests answered", n), func() bool { return l.answered.Load() >= target })
}

// A Sentinel failover under load: the primary killed (kill -9), the
// replica promoted, the old primary restarted as a replica of the new
// one. The stores follow the new primary by themselves; no request
// answered runs again when replayed, every request refused "not run" is
// answered when sent again, and the refusals end within a second of the
// promotion.
func TestRedisSentinelFailoverRunsNothingTwice(t *testing.T) {
	rs := testkit.StartRedisSentinel(t)
	l := newHALoad(t, rs.URL, 2)
	for _, s := range l.stores {
		testkit.WaitFor(t, "the store to wait for the replica", func() bool { return s.waitingFor() == 1 })
	}
	stop := make(chan struct{})
	wg := l.run(8, stop)
	l.waitAnswered(300)

	old := rs.MasterAddr()
	killed := time.Now()
	rs.Primary.Kill()
	testkit.WaitFor(t, "the Sentinels to promote the replica", func() bool { a := rs.MasterAddr(); return a != "" && a != old })
	promoted := time.Now()
	l.waitAnswered(300)
	testkit.WaitFor(t, "every Sentinel to name the new primary", func() bool { return rs.Agreed(rs.MasterAddr()) })
	// The failover's refusals are those before the old primary returns:
	// while it syncs as a replica, requests are refused again (not run),
	// as documented, and that is not the failover's doing.
	failoverRefusal := l.lastRefusal.Load()
	rs.Primary.RestartAsReplicaOf(t, rs.MasterAddr())
	// The old primary comes back as a replica (testkit.RestartAsReplicaOf
	// says why). On a machine busy enough to starve the new primary past
	// down-after-milliseconds, the Sentinels may fail over again, back to
	// it: a second failover, through which nothing may run twice either.
	failedBack := false
	testkit.WaitFor(t, "the old primary to be a replica (or the primary again)", func() bool {
		out, _ := testkit.RedisCLI(rs.Primary.Addr, "ROLE")
		failedBack = rs.MasterAddr() == old && rs.Agreed(old)
		return strings.HasPrefix(out, "slave") || failedBack
	})
	back := time.Now()
	l.waitAnswered(300)
	close(stop)
	wg.Wait()

	last := time.Unix(0, failoverRefusal)
	t.Logf("killed at 0, promoted at %v, the failover's last refusal at %v, the old primary back at %v (failed back to: %v)", promoted.Sub(killed).Round(time.Millisecond),
		last.Sub(killed).Round(time.Millisecond), back.Sub(killed).Round(time.Millisecond), failedBack)
	if over := last.Sub(promoted); over > time.Second { // the refusals read before the old primary returned: the first failover's alone
		t.Errorf("requests were refused until %v after the promotion, want at most 1 s", over.Round(time.Millisecond))
	}
	l.check()
}

// A 3-master Redis Cluster: requests and their duplicates (sent to two
// processes at once) are all answered, none runs twice, the keys spread
// over the three masters; through a live reshard of 2,000 slots, the
// same.
func TestRedisClusterRunsNothingTwice(t *testing.T) {
	rc := testkit.StartRedisCluster(t, 3)
	l := newHALoad(t, rc.URL, 2)
	stop := make(chan struct{})
	wg := l.run(8, stop)
	dupStop := make(chan struct{})
	dups := l.duplicates(dupStop)
	l.waitAnswered(500)
	if err := rc.Reshard(t, 0, 1, 2000); err != nil {
		t.Fatal(err)
	}
	l.waitAnswered(500)
	close(stop)
	close(dupStop)
	wg.Wait()
	dups.Wait()
	for i := range rc.Nodes {
		if n := rc.Keys(t, i); n == 0 {
			t.Errorf("master %d holds no key", i)
		} else {
			t.Logf("master %d holds %d keys", i, n)
		}
	}
	l.check()
}

// duplicates sends, until stop, duplicates of answered requests and of
// requests in flight to every process at once, and checks each gets its
// request's answer.
func (l *haLoad) duplicates(stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			corr := fmt.Sprintf("dup-%d", n)
			var got [2]string
			var both sync.WaitGroup
			for i := range got {
				both.Add(1)
				go func() { defer both.Done(); got[i] = l.send(i, corr) }()
			}
			both.Wait()
			if got[0] != got[1] || got[0] != "ran "+corr {
				l.t.Errorf("the duplicates of %s got %q and %q", corr, got[0], got[1])
			}
			l.mu.Lock()
			l.answers[corr] = got[0]
			l.mu.Unlock()
		}
	}()
	return &wg
}

// A Redis stall longer than the store's timeout: the claim made during
// it is refused "not run", though Redis runs it when it wakes. The
// process releases it, so the request sent again is answered, run once,
// whichever process gets it, well before the request expires.
func TestRedisStallReleasesTheClaim(t *testing.T) {
	r := testkit.StartSecureRedis(t, testkit.RedisOptions{Debug: true})
	l := newHALoad(t, r.URL, 2)
	if got := l.send(0, "before"); got != "ran before" { // the scripts are loaded: the stalled claim runs when Redis wakes
		t.Fatalf("before the stall: %q", got)
	}
	stall := make(chan error, 1)
	go func() { _, err := testkit.RedisCLI(r.Addr, "DEBUG", "SLEEP", "3"); stall <- err }()
	defer func() {
		if err := <-stall; err != nil {
			t.Errorf("DEBUG SLEEP: %v", err)
		}
	}()
	testkit.WaitFor(t, "Redis to stall", func() bool { return !testkit.RedisAnswers(r.Addr, 200*time.Millisecond) })
	start := time.Now()
	_, _, err := l.stores[0].Claim("inv", Key{"stalled", "resp"}, time.Now().Add(25*time.Second), false)
	if !errors.Is(err, ErrStoreUnavailable) {
		t.Fatalf("a claim while Redis stalls: %v, want ErrStoreUnavailable", err)
	}
	// Sent again, to the other process only (this one would take its
	// own claim back).
	other := &haLoad{t: t, stores: l.stores[1:], runs: map[string]int{}}
	if got := other.send(0, "stalled"); got != "ran stalled" {
		t.Errorf("sent again to the other process: %q", got)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("answered %v after the refusal", took)
	}
	if other.runs["stalled"] != 1 {
		t.Errorf("ran %d times", other.runs["stalled"])
	}
}

// Pointed at a cluster node with redis://, or at a Sentinel, the store
// refuses to start with the URL form that fits.
func TestRedisWrongTopologyNamesTheForm(t *testing.T) {
	rc := testkit.StartRedisCluster(t, 3)
	rs := testkit.StartRedisSentinel(t)
	for _, c := range []struct{ url, want string }{
		{"redis://" + rc.Nodes[0].Addr + "/0", "use redis-cluster://"},
		{"redis://" + rs.SentinelAddrs[0] + "/0", "use redis+sentinel://"},
		{"redis://" + rs.Replica.Addr + "/0", "a replica"},
	} {
		var err error
		// A node owns some slots: the heartbeat's key may land on one of
		// them; a few instance names find one that does not.
		for i := 0; i < 20 && err == nil; i++ {
			var s *RedisDedup[string]
			s, err = NewRedisDedup(RedisConfig[string]{URL: c.url, Name: fmt.Sprintf("probe-%d", i),
				Encode: func(v string) ([]byte, error) { return []byte(v), nil }, Decode: func(b []byte) (string, error) { return string(b), nil },
				OwnerGone: func(bool) string { return "gone" }})
			if err == nil {
				s.Close()
			}
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.url, err, c.want)
		}
	}
}

// A Redis Cluster over TLS (the cluster bus too), as a managed one is:
// rediss-cluster:// with the CA reaches every node, each connection
// checking the certificate of the node it dials; requests and their
// duplicates on another process are answered once, keys on every node.
func TestRedisClusterOverTLS(t *testing.T) {
	pki := testkit.NewPKI(t)
	rc := testkit.StartSecureRedisCluster(t, 3, testkit.RedisOptions{TLS: pki})
	if !strings.HasPrefix(rc.URL, "rediss-cluster://") {
		t.Fatalf("URL %s", rc.URL)
	}
	var stores []*RedisDedup[string]
	for _, name := range []string{"a", "b"} {
		s, err := NewRedisDedup(RedisConfig[string]{URL: rc.URL, Name: name, TLS: tlsTo(t, pki, "", ""),
			Encode: func(v string) ([]byte, error) { return []byte(v), nil }, Decode: func(b []byte) (string, error) { return string(b), nil },
			OwnerGone: func(bool) string { return "gone" }})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	l := &haLoad{t: t, stores: stores, runs: map[string]int{}, answers: map[string]string{}}
	for i := range 300 {
		corr := fmt.Sprintf("tls-%d", i)
		got := l.send(i, corr)
		if got != "ran "+corr {
			t.Fatalf("%s: %q", corr, got)
		}
		l.answers[corr] = got
	}
	for i := range rc.Nodes {
		if rc.Keys(t, i) == 0 {
			t.Errorf("node %d holds no key", i)
		}
	}
	l.check()
}
