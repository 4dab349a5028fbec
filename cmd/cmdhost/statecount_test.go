package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// TestStateCountedThroughKills is the state store's exactly-once claim,
// counted: a non-idempotent command that adds 1 to a durable counter and
// replies with it, driven from 16 invokers (each re-sending a request,
// same correlation data, until it has its reply) while the host is killed
// with SIGKILL twice and started again on the same state folder, with no
// Redis. Among them, calls that add and then fail or time out. At the end
// the counter equals the requests answered 200, each got one value, no
// two the same, and no failed call's write applied.
//
// On the embedded broker (which dies with the host), and on mosquitto,
// where the command also publishes its value through the outbox to a
// subscriber that stays: there every request answered 200 has its message,
// each message one id however often it came, and no failed call's message
// ever came.
func TestStateCountedThroughKills(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	t.Run("embedded", func(t *testing.T) { countThroughKills(t, nil) })
	t.Run("mosquitto, outbox", func(t *testing.T) { countThroughKills(t, brokertest.StartMosquitto(t)) })
}

// countThroughKills is TestStateCountedThroughKills on mosquitto at
// broker, or the embedded broker when nil.
func countThroughKills(t *testing.T, broker *url.URL) {
	const total, inFlight = 1500, 16
	dir, stateDir := t.TempDir(), t.TempDir()
	bin, err := os.ReadFile("../../testdata/plugins-alt/tally.wasm")
	if err != nil {
		t.Fatalf("%v (run `make plugins`)", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tally.wasm"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--id", "tally-host", "--state-dir", stateDir}
	var msgs *messageLog
	u := broker
	if broker != nil {
		args = append(args, "--broker", broker.String())
		if err := os.WriteFile(filepath.Join(dir, "tally.json"), []byte(`{"publish": {"topics": ["tally/#"]}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		msgs = receiveMessages(t, broker, "tally/#")
	} else {
		addr := freeAddr(t)
		args = append(args, "--listen", addr)
		u, _ = url.Parse("mqtt://" + addr)
	}
	serve := func() func() {
		_, cmd, _ := launchServe(t, dir, nil, args...)
		return func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	}
	kill := serve()
	load := startTally(t, u, total, inFlight)
	for _, at := range []int64{total / 3, 2 * total / 3} {
		load.waitAnswered(t, at)
		kill()
		kill = serve()
	}
	load.waitAnswered(t, total)
	load.wg.Wait()
	close(load.errs)
	for err := range load.errs {
		t.Error(err)
	}

	counter := tallyRead(t, u)
	values := map[string]string{}
	load.values.Range(func(k, v any) bool {
		if other, dup := values[v.(string)]; dup {
			t.Errorf("%s and %s both got %s: a write applied twice", k, other, v)
		}
		values[v.(string)] = k.(string)
		return true
	})
	if counter != len(values) {
		t.Errorf("the counter is %d after %d requests answered 200", counter, len(values))
	}
	for i := 1; i <= counter; i++ {
		if _, ok := values[strconv.Itoa(i)]; !ok {
			t.Errorf("no request answered %d: the counter counts a write no reply gave", i)
		}
	}
	t.Logf("%d requests answered 200, counter %d; %d failing and %d timing-out calls wrote nothing; %d re-sends, %d not applied (sent again)",
		len(values), counter, load.failed.Load(), load.timedOut.Load(), load.resent.Load(), load.notApplied.Load())
	if msgs != nil {
		msgs.check(t, values)
	}
}

// tallyLoad is the load of TestStateCountedThroughKills.
type tallyLoad struct {
	answered, resent, notApplied, failed, timedOut atomic.Int64
	values                                         sync.Map // payload → the value its reply gave
	errs                                           chan error
	wg                                             sync.WaitGroup
}

func startTally(t *testing.T, u *url.URL, total, inFlight int) *tallyLoad {
	t.Helper()
	l := &tallyLoad{errs: make(chan error, 100)}
	var next atomic.Int64
	for w := range inFlight {
		inv, err := rpc.NewInvoker(context.Background(), rpc.InvokerConfig{Session: session.Config{Broker: u, ClientID: fmt.Sprintf("tally-inv-%d", w)}})
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
				command := "tally"
				switch {
				case i%10 == 0:
					command = "tally-fail"
				case i%25 == 1:
					command = "tally-slow"
				}
				if err := l.send(inv, command, fmt.Sprintf("req-%06d", i)); err != nil {
					l.errs <- err
					return
				}
			}
		}()
	}
	return l
}

// send sends one request until it has its answer: the same correlation
// data again after a lost reply, new correlation data after a 503 that
// says nothing was applied.
func (l *tallyLoad) send(inv *rpc.Invoker, command, payload string) error {
	call := rpc.Call{Topic: "rpc/tally-host/" + command, Payload: []byte(payload), ContentType: "text/plain",
		Timeout: time.Minute, Correlation: rpc.NewCorrelation()}
	for attempt := 0; attempt < 1000; attempt++ { // hang guard
		if attempt > 0 {
			l.resent.Add(1)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		res, err := inv.Invoke(ctx, call)
		cancel()
		switch {
		case err != nil: // no reply in time, or the broker (the host) is down: the same request again
			time.Sleep(20 * time.Millisecond) // the invoker's back-off while the host restarts, not a synchronisation
			continue
		case res.Status == 503 && strings.Contains(res.Message, "not applied"), res.Status == 503 && strings.Contains(res.Message, "send"):
			l.notApplied.Add(1)
			call.Correlation = rpc.NewCorrelation()
			continue
		case command == "tally-fail" && res.Status == 500:
			l.failed.Add(1)
		case command == "tally-slow" && res.Status == 408:
			l.timedOut.Add(1)
		case command == "tally" && res.Status == 200:
			if prev, loaded := l.values.LoadOrStore(payload, string(res.Payload)); loaded && prev != string(res.Payload) {
				return fmt.Errorf("%s answered %s, then %s", payload, prev, res.Payload)
			}
		default:
			return fmt.Errorf("%s %s: status %d %q", command, payload, res.Status, res.Message)
		}
		l.answered.Add(1)
		return nil
	}
	return fmt.Errorf("%s %s: no answer after 1000 sends", command, payload)
}

func (l *tallyLoad) waitAnswered(t *testing.T, n int64) {
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

// tallyRead reads the counter.
func tallyRead(t *testing.T, u *url.URL) int {
	t.Helper()
	inv, err := rpc.NewInvoker(context.Background(), rpc.InvokerConfig{Session: session.Config{Broker: u, ClientID: "tally-reader"}})
	if err != nil {
		t.Fatal(err)
	}
	defer inv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := inv.Invoke(ctx, rpc.Call{Topic: "rpc/tally-host/tally-read", ContentType: "text/plain", Timeout: 10 * time.Second})
	if err != nil || res.Status != 200 {
		t.Fatalf("tally-read: %+v %v", res, err)
	}
	n, err := strconv.Atoi(string(res.Payload))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// messageLog is what a subscriber received: by topic, the ids of the
// messages and how many copies came.
type messageLog struct {
	mu     sync.Mutex
	ids    map[string]map[string]int // topic → id → copies
	values map[string]string         // topic → payload
	total  int
}

// receiveMessages subscribes to filter on broker for the rest of the
// test.
func receiveMessages(t *testing.T, broker *url.URL, filter string) *messageLog {
	t.Helper()
	l := &messageLog{ids: map[string]map[string]int{}, values: map[string]string{}}
	c := testkit.Dial(t, broker, "tally-subscriber")
	c.Subscribe(t, filter)
	go func() {
		for p := range c.Messages() {
			id := ""
			for _, up := range p.Properties.User {
				if up.Key == "cmdhost-message-id" {
					id = up.Value
				}
			}
			l.mu.Lock()
			if l.ids[p.Topic] == nil {
				l.ids[p.Topic] = map[string]int{}
			}
			l.ids[p.Topic][id]++
			l.values[p.Topic] = string(p.Payload)
			l.total++
			l.mu.Unlock()
		}
	}()
	return l
}

// check waits until every request answered 200 (values: value →
// payload) has its message, and checks each came with one id, with its
// value, and that no failed call's message came.
func (l *messageLog) check(t *testing.T, values map[string]string) {
	t.Helper()
	testkit.WaitFor(t, "every answered request's message", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, payload := range values {
			if len(l.ids["tally/"+payload]) == 0 {
				return false
			}
		}
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	copies := 0
	for topic, ids := range l.ids {
		if strings.HasPrefix(topic, "tally/failed/") {
			t.Errorf("a failed call's message came: %s", topic)
		}
		if len(ids) != 1 {
			t.Errorf("%s came with %d ids: %v", topic, len(ids), ids)
		}
		for _, n := range ids {
			copies += n
		}
	}
	for v, payload := range values {
		if got := l.values["tally/"+payload]; got != v {
			t.Errorf("tally/%s carries %q, its reply %q", payload, got, v)
		}
	}
	if len(l.ids) != len(values) {
		t.Errorf("%d topics got messages, %d requests were answered 200", len(l.ids), len(values))
	}
	t.Logf("%d messages, one per request answered, in %d copies", len(l.ids), copies)
}
