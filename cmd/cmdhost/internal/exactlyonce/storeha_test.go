package exactlyonce

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The shared store through a Sentinel failover and a cluster reshard:
// two replicas of `cmdhost serve` in a share group, the ledger command
// (non-idempotent, its runs counted outside the host), and every
// answered request sent again afterwards, same correlation data: none
// may run a second time.

// twoReplicas starts mosquitto and two replicas sharing the ledger's
// requests with --store store; their log lines about the store are
// logged when the test fails.
func twoReplicas(t *testing.T, store string) (*url.URL, *ledger) {
	t.Helper()
	mosq := brokertest.StartMosquitto(t)
	l := newLedger(t)
	var mu sync.Mutex
	var lines []string
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			defer mu.Unlock()
			t.Logf("the replicas' store log:\n%s", strings.Join(lines, "\n"))
		}
	})
	for i := 1; i <= 2; i++ {
		clitest.StartServeIn(t, l.plugins, func(line string) {
			if strings.Contains(line, "store") {
				mu.Lock()
				lines = append(lines, fmt.Sprintf("replica-%d %s", i, line))
				mu.Unlock()
			}
		}, "--broker", mosq.String(), "--client-id", fmt.Sprintf("replica-%d", i), "--share", "g", "--store", store)
	}
	return mosq, l
}

// replay sends every request load answered again, by the invoker that
// sent it (its response topic) with its correlation data, 32 at a
// time, and fails for any answered otherwise than the first time: its
// payload, or outcome unknown.
func (l *ledgerLoad) replay(t *testing.T) int {
	t.Helper()
	calls := make(chan sentCall)
	var wg sync.WaitGroup
	var replayed atomic.Int64
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sc := range calls {
				payload := string(sc.call.Payload)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				res, err := sc.inv.Invoke(ctx, sc.call)
				cancel()
				ok := err == nil && res.Status == 200 && string(res.Payload) == payload
				if l.unknown[payload] {
					ok = err == nil && res.Status == 500 && strings.HasPrefix(res.Message, "outcome unknown")
				}
				if !ok {
					t.Errorf("%s replayed: %+v, %v", payload, res, err)
				}
				replayed.Add(1)
			}
		}()
	}
	l.answers.Range(func(_, c any) bool { calls <- c.(sentCall); return true })
	close(calls)
	wg.Wait()
	return int(replayed.Load())
}

// A Sentinel set-up (primary, replica, three Sentinels) under load, the
// primary killed with kill -9, the replica promoted, the old primary
// started again as a replica of the new one: the hosts follow the new primary by themselves, the
// refusals ("not run; send it again") end within a second of the
// promotion, every request is answered, and none runs twice, replays of
// every answered request included.
func TestSentinelFailoverRunsNothingTwice(t *testing.T) {
	const total = 3000
	rs := testkit.StartRedisSentinel(t)
	mosq, l := twoReplicas(t, rs.URL)
	load := startLedgerLoad(t, mosq, "cli-host", total, 32, 2*time.Second)
	load.waitAnswered(t, total/3)
	old := rs.MasterAddr()
	killed := time.Now()
	rs.Primary.Kill()
	testkit.WaitFor(t, "the Sentinels to promote the replica", func() bool { a := rs.MasterAddr(); return a != "" && a != old })
	promoted := time.Now()
	load.waitAnswered(t, total*2/3)
	testkit.WaitFor(t, "every Sentinel to name the new primary", func() bool { return rs.Agreed(rs.MasterAddr()) })
	// The failover's refusals are those before the old primary returns:
	// while it syncs as a replica, requests are refused again (not run).
	failoverRefusal := load.lastSendAgain.Load()
	rs.Primary.RestartAsReplicaOf(t, rs.MasterAddr())
	load.waitAnswered(t, total)
	load.wg.Wait()
	replayed := load.replay(t)
	last := time.Unix(0, failoverRefusal)
	t.Logf("promoted %v after the kill; the failover's last refusal %v after it; %d answered (%d outcome unknown), %d refused and sent again, %d re-sends, %d replayed",
		promoted.Sub(killed).Round(time.Millisecond), last.Sub(killed).Round(time.Millisecond), load.answered.Load(), len(load.unknown),
		load.sendAgain.Load(), load.resent.Load(), replayed)
	// The refusals counted were read before the old primary returned:
	// the first failover's alone.
	if over := last.Sub(promoted); over > time.Second {
		t.Errorf("requests were refused until %v after the promotion, want at most 1 s", over.Round(time.Millisecond))
	}
	// On a machine busy enough to starve the new primary past
	// down-after-milliseconds, the Sentinels may fail over again, back to
	// the old primary once it is a replica: it is then sent scripts, as a
	// primary; that nothing ran twice (checkOnce) holds through both.
	if rs.MasterAddr() == old {
		t.Logf("the Sentinels failed back to the old primary: a second failover")
		checkOnce(t, l.runs(t), total, load)
		return
	}
	// The old primary, back, never got a claim or an outcome: no host
	// sent it a script (a replica counts even those it refuses).
	if stats, err := testkit.RedisCLI(rs.Primary.Addr, "INFO", "commandstats"); err != nil || strings.Contains(stats, "cmdstat_evalsha") || strings.Contains(stats, "cmdstat_eval:") {
		t.Errorf("the old primary, restarted, was sent scripts: %v\n%s", err, stats)
	}
	checkOnce(t, l.runs(t), total, load)
}

