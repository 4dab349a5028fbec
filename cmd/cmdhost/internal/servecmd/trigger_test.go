package servecmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clientcmd"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/testkit"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// triggerWasm is the triggers' test plugin (testdata/trigger).
const triggerWasm = "../../../../testdata/plugins-alt/trigger.wasm"

// triggerDir makes a plugins folder with the trigger plugin and its
// operator file op.
func triggerDir(t *testing.T, op string) string {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	dir := t.TempDir()
	bin, err := os.ReadFile(triggerWasm)
	if err != nil {
		t.Fatalf("%v (run `make plugins`)", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "trigger.wasm"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "trigger.json"), []byte(op), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// onLog returns a serve log watcher that closes the channel of each key
// the first time a line holds all of its parts.
func onLog(want map[string][]string) (func(string), map[string]chan struct{}) {
	chans := map[string]chan struct{}{}
	for k := range want {
		chans[k] = make(chan struct{})
	}
	var mu sync.Mutex
	closed := map[string]bool{}
	return func(line string) {
		mu.Lock()
		defer mu.Unlock()
		for k, parts := range want {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(line, p)
			}
			if all && !closed[k] {
				close(chans[k])
				closed[k] = true
			}
		}
	}, chans
}

// await waits for ch, failing the test after limit.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(testkit.Patience()):
		t.Fatalf("waited %v for %s", testkit.Patience(), what)
	}
}

// triggerGet asks the trigger plugin for the value under key, until cond
// holds of it.
func triggerGet(t *testing.T, creds []string, key string, cond func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(testkit.Patience())
	for {
		out, errOut, code := clitest.Run(t, append([]string{"invoke", "trigger-get", "-d", key}, creds...)...)
		if code == 0 && cond(out) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("trigger-get %s: last %q %q %d", key, out, errOut, code)
		}
	}
}

// triggerSeen is what on-reading records of the last message it handled
// (testdata/trigger's seen).
type triggerSeen struct {
	Topic       string            `json:"topic"`
	Tokens      map[string]string `json:"tokens"`
	Payload     string            `json:"payload"`
	ContentType string            `json:"contentType"`
	Invoker     string            `json:"invoker"`
	Metadata    map[string]string `json:"metadata"`
	CallerUser  string            `json:"callerUser"`
	CallerID    string            `json:"callerClientId"`
	Attempt     int               `json:"attempt"`
}

// triggerLast asks the trigger plugin for what on-reading recorded last,
// until cond holds of it, and returns it read and as JSON.
func triggerLast(t *testing.T, creds []string, cond func(string) bool) (triggerSeen, string) {
	t.Helper()
	last := triggerGet(t, creds, "last", cond)
	var got triggerSeen
	if err := json.Unmarshal([]byte(last), &got); err != nil {
		t.Fatalf("last: %v: %s", err, last)
	}
	return got, last
}

// triggerStatus returns the triggers of plugin trigger as plugin list
// shows them, by name.
func triggerStatus(t *testing.T, creds []string) map[string]pluginmgr.TriggerStatus {
	t.Helper()
	out, errOut, code := clitest.Run(t, append([]string{"plugin", "list", "--json"}, creds...)...)
	if code != 0 {
		t.Fatalf("plugin list: %q %d", errOut, code)
	}
	var views []admin.PluginView
	if err := json.Unmarshal([]byte(out), &views); err != nil {
		t.Fatalf("plugin list --json: %v: %s", err, out)
	}
	got := map[string]pluginmgr.TriggerStatus{}
	for _, v := range views {
		if v.Name == "trigger" {
			for _, tr := range v.Triggers {
				got[tr.Name] = tr
			}
		}
	}
	return got
}

