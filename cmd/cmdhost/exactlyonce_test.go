package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host/broker/brokertest"
	"github.com/cmdhost/cmdhost/host/rpc"
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
	l := &ledger{plugins: t.TempDir(), out: t.TempDir()}
	bin, err := os.ReadFile("../../testdata/plugins-alt/ledger.wasm")
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
// request after resend without its reply until it has one. answered
// counts the requests answered; the returned function waits until all are.
type ledgerLoad struct {
	answered, resent atomic.Int64
	errs             chan error
	wg               sync.WaitGroup
}

func startLedgerLoad(t *testing.T, broker *url.URL, executor string, total, inFlight int, resend time.Duration) *ledgerLoad {
	t.Helper()
	l := &ledgerLoad{errs: make(chan error, inFlight)}
	var next atomic.Int64
	for w := 0; w < inFlight; w++ {
		inv, err := rpc.NewInvoker(context.Background(), rpc.InvokerConfig{Broker: broker, ClientID: fmt.Sprintf("eo-inv-%d", w)})
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
					Timeout: resend, Correlation: rpc.NewCorrelation()}
				for attempt := 0; ; attempt++ {
					if attempt == 1000 { // hang guard: 1000 re-sends
						l.errs <- fmt.Errorf("%s: no reply after %d sends", payload, attempt)
						return
					}
					if attempt > 0 {
						l.resent.Add(1)
					}
					res, err := inv.Invoke(context.Background(), call)
					if errors.Is(err, rpc.ErrNoResponse) {
						continue // the same request again
					}
					if err != nil || res.Status != 200 || string(res.Payload) != payload {
						l.errs <- fmt.Errorf("%s: %+v, %v", payload, res, err)
						return
					}
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
// and for every one of the total that never ran.
func checkOnce(t *testing.T, runs map[string][]string, total int) {
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
		if len(runs[fmt.Sprintf("req-%06d", i)]) == 0 {
			t.Errorf("req-%06d answered, but never ran", i)
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
	serve := func() func() (error, string) {
		_, stop := startServeIn(t, l.plugins, nil, "--broker", broker.String(), "--client-id", "eo-host")
		return stop
	}
	stop := serve()
	load := startLedgerLoad(t, broker, "cli-host", total, inFlight, 2*time.Second)
	for i, at := range []int64{total / 3, 2 * total / 3} {
		load.waitAnswered(t, at)
		l.setRun(t, fmt.Sprintf("run-%d", i+2))
		err, log := stop()
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
	checkOnce(t, l.runs(t), total)
}