// A 3-master Redis Cluster under load, 2,000 slots moved live from one
// master to another (redis-cli --cluster reshard): every request is
// answered, none runs twice (replays included), and the keys are on all
// three masters.
func TestRedisClusterRunsNothingTwice(t *testing.T) {
	const total = 6000
	rc := testkit.StartRedisCluster(t, 3)
	mosq, l := twoReplicas(t, rc.URL)
	load := startLedgerLoad(t, mosq, "cli-host", total, 32, 2*time.Second)
	load.waitAnswered(t, total/4)
	before := load.answered.Load()
	if err := rc.Reshard(t, 0, 2, 2000); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d requests answered during the reshard", load.answered.Load()-before)
	load.waitAnswered(t, total)
	load.wg.Wait()
	replayed := load.replay(t)
	keys := make([]int, len(rc.Nodes))
	for i := range rc.Nodes {
		if keys[i] = rc.Keys(t, i); keys[i] == 0 {
			t.Errorf("master %d holds no key", i)
		}
	}
	t.Logf("%d answered (%d outcome unknown), %d refused and sent again, %d replayed; keys by master %v",
		load.answered.Load(), len(load.unknown), load.sendAgain.Load(), replayed, keys)
	checkOnce(t, l.runs(t), total, load)
}

// TestStoreCapacityMeasure reports the capacity model's figures on this
// machine (make replicas): two replicas sharing one Redis, 6,000 requests
// to a non-idempotent command, 32 in flight; per request, the CPU of the
// hosts (/proc) and of Redis (INFO cpu), and the Redis commands (INFO
// stats).
func TestStoreCapacityMeasure(t *testing.T) {
	if os.Getenv("CMDHOST_MEASURE") == "" {
		t.Skip("a measurement: make replicas")
	}
	const total = 6000
	redis := testkit.StartRedis(t)
	mosq := brokertest.StartMosquitto(t)
	l := newLedger(t)
	var pids []int
	for i := 1; i <= 2; i++ {
		_, cmd, _ := clitest.LaunchServe(t, l.plugins, nil, "--broker", mosq.String(), "--client-id", fmt.Sprintf("replica-%d", i), "--share", "g", "--store", redis.URL)
		pids = append(pids, cmd.Process.Pid)
	}
	hostCPU := func() time.Duration {
		var sum time.Duration
		for _, pid := range pids {
			sum += processCPU(t, pid)
		}
		return sum
	}
	redisInfo := func() (cpu float64, commands int64) {
		out, err := testkit.RedisCLI(redis.Addr, "INFO")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(out, "\n") {
			k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
			switch k {
			case "used_cpu_sys", "used_cpu_user":
				f, _ := strconv.ParseFloat(v, 64)
				cpu += f
			case "total_commands_processed":
				commands, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		return cpu, commands
	}
	host0, start := hostCPU(), time.Now()
	cpu0, cmds0 := redisInfo()
	load := startLedgerLoad(t, mosq, "cli-host", total, 32, 2*time.Second)
	load.waitAnswered(t, total)
	load.wg.Wait()
	took := time.Since(start)
	cpu1, cmds1 := redisInfo()
	host := hostCPU() - host0
	t.Logf("%d requests in %v (%.0f/s): host CPU %.0f µs/request (both replicas), Redis CPU %.0f µs/request, %.2f Redis commands/request (INFO total_commands_processed: a script and the calls it makes, heartbeats included)",
		total, took.Round(time.Millisecond), total/took.Seconds(), float64(host.Microseconds())/total, (cpu1-cpu0)/total*1e6, float64(cmds1-cmds0)/total)
	checkOnce(t, l.runs(t), total, load)
}

// processCPU is the CPU time process pid used so far (/proc/PID/stat:
// utime + stime, in clock ticks of 10 ms).
func processCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