// A trigger on a real host with its embedded broker: a message sent with
// cmdhost publish reaches its handler with the topic's tokens, the
// telemetry headers read (its __srcId the invoker, its CloudEvent
// attributes and user properties the metadata, no __ property) and the
// sender the broker verified (user and client id); a trigger its
// operator file does not confirm is not subscribed, and plugin list and
// the log say why; a filter in the host's space is refused; a trigger
// that keeps failing is retried, then its messages are dropped and
// counted, while requests are answered all along and its other messages
// still handled.
func TestTriggerHost(t *testing.T) {
	dir := triggerDir(t, `{"triggers": {"on-reading": {}, "on-fail": {"concurrency": 1}}}`)
	// A second plugin whose operator file moves on-reading into the
	// host's topics: it does not load.
	bin, _ := os.ReadFile(filepath.Join(dir, "trigger.wasm"))
	if err := os.WriteFile(filepath.Join(dir, "zreserved.wasm"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "zreserved.json"), []byte(`{"triggers": {"on-reading": {"topic": "rpc/+/temp"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	users, acl := filepath.Join(t.TempDir(), "users"), filepath.Join(t.TempDir(), "acl")
	clitest.AddUser(t, users, "sensor", clitest.EmbeddedPassword)
	clitest.AddUser(t, users, "root", clitest.EmbeddedPassword)
	if err := os.WriteFile(acl, []byte("user sensor\npublish sensors/#\npublish fail/#\npublish unconfirmed/#\n\nuser root\ncall rpc/cli-host/#\nadmin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	onLine, seen := onLog(map[string][]string{
		"subscribed":  {"trigger subscribed", "trigger=on-reading"},
		"unconfirmed": {"trigger not subscribed", "trigger=on-unconfirmed", `\"triggers\": {\"on-unconfirmed\": {}}`},
	})
	addr, _ := clitest.StartServeIn(t, dir, onLine, "--users", users, "--acl", acl)
	pw := clitest.SecretFile(t, clitest.EmbeddedPassword)
	as := func(user string, args ...string) []string {
		args = append(args, "--broker", "mqtt://"+addr, "--username", user, "--password-file", pw)
		if args[0] != "publish" {
			args = append(args, "--executor", "cli-host")
		}
		return args
	}
	root := as("root", "invoke")[1:]
	await(t, seen["subscribed"], "on-reading subscribed")

	out, errOut, code := clitest.Run(t, as("sensor", "publish", "sensors/d1/temp", "-d", "21.5", "--content-type", "text/plain", "--meta", "site=north",
		"--event-type", "reading", "--client-id", "sensor-1", "--json")...)
	var sent clientcmd.Published
	if code != 0 || json.Unmarshal([]byte(out), &sent) != nil || sent.SourceID != "sensor-1" || sent.EventID == "" {
		t.Fatalf("publish: %q %q %d", out, errOut, code)
	}
	got, last := triggerLast(t, root, func(s string) bool { return s != "" })
	md := got.Metadata
	if got.Topic != "sensors/d1/temp" || got.Tokens["device"] != "d1" || got.Payload != "21.5" || got.ContentType != "text/plain" ||
		got.Invoker != "sensor-1" || got.Attempt != 1 || md["site"] != "north" || md["specversion"] != "1.0" || md["type"] != "reading" ||
		md["id"] != sent.EventID || md["source"] != "/cmdhost/publish/sensor-1" {
		t.Errorf("the handler got %s", last)
	}
	for k := range md {
		if strings.HasPrefix(k, "__") {
			t.Errorf("the handler got the protocol's property %s", k)
		}
	}
	if got.CallerUser != "sensor" || got.CallerID != "sensor-1" {
		t.Errorf("the verified sender: user %q client %q, want sensor and sensor-1", got.CallerUser, got.CallerID)
	}
	// The ACL: a topic sensor may not publish to.
	if _, errOut, code := clitest.Run(t, as("sensor", "publish", "other/x", "-d", "x")...); code != hostconn.ExitRefused || !strings.Contains(errOut, "0x87") {
		t.Errorf("publish on a topic not granted: %q %d, want exit %d and 0x87", errOut, code, hostconn.ExitRefused)
	}

	// Not confirmed: not subscribed, and plugin list and the log say why.
	await(t, seen["unconfirmed"], "the log line of on-unconfirmed")
	st := triggerStatus(t, root)
	if u := st["on-unconfirmed"]; u.State != pluginmgr.TriggerUnconfirmed || !strings.Contains(u.Why, `add "triggers": {"on-unconfirmed": {}}`) {
		t.Errorf("on-unconfirmed: %+v", u)
	}
	if r := st["on-reading"]; r.State != pluginmgr.TriggerSubscribed || r.Topic != "sensors/{device}/temp" || r.Handled != 1 {
		t.Errorf("on-reading: %+v", r)
	}
	out, _, _ = clitest.Run(t, append([]string{"plugin", "list"}, root...)...)
	if !strings.Contains(out, "TRIGGER") || !strings.Contains(out, "on-unconfirmed") || !strings.Contains(out, "not confirmed: trigger.json names it in no") {
		t.Errorf("plugin list does not show the triggers:\n%s", out)
	}
	// A filter in the host's topics: refused.
	out, _, _ = clitest.Run(t, append([]string{"plugin", "list", "--json"}, root...)...)
	if !strings.Contains(out, `zreserved.json: \"triggers.on-reading.topic\": topic filter \"rpc/+/temp\": topics under rpc/ are the host's`) {
		t.Errorf("the plugin moving a trigger into the host's topics loaded, or its error does not say why:\n%s", out)
	}

	// A trigger that keeps failing: each message runs three times (100 ms,
	// then 200 ms apart), then is dropped; requests are answered all the
	// while. (One client at a time: the broker checks one password at
	// once on two cores and refuses a login beyond, busy.)
	const failing = 8
	for i := range failing {
		payload := "bad"
		if i == 0 {
			payload = "trap"
		}
		if _, errOut, code := clitest.Run(t, as("sensor", "publish", "fail/"+strconv.Itoa(i), "-d", payload)...); code != 0 {
			t.Fatalf("publish fail/%d: %q %d", i, errOut, code)
		}
	}
	var slowest time.Duration
	answered := 0
	for triggerStatus(t, root)["on-fail"].Dropped < failing {
		start := time.Now()
		out, errOut, code := clitest.Run(t, append([]string{"invoke", "trigger-get", "-d", "n"}, root...)...)
		if code != 0 || out != "1" {
			t.Fatalf("a request while the trigger fails: %q %q %d", out, errOut, code)
		}
		slowest = max(slowest, time.Since(start))
		answered++
	}
	if f := triggerStatus(t, root)["on-fail"]; f.Dropped != failing || f.Failures != 3*failing || f.Messages != failing || f.Handled != 0 || f.InFlight != 0 {
		t.Errorf("on-fail: %+v", f)
	}
	if answered == 0 {
		t.Error("no request was made while the trigger failed")
	}
	t.Logf("%d requests answered while the trigger failed, the slowest in %v", answered, slowest.Round(time.Millisecond))
	// The trigger session goes on.
	if _, errOut, code := clitest.Run(t, as("sensor", "publish", "sensors/d2/temp", "-d", "after")...); code != 0 {
		t.Fatalf("publish: %q %d", errOut, code)
	}
	triggerGet(t, root, "n", func(s string) bool { return s == "2" })
	// A first attempt that fails runs again and is handled.
	if _, errOut, code := clitest.Run(t, as("sensor", "publish", "sensors/d3/temp", "-d", "fail-once")...); code != 0 {
		t.Fatalf("publish: %q %d", errOut, code)
	}
	last = triggerGet(t, root, "last", func(s string) bool { return strings.Contains(s, "fail-once") })
	if !strings.Contains(last, `"attempt":2`) {
		t.Errorf("fail-once handled at %s, want attempt 2", last)
	}
}

