package exactlyonce

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The shared store as a host starts and while its replica is slow: a
// healthy Sentinel set-up (replica online, no lag) never refuses, and a
// host that is there is never reported absent, however loaded the
// machine (cache/redis_confirm.go; the executor acks before the claim).

// invokeLedger sends n ledger requests at once through `cmdhost invoke`
// (an ask: it fails fast when no executor acks) to the host cli-host on
// broker, and fails the test for each not answered with its payload.
func invokeLedger(t *testing.T, broker, prefix string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			payload := fmt.Sprintf("%s-%d", prefix, i)
			out, errOut, code := clitest.Run(t, "invoke", "ledger", "-d", payload, "--broker", broker, "--executor", "cli-host", "--timeout", "30s")
			if code != 0 || out != payload {
				t.Errorf("invoke ledger %s: exit %d, stdout %q, stderr %q", payload, code, out, errOut)
			}
		}()
	}
	wg.Wait()
}

// Five times in a row, a new Sentinel set-up and a new host on it, its
// replica (online, in sync) starved for 6 s as the host starts: the
// first requests, sent as soon as serve logs that it serves, are all
// answered — none refused 503 for want of a replica's confirmation,
// none reported "no executor answered". (The host confirms replication
// before it serves; a claim waits for a slow replica; the ack goes
// before the claim.)
func TestSentinelFirstRequestsAnswered(t *testing.T) {
	for n := 1; n <= 5; n++ {
		t.Run(fmt.Sprintf("run-%d", n), func(t *testing.T) {
			rs := testkit.StartRedisSentinel(t)
			l := newLedger(t)
			stall := rs.StallReplica(t, 6)
			addr, _ := clitest.StartServeIn(t, l.plugins, nil, "--store", rs.URL)
			invokeLedger(t, "mqtt://"+addr, fmt.Sprintf("first-%d", n), 8)
			if err := <-stall; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A replica starved for 3 s (slower than a WAIT, and than the invoker's
// 1.5 s ack window) while requests arrive: they are acked at once and
// answered once the replica confirms their claims.
func TestSentinelSlowReplicaAnswered(t *testing.T) {
	rs := testkit.StartRedisSentinel(t)
	l := newLedger(t)
	addr, _ := clitest.StartServeIn(t, l.plugins, nil, "--store", rs.URL)
	invokeLedger(t, "mqtt://"+addr, "warm", 1)
	stall := rs.StallReplica(t, 3)
	invokeLedger(t, "mqtt://"+addr, "slow", 4)
	if err := <-stall; err != nil {
		t.Fatal(err)
	}
}

// A full Redis (maxmemory reached, noeviction) is reported as full,
// naming maxmemory, to the invoker and at serve's start; rediss:// to a
// Redis without TLS says that it does not speak TLS.
func TestStoreFullAndPlainSaySo(t *testing.T) {
	r := testkit.StartRedis(t)
	l := newLedger(t)
	addr, _ := clitest.StartServeIn(t, l.plugins, nil, "--store", r.URL)
	for _, args := range [][]string{{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, {"CONFIG", "SET", "maxmemory", "1"}} {
		if _, err := testkit.RedisCLI(r.Addr, args...); err != nil {
			t.Fatal(err)
		}
	}
	_, errOut, code := clitest.Run(t, "invoke", "ledger", "-d", "x", "--broker", "mqtt://"+addr, "--executor", "cli-host", "--timeout", "30s")
	if code != base.ExitFailed || !strings.Contains(errOut, "the dedup store is full") || !strings.Contains(errOut, "maxmemory") || strings.Contains(errOut, "unreachable") {
		t.Errorf("invoke on a full store: exit %d, %q; want 503 saying the store is full", code, errOut)
	}
	_, errOut, code = clitest.Run(t, "serve", "--plugins", l.plugins, "--listen", clitest.FreeAddr(t), "--store", r.URL)
	if code == 0 || !strings.Contains(errOut, "Redis is full") || !strings.Contains(errOut, "raise maxmemory") {
		t.Errorf("serve on a full store: exit %d, %q; want one naming maxmemory", code, errOut)
	}
	if _, err := testkit.RedisCLI(r.Addr, "CONFIG", "SET", "maxmemory", "0"); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = clitest.Run(t, "serve", "--plugins", l.plugins, "--listen", clitest.FreeAddr(t), "--store", "rediss://"+r.Addr+"/0")
	if code == 0 || !strings.Contains(errOut, "does not speak TLS: use redis://") {
		t.Errorf("serve --store rediss:// on a Redis without TLS: exit %d, %q", code, errOut)
	}
}
