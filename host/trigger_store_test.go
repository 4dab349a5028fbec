package host_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
	"github.com/cmdhost/cmdhost/plugins"
)

// A trigger keeps its state where the host's commands do, and what it
// publishes goes through their outbox, sent once its message's outcome is
// committed: in the state folder (the default), and with a store in Redis,
// where a second host on that Redis reads the trigger's writes. On-reading
// (testdata/trigger) publishes each message's id on readings/{device}
// before it writes; twelve messages with ids, one sent twice, one whose
// first attempt fails after publishing: each id's reading comes once, in
// one copy, and the failed attempt's never (a message sent as the handler
// runs would come twice, under two ids); the counter is twelve.
func TestTriggerStateAndOutbox(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	t.Run("state folder", func(t *testing.T) {
		triggerStateAndOutbox(t, host.Config{Embedded: host.EmbeddedConfig{Listen: "127.0.0.1:0"}, Store: host.StoreConfig{StateDir: t.TempDir()}})
	})
	t.Run("redis", func(t *testing.T) {
		triggerStateAndOutbox(t, host.Config{Broker: host.BrokerConfig{URL: brokertest.StartMosquitto(t)}, Store: host.StoreConfig{URL: testkit.StartRedis(t).URL}})
	})
}

func triggerStateAndOutbox(t *testing.T, cfg host.Config) {
	const total = 12
	dir := t.TempDir()
	testkit.InstallFile(t, "../testdata/plugins-alt/trigger.wasm", dir, "trigger.wasm")
	testkit.Install(t, dir, "trigger.json", []byte(`{"triggers": {"on-reading": {"concurrency": 2}}, "publish": {"topics": ["readings/#"]}}`))
	cfg.PluginsDir, cfg.ExecutorID, cfg.CacheDir = dir, "reading-host", testkit.CacheDir()
	srv := hosttest.Serve(t, cfg)
	readings := countMessages(t, srv.Broker(), "readings/#")
	sensor := testkit.Dial(t, srv.Broker(), "reading-sensor")
	for i := range total {
		id, payload := fmt.Sprintf("m-%02d", i), fmt.Sprintf("m-%02d", i)
		if i == 5 {
			payload = "fail-once"
		}
		for range 1 + btoi(i == 3) { // m-03 twice
			sensor.Publish(t, &paho.Publish{QoS: 1, Topic: fmt.Sprintf("sensors/d%d/temp", i%4), Payload: []byte(payload),
				Properties: &paho.PublishProperties{User: paho.UserProperties{{Key: "__protVer", Value: "1.0"}, {Key: abi.MessageIDProperty, Value: id}}}})
		}
	}
	inv := loggedIn(t, srv, "reading-cli", "", nil)
	testkit.WaitFor(t, "every message done", func() bool {
		c := triggerCounters(t, inv, "reading-host", "on-reading")
		return c.Handled+c.Duplicates+c.Dropped == total+1
	})
	if c := triggerCounters(t, inv, "reading-host", "on-reading"); c.Handled != total || c.Duplicates != 1 || c.Failures != 1 || c.Dropped != 0 {
		t.Errorf("on-reading: %+v, want %d handled, 1 duplicate, 1 failure, none dropped", c, total)
	}
	testkit.WaitFor(t, "every reading", func() bool { return readings.payloads() == total })
	for i := range total {
		id := fmt.Sprintf("m-%02d", i)
		if ids := readings.idsOf(id); len(ids) != 1 || ids[0].copies != 1 {
			t.Errorf("the reading of %s came as %+v, want one copy of one id", id, ids)
		}
	}
	if n := stateValue(t, inv, "reading-host", "n"); n != fmt.Sprint(total) {
		t.Errorf("the counter is %q, want %d", n, total)
	}
	if cfg.Store.URL != "" {
		// Another host on the Redis (its own executor id; the trigger
		// not confirmed there) reads what the trigger wrote.
		other := t.TempDir()
		testkit.InstallFile(t, "../testdata/plugins-alt/trigger.wasm", other, "trigger.wasm")
		hosttest.Serve(t, host.Config{PluginsDir: other, ExecutorID: "reading-other", CacheDir: testkit.CacheDir(), Broker: host.BrokerConfig{URL: cfg.Broker.URL}, Store: host.StoreConfig{URL: cfg.Store.URL}})
		if n := stateValue(t, inv, "reading-other", "n"); n != fmt.Sprint(total) {
			t.Errorf("the counter read on another host on the Redis is %q, want %d", n, total)
		}
	}
}

// triggerCounters are a trigger's counters, as the admin list op shows
// them.
func triggerCounters(t *testing.T, inv *rpc.Invoker, executor, trigger string) plugins.TriggerStatus {
	t.Helper()
	r, err := inv.Invoke(ctxT(t), rpc.Call{Topic: admin.Topic(executor, admin.OpList), ContentType: "application/json", Timeout: 10 * time.Second})
	var views []admin.PluginView
	if err != nil || r.Status != 200 || json.Unmarshal(r.Payload, &views) != nil {
		t.Fatalf("admin list: %+v %v", r, err)
	}
	for _, v := range views {
		for _, tv := range v.Triggers {
			if tv.Name == trigger {
				return tv
			}
		}
	}
	t.Fatalf("%s serves no trigger %s", executor, trigger)
	return plugins.TriggerStatus{}
}

// stateValue is the value of the trigger plugin's key, read by its
// trigger-get on executor.
func stateValue(t *testing.T, inv *rpc.Invoker, executor, key string) string {
	t.Helper()
	r, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/" + executor + "/trigger-get", Payload: []byte(key), ContentType: "text/plain",
		Timeout: 10 * time.Second})
	if err != nil || r.Status != 200 {
		t.Fatalf("trigger-get %s on %s: %+v %v", key, executor, r, err)
	}
	return string(r.Payload)
}

// messageCounter counts the messages received on a filter: by payload,
// the copies of each message id (cmdhost-message-id) that carried it.
type messageCounter struct {
	mu sync.Mutex
	by map[string]map[string]int
}

// idCopies is a message id and how many copies of it came.
type idCopies struct {
	id     string
	copies int
}

// countMessages subscribes to filter on broker for the rest of the test.
func countMessages(t *testing.T, broker *url.URL, filter string) *messageCounter {
	t.Helper()
	m := &messageCounter{by: map[string]map[string]int{}}
	c := testkit.Dial(t, broker, "counter-"+filter[:len(filter)-2])
	c.Subscribe(t, filter)
	go func() {
		for p := range c.Messages() {
			id := ""
			for _, up := range p.Properties.User {
				if up.Key == abi.MessageIDProperty {
					id = up.Value
				}
			}
			m.mu.Lock()
			if m.by[string(p.Payload)] == nil {
				m.by[string(p.Payload)] = map[string]int{}
			}
			m.by[string(p.Payload)][id]++
			m.mu.Unlock()
		}
	}()
	return m
}

// payloads is how many distinct payloads came.
func (m *messageCounter) payloads() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.by)
}

// idsOf are the ids that carried payload, each with its copies.
func (m *messageCounter) idsOf(payload string) []idCopies {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []idCopies
	for id, n := range m.by[payload] {
		out = append(out, idCopies{id, n})
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
