package exactlyonce

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The exactly-once tests: real `cmdhost serve` processes, mosquitto, a
// non-idempotent command whose runs are counted outside the host (the
// ledger plugin appends each run's payload to a file), invokers that keep
// requests in flight and re-send a request, same correlation data, when
// its reply does not come. A payload on two ledger lines ran twice.

// ledger is a plugins folder serving ledger, whose runs go to a file.
type ledger struct{ plugins, out string }

func newLedger(t *testing.T) *ledger {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	l := &ledger{plugins: t.TempDir(), out: t.TempDir()}
	bin, err := os.ReadFile("../../../../testdata/plugins-alt/ledger.wasm")
	if err != nil {
		t.Fatalf("%v (run `make plugins`)", err)
	}
	if err := os.WriteFile(filepath.Join(l.plugins, "ledger.wasm"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	l.setRun(t, "run-1")
	return l
}

// setRun writes the operator file: the mount of the runs' file, and RUN,
// which the plugin writes on each line: the host process started next
// names its runs so.
func (l *ledger) setRun(t *testing.T, run string) {
	t.Helper()
	op := fmt.Sprintf(`{"grants": {"env": {"RUN": %q}, "mounts": [{"host": %q, "guest": "/ledger"}]}}`, run, l.out)
	if err := os.WriteFile(filepath.Join(l.plugins, "ledger.json"), []byte(op), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runs returns, per payload, the processes that ran it, a line each.
func (l *ledger) runs(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(l.out, "runs"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runs := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		payload, run, _ := strings.Cut(sc.Text(), " ")
		runs[payload] = append(runs[payload], run)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return runs
}

// ledgerLoad sends total ledger requests to executor on broker u, inFlight
// at a time, each with its own payload and correlation data, re-sending a
// request after resend without its reply until it has one. A request's
// message expiry is a minute: every re-send comes before it, as the
// protocol wants (a duplicate after its original's expiry is dropped). answered
// counts the requests answered; the returned function waits until all are.
type ledgerLoad struct {
	// firstLost counts the requests whose first send got no reply: an
	// invoker that never re-sends would have lost them.
	answered, resent, firstLost atomic.Int64
	// sendAgain counts the 503s that said the request was not run and
	// should be sent again (it is).
	sendAgain atomic.Int64
	errs      chan error
	// unknown holds the payloads answered "outcome unknown" (a shared
	// store's answer when the host running them was killed): each ran
	// once or not at all.
	unknownMu sync.Mutex
	unknown   map[string]bool
	wg        sync.WaitGroup
	// answers holds each answered request's sentCall, by payload, for
	// replays (by the same invoker: the same response topic);
	// lastSendAgain is the unix ns of the last "send it again".
	answers       sync.Map
	lastSendAgain atomic.Int64
}

// sentCall is a call and the invoker that sent it.
type sentCall struct {
	call rpc.Call
	inv  *rpc.Invoker
}

func startLedgerLoad(t *testing.T, broker *url.URL, executor string, total, inFlight int, resend time.Duration) *ledgerLoad {
	t.Helper()
	return startLedgerLoadOn(t, func(int) session.Config { return session.Config{Broker: broker} }, executor, total, inFlight, resend)
}

// startLedgerLoadOn is startLedgerLoad with invoker w's session (its
// brokers; the client id is set here) from sessionOf(w).
func startLedgerLoadOn(t *testing.T, sessionOf func(w int) session.Config, executor string, total, inFlight int, resend time.Duration) *ledgerLoad {
	t.Helper()
	l := &ledgerLoad{errs: make(chan error, inFlight), unknown: map[string]bool{}}
	var next atomic.Int64
	for w := 0; w < inFlight; w++ {
		sc := sessionOf(w)
		sc.ClientID = fmt.Sprintf("eo-inv-%d", w)
		inv, err := rpc.NewInvoker(context.Background(), rpc.InvokerConfig{Session: sc})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = inv.Close() })
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				i := next.Add(1)
				if i > int64(total) {
					return
				}
				payload := fmt.Sprintf("req-%06d", i)
				call := rpc.Call{Topic: "rpc/" + executor + "/ledger", Payload: []byte(payload), ContentType: "text/plain",
					Timeout: time.Minute, Correlation: rpc.NewCorrelation()}
				for attempt := 0; ; attempt++ {
					if attempt == 1000 { // hang guard: 1000 re-sends
						l.errs <- fmt.Errorf("%s: no reply after %d sends", payload, attempt)
						return
					}
					if attempt == 1 {
						l.firstLost.Add(1)
					}
					if attempt > 0 {
						l.resent.Add(1)
					}
					ctx, cancel := context.WithTimeout(context.Background(), resend)
					res, err := inv.Invoke(ctx, call)
					cancel()
					if errors.Is(err, rpc.ErrNoResponse) || errors.Is(err, context.DeadlineExceeded) {
						continue // the same request again
					}
					if err == nil && res.Status == 503 && strings.Contains(res.Message, "send it again") {
						l.sendAgain.Add(1)
						l.lastSendAgain.Store(time.Now().UnixNano())
						time.Sleep(10 * time.Millisecond) // the invoker's back-off, not a synchronisation
						continue
					}
					if err == nil && res.Status == 500 && strings.HasPrefix(res.Message, "outcome unknown") {
						l.unknownMu.Lock()
						l.unknown[payload] = true
						l.unknownMu.Unlock()
					} else if err != nil || res.Status != 200 || string(res.Payload) != payload {
						l.errs <- fmt.Errorf("%s: %+v, %v", payload, res, err)
						return
					}
					l.answers.Store(payload, sentCall{call, inv})
					l.answered.Add(1)
					break
				}
			}
		}()
	}
	return l
}

// waitAnswered waits until n requests are answered.
func (l *ledgerLoad) waitAnswered(t *testing.T, n int64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Minute); l.answered.Load() < n; { // hang guard
		select {
		case err := <-l.errs:
			t.Fatal(err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d requests answered after 5 minutes", l.answered.Load(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkOnce fails for every payload of the ledger that ran more than once
// and for every one of the total that never ran, but those load answered
// "outcome unknown".
func checkOnce(t *testing.T, runs map[string][]string, total int, load *ledgerLoad) {
	t.Helper()
	twice := 0
	for p, by := range runs {
		if len(by) > 1 {
			twice++
			if twice <= 10 {
				t.Errorf("%s ran %d times, by %v", p, len(by), by)
			}
		}
	}
	for i := 1; i <= total; i++ {
		if p := fmt.Sprintf("req-%06d", i); len(runs[p]) == 0 && !load.unknown[p] {
			t.Errorf("%s answered, but never ran", p)
		}
	}
	if twice > 0 {
		t.Errorf("%d of %d requests ran more than once", twice, total)
	}
}

// A graceful restart (SIGTERM, then start again) under load runs nothing
// twice: the stop publishes every reply it owes and flushes every ack
// before it disconnects; what it has not acked it has not run, and the
// restarted host, on the same session, runs it once.
func TestGracefulRestartRunsNothingTwice(t *testing.T) {
	for name, start := range map[string]func(testing.TB) *url.URL{
		"mosquitto": brokertest.StartMosquitto, "embedded": brokertest.StartEmbedded,
	} {
		t.Run(name, func(t *testing.T) { gracefulRestarts(t, start(t)) })
	}
}

func gracefulRestarts(t *testing.T, broker *url.URL) {
	const total, inFlight = 3000, 32
	l := newLedger(t)
	serve := func() func() (string, error) {
		_, stop := clitest.StartServeIn(t, l.plugins, nil, "--broker", broker.String(), "--client-id", "eo-host")
		return stop
	}
	stop := serve()
	load := startLedgerLoad(t, broker, "cli-host", total, inFlight, 2*time.Second)
	for i, at := range []int64{total / 3, 2 * total / 3} {
		load.waitAnswered(t, at)
		l.setRun(t, fmt.Sprintf("run-%d", i+2))
		log, err := stop()
		if err != nil {
			t.Fatalf("serve: %v\n%s", err, log)
		}
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
				t.Errorf("serve: %s", line)
			}
		}
		stop = serve()
	}
	load.waitAnswered(t, total)
	load.wg.Wait()
	t.Logf("%d answered, %d re-sends", load.answered.Load(), load.resent.Load())
	checkOnce(t, l.runs(t), total, load)
}

// Three replicas in a share group (serve's default session expiry with
// --share) and the shared dedup store, one killed with kill -9 mid-load
// and started again: every request is answered (the invokers re-send),
// none runs twice, and a reply of an idempotent command computed on one
// replica is reused by the others. (Without the store, a request the killed replica ran
// but had not answered runs again on another replica when re-sent.)
func TestReplicaKilledRunsNothingTwice(t *testing.T) {
	const total = 3000
	load, runs := killOneReplica(t, total, testkit.StartRedis(t).URL, true, nil)
	t.Logf("%d answered (%d outcome unknown), %d first sends unanswered, %d re-sends",
		load.answered.Load(), len(load.unknown), load.firstLost.Load(), load.resent.Load())
	checkOnce(t, runs, total, load)
}

// killOneReplica starts three replicas sharing the ledger's requests
// (serve --share, --store store unless "", and extra flags), sends total
// requests, 32 in flight, kills one replica with kill -9 once a third is
// answered (and starts it again when restart says so), and returns once
// all are answered.
func killOneReplica(t *testing.T, total int, store string, restart bool, extra []string) (*ledgerLoad, map[string][]string) {
	t.Helper()
	mosq := brokertest.StartMosquitto(t)
	l := newLedger(t)
	var replicas []*exec.Cmd
	expiries := make(chan string, 3)
	replica := func(i int) *exec.Cmd {
		args := append([]string{"--broker", mosq.String(), "--client-id", fmt.Sprintf("replica-%d", i), "--share", "g"}, extra...)
		if store != "" {
			args = append(args, "--store", store)
		}
		_, cmd, _ := clitest.LaunchServe(t, l.plugins, func(line string) {
			if strings.Contains(line, "msg=serving") && strings.Contains(line, "session_expiry=") {
				select { // the first serving line; never block serve's log
				case expiries <- clitest.Attr(line, "session_expiry"):
				default:
				}
			}
		}, args...)
		return cmd
	}
	for i := 1; i <= 3; i++ {
		replicas = append(replicas, replica(i))
	}
	want := "5s" // with --share
	if len(extra) == 2 && extra[0] == "--session-expiry" {
		want = (mustDuration(t, extra[1])).String()
	}
	for range replicas {
		if got := <-expiries; got != want {
			t.Errorf("a replica serves with session expiry %s, want %s", got, want)
		}
	}
	load := startLedgerLoad(t, mosq, "cli-host", total, 32, 2*time.Second)
	load.waitAnswered(t, int64(total/3))
	if err := replicas[0].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if restart {
		load.waitAnswered(t, int64(total/2))
		l.setRun(t, "run-2")
		replica(1)
	}
	load.waitAnswered(t, int64(total))
	load.wg.Wait()
	if store != "" {
		reusedAcrossReplicas(t, mosq, l)
	}
	return load, l.runs(t)
}

// reusedAcrossReplicas sends the idempotent lookup (a reply reusable for
// an hour) nine times, one after another, to the share group: the broker
// hands them to every replica, and with the shared store one run answers
// them all: the replicas that did not run it find its reply in Redis.
func reusedAcrossReplicas(t *testing.T, broker *url.URL, l *ledger) {
	t.Helper()
	inv, err := rpc.NewInvoker(context.Background(), rpc.InvokerConfig{Session: session.Config{Broker: broker, ClientID: "eo-lookup"}})
	if err != nil {
		t.Fatal(err)
	}
	defer inv.Close()
	for i := range 9 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard
		res, err := inv.Invoke(ctx, rpc.Call{Topic: "rpc/cli-host/lookup", Payload: []byte("shared"),
			ContentType: "text/plain", Timeout: time.Minute, Correlation: rpc.NewCorrelation()})
		cancel()
		if err != nil || res.Status != 200 || string(res.Payload) != "shared" {
			t.Fatalf("lookup %d: %+v, %v", i, res, err)
		}
	}
	if by := l.runs(t)["lookup:shared"]; len(by) != 1 {
		t.Errorf("nine equivalent lookups to three replicas ran %d times (by %v), want once: the others reuse its reply from Redis", len(by), by)
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// What a replica killed with kill -9 does to its share group, for several
// session expiries (serve --session-expiry), with the shared dedup store.
// A measurement, printed: `make replicas`.
func TestReplicaKilledMeasure(t *testing.T) {
	if os.Getenv("CMDHOST_MEASURE") == "" {
		t.Skip("a measurement: make replicas")
	}
	const total = 6000
	for _, expiry := range []string{"0s", "5s", "30s", "2m"} {
		t.Run(expiry, func(t *testing.T) {
			start := time.Now()
			load, runs := killOneReplica(t, total, testkit.StartRedis(t).URL, false, []string{"--session-expiry", expiry})
			t.Logf("session expiry %s: %d requests in %v; %d first sends unanswered (lost to an invoker that never re-sends), %d re-sends",
				expiry, total, time.Since(start).Round(10*time.Millisecond), load.firstLost.Load(), load.resent.Load())
			checkOnce(t, runs, total, load)
		})
	}
}

// kill -9 and start again, twice, under load, with the shared dedup store
// (serve --store, a real redis-server): nothing runs twice. What the
// killed host had answered but not acked is redelivered to the restarted
// one and answered from the store; what it was running is answered
// "outcome unknown" and never runs again.
func TestKilledHostWithStoreRunsNothingTwice(t *testing.T) {
	const total, inFlight = 3000, 32
	redis := testkit.StartRedis(t)
	broker := brokertest.StartMosquitto(t)
	l := newLedger(t)
	serve := func() *exec.Cmd {
		_, cmd, _ := clitest.LaunchServe(t, l.plugins, nil, "--broker", broker.String(), "--client-id", "eo-host", "--store", redis.URL)
		return cmd
	}
	host := serve()
	load := startLedgerLoad(t, broker, "cli-host", total, inFlight, 2*time.Second)
	for i, at := range []int64{total / 3, 2 * total / 3} {
		load.waitAnswered(t, at)
		l.setRun(t, fmt.Sprintf("run-%d", i+2))
		if err := host.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		host = serve()
	}
	load.waitAnswered(t, total)
	load.wg.Wait()
	t.Logf("%d answered (%d outcome unknown), %d re-sends", load.answered.Load(), len(load.unknown), load.resent.Load())
	checkOnce(t, l.runs(t), total, load)
}

// Redis killed mid-load and started again (persistent, appendfsync
// always): while it is down, requests to the non-idempotent command are
// answered 503 and not run; re-sent, they run once; nothing runs twice.
func TestRedisRestartedRunsNothingTwice(t *testing.T) {
	const total, inFlight = 3000, 32
	redis := testkit.StartPersistentRedis(t)
	broker := brokertest.StartMosquitto(t)
	l := newLedger(t)
	clitest.StartServeIn(t, l.plugins, nil, "--broker", broker.String(), "--client-id", "eo-host", "--store", redis.URL)
	load := startLedgerLoad(t, broker, "cli-host", total, inFlight, 2*time.Second)
	load.waitAnswered(t, total/3)
	redis.Kill()
	for deadline := time.Now().Add(time.Minute); load.sendAgain.Load() == 0; { // hang guard
		if time.Now().After(deadline) {
			t.Fatal("no request was refused while Redis was down")
		}
		time.Sleep(10 * time.Millisecond)
	}
	redis.Restart(t)
	load.waitAnswered(t, total)
	load.wg.Wait()
	t.Logf("%d answered (%d outcome unknown), %d refused while Redis was down and sent again, %d re-sends",
		load.answered.Load(), len(load.unknown), load.sendAgain.Load(), load.resent.Load())
	checkOnce(t, l.runs(t), total, load)
}