// watch shows the triggers: their messages, failures and drops, and each
// drop as it happens (with serve --events).
func TestWatchTriggers(t *testing.T) {
	dir := triggerDir(t, `{"triggers": {"on-reading": {}, "on-fail": {"attempts": 2}}}`)
	onLine, seen := onLog(map[string][]string{"subscribed": {"trigger subscribed", "trigger=on-fail"}})
	addr, _ := clitest.StartServeIn(t, dir, onLine, "--events")
	await(t, seen["subscribed"], "on-fail subscribed")
	broker := "mqtt://" + addr
	o := clitest.StartLines(t, "watch", "--json", "--interval", "200ms", "--broker", broker, "--executor", "cli-host")
	anyLine := func(string) bool { return true }
	o.Until(t, "a first frame", anyLine) // watch runs
	var drop *clientcmd.Happening
	var last clientcmd.WatchFrame
	for i := 0; drop == nil; i++ {
		if i%10 == 0 { // a failing message every 2 s until watch shows a drop
			if _, errOut, code := clitest.Run(t, "publish", "fail/x", "-d", "bad", "--broker", broker); code != 0 {
				t.Fatalf("publish: %q %d", errOut, code)
			}
		}
		var f clientcmd.WatchFrame
		if line := o.Until(t, "a frame", anyLine); json.Unmarshal([]byte(line), &f) != nil {
			t.Fatalf("not a frame: %s", line)
		}
		last = f
		for _, h := range f.Happenings {
			if h.Kind == "trigger_drop" {
				drop = &h
			}
		}
	}
	if drop.Command != "on-fail" || drop.Plugin != "trigger" || !strings.Contains(drop.Detail, "dropped after 2 attempts: 500 on-fail: always fails") {
		t.Errorf("the drop as watch shows it: %+v", drop)
	}
	var fail *clientcmd.WatchTrigger
	for i := range last.Triggers {
		if last.Triggers[i].Name == "on-fail" {
			fail = &last.Triggers[i]
		}
	}
	if fail == nil || fail.Dropped < 1 || fail.Failures < 2 || fail.Messages < 1 || fail.State != "subscribed" || fail.Plugin != "trigger" {
		t.Errorf("watch's triggers: %+v", last.Triggers)
	}
}

