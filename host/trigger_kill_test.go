package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// TestTriggerOutboxThroughKills is the triggers' exactly-once claim,
// counted, with the messages they publish, on mosquitto (which keeps the
// trigger session's messages while the host is down), in a state folder
// (the default) and with the state, the messages' outcomes and the outbox
// in Redis (Config.Store.URL): messages with ids, one in seven sent twice,
// one in 25 failing its first attempt, go to on-reading
// (testdata/trigger), which counts them in the state store and publishes
// each id on readings/{device}, while the host, a process of its own, is
// killed with SIGKILL twice and started again. At the end the counter
// equals the distinct ids published, each id counted once, and each id's
// reading came under one message id (in one copy, or more when a host
// died between the broker's acknowledgement and taking it out of the
// outbox).
func TestTriggerOutboxThroughKills(t *testing.T) {
	if serveIfKillable(t) {
		return
	}
	testkit.Needs(t, testkit.Plugins)
	t.Run("state folder", func(t *testing.T) { triggerOutboxThroughKills(t, killableHost{StateDir: t.TempDir()}) })
	t.Run("redis", func(t *testing.T) { triggerOutboxThroughKills(t, killableHost{Store: testkit.StartRedis(t).URL}) })
}

// triggerOutboxThroughKills is TestTriggerOutboxThroughKills with cfg's
// state store.
func triggerOutboxThroughKills(t *testing.T, cfg killableHost) {
	const total, executor = 300, "kill-reading"
	broker := brokertest.StartMosquitto(t)
	dir := t.TempDir()
	testkit.InstallFile(t, "../testdata/plugins-alt/trigger.wasm", dir, "trigger.wasm")
	testkit.Install(t, dir, "trigger.json", []byte(`{"triggers": {"on-reading": {"concurrency": 4}}, "publish": {"topics": ["readings/#"]}}`))
	readings := countMessages(t, broker, "readings/#")
	cfg.Plugins, cfg.Broker, cfg.ExecutorID, cfg.ClientID = dir, broker.String(), executor, executor
	serve := func() func() {
		h := startKillable(t, "TestTriggerOutboxThroughKills", cfg)
		return func() { kill(t, h) }
	}
	inv, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: session.Config{Broker: broker, ClientID: "kill-reading-cli"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inv.Close() })
	// count is the trigger's counter, or -1 while no host answers.
	count := func() int {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := inv.Invoke(ctx, rpc.Call{Topic: "rpc/" + executor + "/trigger-get", Payload: []byte("n"), ContentType: "text/plain",
			Timeout: 5 * time.Second})
		if err != nil || r.Status != 200 {
			return -1
		}
		n, err := strconv.Atoi(string(r.Payload))
		if err != nil {
			return -1
		}
		return n
	}

	stop := serve()
	sensor := testkit.Dial(t, broker, "kill-reading-sensor")
	sent := make(chan int, total)
	go func() {
		for i := range total {
			id := fmt.Sprintf("m-%04d", i)
			for range 1 + btoi(i%7 == 0) { // every 7th id twice
				sensor.Publish(t, reading(i, id))
			}
			sent <- i
			if i%50 == 49 {
				time.Sleep(20 * time.Millisecond) // paced: the kills land mid-stream
			}
		}
		close(sent)
	}()
	for _, at := range []int{total / 3, 2 * total / 3} {
		for i := range sent {
			if i >= at {
				break
			}
		}
		testkit.WaitFor(t, "messages handled", func() bool { return count() > 0 })
		t.Logf("killed with %d of %d messages sent, %d counted", at, total, count())
		stop()
		stop = serve()
		t.Logf("started again: %d counted", count())
	}
	for range sent {
	}
	// The last message done means every one before it is: one more, and
	// wait until it is counted.
	sensor.Publish(t, reading(total, "last"))
	testkit.WaitFor(t, "the last message handled", func() bool { return stateValue(t, inv, executor, "id/last") == "1" })
	for deadline := time.Now().Add(testkit.Patience()); count() < total+1 && time.Now().Before(deadline); { // a hang guard
		time.Sleep(10 * time.Millisecond)
	}
	r, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/" + executor + "/trigger-ids", Payload: []byte("list"), ContentType: "text/plain",
		Timeout: 10 * time.Second})
	var ids struct {
		IDs   int               `json:"ids"`
		Twice map[string]string `json:"twice"`
		List  []string          `json:"list"`
	}
	if err != nil || r.Status != 200 || json.Unmarshal(r.Payload, &ids) != nil {
		t.Fatalf("trigger-ids: %+v %v", r, err)
	}
	if n := count(); n != total+1 || ids.IDs != total+1 || len(ids.Twice) > 0 {
		counted := map[string]bool{}
		for _, id := range ids.List {
			counted[id] = true
		}
		var missing []string
		for i := range total {
			if id := fmt.Sprintf("m-%04d", i); !counted[id] {
				missing = append(missing, id)
			}
		}
		t.Fatalf("the counter is %d and %d ids were counted, after %d distinct ids published; counted more than once: %v; not counted: %v; the last host's on-reading: %+v",
			n, ids.IDs, total+1, ids.Twice, missing, triggerCounters(t, inv, executor, "on-reading").TriggerCounters)
	}

	testkit.WaitFor(t, "every reading", func() bool { return readings.payloads() == total+1 })
	copies := 0
	for i := range total + 1 {
		id := fmt.Sprintf("m-%04d", i)
		if i == total {
			id = "last"
		}
		got := readings.idsOf(id)
		if len(got) != 1 {
			t.Errorf("the reading of %s came under %d message ids: %+v", id, len(got), got)
		}
		for _, c := range got {
			copies += c.copies
		}
	}
	t.Logf("%d distinct ids published (%d sent twice) through two kills: counter %d; %d readings in %d copies", total+1, (total+6)/7,
		count(), total+1, copies)
}

// reading is the i-th message of TestTriggerOutboxThroughKills:
// one in 25 fails its first attempt, after it published.
func reading(i int, id string) *paho.Publish {
	payload := id
	if i%25 == 24 {
		payload = "fail-once"
	}
	return &paho.Publish{QoS: 1, Topic: fmt.Sprintf("sensors/d%d/temp", i%10), Payload: []byte(payload),
		Properties: &paho.PublishProperties{User: paho.UserProperties{{Key: "__protVer", Value: "1.0"}, {Key: abi.MessageIDProperty, Value: id}}}}
}
