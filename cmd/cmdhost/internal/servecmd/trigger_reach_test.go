package servecmd

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// Telemetry from outside cmdhost: the Azure IoT Operations Go SDK's
// telemetry sender and mosquitto_pub.

// aioSender builds testdata/aiosender, a program that sends telemetry with
// the Azure IoT Operations Go SDK (a module of its own: its package doc
// says why), and returns its path. The first build downloads the SDK from the
// Go module proxy.
func aioSender(t *testing.T) string {
	t.Helper()
	testkit.Needs(t, testkit.Binary)
	bin := filepath.Join(t.TempDir(), "aiosender")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = "../../../../testdata/aiosender"
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building testdata/aiosender (it needs the Go module proxy, or its modules in the module cache: "+
			"cd testdata/aiosender && go mod download): %v\n%s", err, out)
	}
	return bin
}

// mosquittoPub runs mosquitto_pub (MQTT 5, QoS 1) with args.
func mosquittoPub(t *testing.T, stdin string, args ...string) {
	t.Helper()
	testkit.Needs(t, testkit.Mosquitto)
	cmd := exec.Command("mosquitto_pub", append([]string{"-V", "mqttv5", "-q", "1"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mosquitto_pub %v: %v\n%s", args, err, out)
	}
}

// hostPort is a broker URL's address, for the clients that take one.
func hostPort(broker string) (host, port string) {
	hp := strings.TrimPrefix(broker, "mqtt://")
	i := strings.LastIndex(hp, ":")
	return hp[:i], hp[i+1:]
}

// Messages sent by the Azure IoT Operations Go SDK's telemetry sender
// reach a trigger's handler on the embedded broker: the topic's tokens,
// the payload and its content type, the sender's __srcId as the invoker,
// its metadata and CloudEvent as the request's metadata (no __ property),
// and the sender the broker verified (user and client id); the
// CloudEvent's id and source make the message's id, so the same events
// sent again are duplicates, acknowledged and not run. Messages
// mosquitto_pub sends reach it too, and the telemetry headers are checked
// as the protocol says: a __protVer of another major version and a __ts
// that is no HLC are dropped, counted, and the first drop logged with its
// reason.
func TestTriggerAIOSender(t *testing.T) {
	sender := aioSender(t)
	// One at a time: the last message handled is the last sent.
	dir := triggerDir(t, `{"triggers": {"on-reading": {"concurrency": 1}}}`)
	users, acl := filepath.Join(t.TempDir(), "users"), filepath.Join(t.TempDir(), "acl")
	clitest.AddUser(t, users, "sensor", clitest.EmbeddedPassword)
	clitest.AddUser(t, users, "root", clitest.EmbeddedPassword)
	if err := os.WriteFile(acl, []byte("user sensor\npublish sensors/#\n\nuser root\ncall rpc/cli-host/#\nadmin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	onLine, seen := onLog(map[string][]string{
		"subscribed": {"trigger subscribed", "trigger=on-reading"},
		"version":    {"trigger_drop", "command=on-reading", `protocol version \"2.0\" is not supported (major version 1 is)`},
	})
	addr, stop := clitest.StartServeIn(t, dir, onLine, "--users", users, "--acl", acl)
	defer func() {
		if t.Failed() {
			log, _ := stop()
			t.Logf("serve's log:\n%s", log)
		}
	}()
	pw := clitest.SecretFile(t, clitest.EmbeddedPassword)
	root := []string{"--broker", "mqtt://" + addr, "--username", "root", "--password-file", pw, "--executor", "cli-host"}
	await(t, seen["subscribed"], "on-reading subscribed")

	send := func() {
		t.Helper()
		out, err := exec.Command(sender, "-broker", addr, "-client-id", "aio-sensor-1", "-username", "sensor", "-password-file", pw,
			"-device", "d7", "-n", "3", "-payload", "aio", "-meta", "site=north", "-event", "ev", "-source", "urn:test:aio").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "sent 3" {
			t.Fatalf("aiosender: %v: %s", err, out)
		}
	}
	send()
	testkit.WaitFor(t, "three messages done", func() bool {
		st := triggerStatus(t, root)["on-reading"]
		return st.Handled+st.Dropped+st.Duplicates >= 3
	})
	if st := triggerStatus(t, root)["on-reading"]; st.Handled != 3 {
		t.Fatalf("on-reading: %+v, want 3 handled", st)
	}
	triggerGet(t, root, "n", func(s string) bool { return s == "3" })
	got, last := triggerLast(t, root, func(s string) bool { return s != "" })
	md := got.Metadata
	if got.Topic != "sensors/d7/temp" || got.Tokens["device"] != "d7" || got.Payload != "aio-2" || got.ContentType != "text/plain" ||
		got.Invoker != "aio-sensor-1" || md["site"] != "north" || md["specversion"] != "1.0" || md["id"] != "ev-2" ||
		md["source"] != "urn:test:aio" || md["type"] != "reading" {
		t.Errorf("the handler got %s", last)
	}
	for k := range md {
		if strings.HasPrefix(k, "__") {
			t.Errorf("the handler got the protocol's property %s", k)
		}
	}
	if got.CallerUser != "sensor" || got.CallerID != "aio-sensor-1" {
		t.Errorf("the verified sender: user %q client %q, want sensor and aio-sensor-1", got.CallerUser, got.CallerID)
	}
	// The same events again: duplicates by their CloudEvent id and source.
	send()
	testkit.WaitFor(t, "three duplicates", func() bool { return triggerStatus(t, root)["on-reading"].Duplicates == 3 })
	if n := triggerGet(t, root, "n", func(string) bool { return true }); n != "3" {
		t.Errorf("n is %s after the same three events were sent twice, want 3", n)
	}

	// mosquitto_pub: a message reaches the handler; a __protVer of major
	// 2 and a __ts that is no HLC are dropped unrun.
	host, port := hostPort("mqtt://" + addr)
	pub := func(topic, msg string, props ...string) {
		t.Helper()
		args := []string{"-h", host, "-p", port, "-u", "sensor", "-P", clitest.EmbeddedPassword, "-i", "mosq-sensor", "-t", topic, "-m", msg}
		for _, p := range props {
			k, v, _ := strings.Cut(p, "=")
			args = append(args, "-D", "publish", "user-property", k, v)
		}
		mosquittoPub(t, "", args...)
	}
	pub("sensors/m1/temp", "from-mosquitto", "__srcId=mosq-sensor", "__protVer=1.0", "site=south")
	got, last = triggerLast(t, root, func(s string) bool { return strings.Contains(s, "from-mosquitto") })
	if got.Topic != "sensors/m1/temp" || got.Invoker != "mosq-sensor" || got.Metadata["site"] != "south" || got.CallerUser != "sensor" ||
		got.CallerID != "mosq-sensor" {
		t.Errorf("the handler got %s", last)
	}
	pub("sensors/m2/temp", "next-major", "__protVer=2.0")
	await(t, seen["version"], "the drop of a message of protocol version 2.0 logged")
	pub("sensors/m3/temp", "bad-clock", "__ts=yesterday")
	testkit.WaitFor(t, "two drops", func() bool { return triggerStatus(t, root)["on-reading"].Dropped == 2 })
	if st := triggerStatus(t, root)["on-reading"]; st.Handled != 4 || st.Duplicates != 3 || st.Messages != 9 {
		t.Errorf("on-reading: %+v, want 4 handled, 3 duplicates, 9 messages", st)
	}
}

// Two replicas in a share group (serve --share) on mosquitto split a
// trigger's messages: each message sent (by mosquitto_pub) is handled by
// exactly one of them. Each replica counts the ids it handled in its own
// state folder; the two lists are disjoint and together hold every id
// sent, and each replica handled some. (The replicas have executor ids
// of their own, so that the test can ask each for its list: a trigger's
// share group does not depend on the executor id.)
func TestTriggerShareGroup(t *testing.T) {
	const total = 300
	dir := triggerDir(t, `{"triggers": {"on-reading": {"concurrency": 4}}}`)
	broker := brokertest.StartMosquitto(t)
	ids := []string{"replica-a", "replica-b"}
	for _, id := range ids {
		onLine, seen := onLog(map[string][]string{"subscribed": {"trigger subscribed", "trigger=on-reading", "topic=$share/readings/sensors/+/temp"}})
		clitest.StartServeIn(t, dir, onLine, "--broker", broker.String(), "--id", id, "--share", "readings")
		await(t, seen["subscribed"], id+"'s trigger subscribed")
	}
	creds := func(id string) []string { return []string{"--broker", broker.String(), "--executor", id} }
	count := func(id string) int {
		n, err := strconv.Atoi(triggerGet(t, creds(id), "n", func(string) bool { return true }))
		if err != nil {
			return 0 // nothing handled yet: "n" is absent
		}
		return n
	}
	// One message per line (-l), the line its payload, which on-reading
	// counts as the id of a message without cmdhost-message-id.
	var lines strings.Builder
	for i := range total {
		fmt.Fprintf(&lines, "s-%04d\n", i)
	}
	host, port := hostPort(broker.String())
	mosquittoPub(t, lines.String(), "-h", host, "-p", port, "-i", "share-sensor", "-t", "sensors/d1/temp", "-l",
		"-D", "publish", "user-property", "__protVer", "1.0", "-D", "publish", "user-property", "__srcId", "share-sensor")
	testkit.WaitFor(t, "every message handled", func() bool { return count(ids[0])+count(ids[1]) >= total })

	handled := map[string][]string{}
	var all []string
	for _, id := range ids {
		out, errOut, code := clitest.Run(t, append([]string{"invoke", "trigger-ids", "-d", "list"}, creds(id)...)...)
		var got struct {
			IDs   int               `json:"ids"`
			Twice map[string]string `json:"twice"`
			List  []string          `json:"list"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
			t.Fatalf("%s trigger-ids: %q %q %d", id, out, errOut, code)
		}
		if len(got.Twice) > 0 {
			t.Errorf("%s handled ids more than once: %v", id, got.Twice)
		}
		if len(got.List) == 0 {
			t.Errorf("%s handled no message: the share group did not split them", id)
		}
		handled[id] = got.List
		all = append(all, got.List...)
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Errorf("%s was handled by both replicas", all[i])
		}
	}
	if len(slices.Compact(slices.Clone(all))) != total || count(ids[0])+count(ids[1]) != total {
		t.Errorf("%d distinct ids handled, counters %d and %d, for %d messages sent", len(slices.Compact(slices.Clone(all))), count(ids[0]), count(ids[1]), total)
	}
	t.Logf("%d messages: %d handled by %s, %d by %s", total, len(handled[ids[0]]), ids[0], len(handled[ids[1]]), ids[1])
}