// TestTriggerOnceThroughKills is the triggers' exactly-once claim,
// counted, on mosquitto (which keeps the trigger session's messages while
// the host is down): messages with ids (cmdhost-message-id), some sent
// twice, go to a trigger that counts them in the state store while the
// host is killed with SIGKILL twice and started again on the same state
// folder. At the end the trigger's counter equals the distinct ids
// published, and it counted each id once: no message handled twice, none
// lost.
func TestTriggerOnceThroughKills(t *testing.T) {
	const total = 600
	dir := triggerDir(t, `{"triggers": {"on-reading": {"concurrency": 4}}}`)
	broker, stateDir := brokertest.StartMosquitto(t), t.TempDir()
	args := []string{"--broker", broker.String(), "--state-dir", stateDir}
	serve := func() func() {
		onLine, seen := onLog(map[string][]string{"subscribed": {"trigger subscribed", "trigger=on-reading"}})
		_, cmd, _ := clitest.LaunchServe(t, dir, onLine, args...)
		await(t, seen["subscribed"], "on-reading subscribed")
		return func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	}
	creds := []string{"--broker", broker.String(), "--executor", "cli-host"}
	count := func() int {
		out, _, code := clitest.Run(t, append([]string{"invoke", "trigger-get", "-d", "n"}, creds...)...)
		n, err := strconv.Atoi(out)
		if code != 0 || err != nil {
			return -1
		}
		return n
	}
	kill := serve()
	pub := testkit.Dial(t, broker, "kill-test-sensor")
	sent := make(chan int, total)
	go func() {
		for i := range total {
			id := fmt.Sprintf("m-%04d", i)
			for range 1 + btoi(i%7 == 0) { // every 7th id twice
				pub.Publish(t, triggerMessage(i, id))
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
		kill()
		kill = serve()
	}
	for range sent {
	}
	// The last message done means every one before it is: one more, and
	// wait until it is counted.
	pub.Publish(t, triggerMessage(total, "last"))
	triggerGet(t, creds, "id/last", func(s string) bool { return s == "1" })
	testkit.WaitFor(t, "every message handled", func() bool { return count() >= total+1 })
	out, errOut, code := clitest.Run(t, append([]string{"invoke", "trigger-ids"}, creds...)...)
	var ids struct {
		IDs   int               `json:"ids"`
		Twice map[string]string `json:"twice"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &ids) != nil {
		t.Fatalf("trigger-ids: %q %q %d", out, errOut, code)
	}
	n := count()
	if n != total+1 || ids.IDs != total+1 || len(ids.Twice) > 0 {
		t.Errorf("the counter is %d and %d ids were counted, after %d distinct ids published; counted more than once: %v", n, ids.IDs, total+1, ids.Twice)
	}
	t.Logf("%d distinct ids published (%d sent twice) through two kills: counter %d, %d ids counted", total+1, (total+6)/7, n, ids.IDs)
	kill()
}

// triggerMessage is the i-th message of TestTriggerOnceThroughKills.
func triggerMessage(i int, id string) *paho.Publish {
	return &paho.Publish{QoS: 1, Topic: fmt.Sprintf("sensors/d%d/temp", i%10), Payload: []byte(id),
		Properties: &paho.PublishProperties{User: paho.UserProperties{{Key: "__protVer", Value: "1.0"}, {Key: "cmdhost-message-id", Value: id}}}}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
