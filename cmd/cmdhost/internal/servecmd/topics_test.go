package servecmd

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// topicsPlugin is the test plugin that declares the commands and topics
// its operator file's config names (testdata/topics).
const topicsPlugin = "../../../../testdata/plugins-alt/topics.wasm"

// addTopicsPlugin installs, as plugin name in dir, a copy of the topics
// plugin declaring commands ("NAME=PATTERN ...").
func addTopicsPlugin(t *testing.T, dir, name, commands string) {
	t.Helper()
	op := fmt.Sprintf(`{"config": {"commands": %q}}`, commands)
	if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(op), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.InstallFile(t, topicsPlugin, dir, name+".wasm")
}

// pluginView is what `plugin list --json` says of a plugin.
type pluginView struct {
	Name, State, LastError string
}

// listPlugins asks the host for its plugins through the admin op list.
func listPlugins(t *testing.T, host []string) map[string]pluginView {
	t.Helper()
	out, errOut, code := clitest.Run(t, append([]string{"plugin", "list", "--json"}, host...)...)
	var views []pluginView
	if code != 0 {
		t.Fatalf("plugin list: %q %d", errOut, code)
	}
	if err := json.Unmarshal([]byte(out), &views); err != nil {
		t.Fatalf("plugin list --json: %v: %q (the admin op must be answered by the host)", err, out)
	}
	m := map[string]pluginView{}
	for _, v := range views {
		m[v.Name] = v
	}
	return m
}

// untilRefused waits until the host lists plugin name as failed.
func untilRefused(t *testing.T, host []string, name string, limit time.Duration) pluginView {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		v, ok := listPlugins(t, host)[name]
		if ok && v.State == "failed" {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin %s not refused within %v: %+v", name, limit, v)
		}
	}
}

// A plugin may serve only topics the host gives it, on mosquitto and the
// embedded broker: a host whose folder holds a plugin clashing with echo's
// topic and one claiming every four-level topic (the admin ops') starts,
// refuses both and
// serves the rest; the admin ops still reach the host; echo answers each
// request once; plugins claiming another executor's topic, the admin
// topics or every three-level topic, added while it runs, are refused
// too; after each, echo answers within a second, and a plugin added after
// them serves.
func TestServeHostileTopics(t *testing.T) {
	for _, b := range []struct {
		name  string
		start func(testing.TB) *url.URL
	}{{"mosquitto", brokertest.StartMosquitto}, {"embedded", brokertest.StartEmbedded}} {
		t.Run(b.name, func(t *testing.T) { hostileTopics(t, b.start(t)) })
	}
}

func hostileTopics(t *testing.T, u *url.URL) {
	dir := t.TempDir()
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "echo.wasm"), dir, "echo.wasm")
	// twin sorts after echo: at startup, the plugin whose file name sorts
	// first keeps a contested topic.
	addTopicsPlugin(t, dir, "twin", "twin=rpc/{executorId}/echo")
	addTopicsPlugin(t, dir, "anything", "steal={a}/{b}/{c}/{d}")
	_, stop := clitest.StartServeIn(t, dir, nil, "--broker", u.String(), "--admin-token", "s3cret")
	broker := u.String()
	host := []string{"--broker", broker, "--executor", "cli-host", "--timeout", "5s"}

	list := listPlugins(t, host)
	for name, want := range map[string]string{
		"twin":     `plugin twin: command twin's topic "rpc/{executorId}/echo" overlaps command echo's "rpc/{executorId}/{commandName}" (= rpc/{executorId}/echo), served by plugin echo; twin not loaded`,
		"anything": `plugin anything: command steal: topic pattern "{a}/{b}/{c}/{d}" starts with the token {a}`,
	} {
		if v := list[name]; v.State != "failed" || !strings.Contains(v.LastError, want) {
			t.Errorf("%s at startup: %+v, want failed saying %q", name, v, want)
		}
	}
	if v := list["echo"]; v.State != "serving" {
		t.Errorf("echo at startup: %+v", v)
	}
	out, errOut, code := clitest.Run(t, append([]string{"plugin", "reload", "echo", "--token", "s3cret"}, host...)...)
	if code != 0 || !strings.Contains(out, "echo: reload done") {
		t.Fatalf("the admin op reload must reach the host: %q %q %d", out, errOut, code)
	}
	echoOnce(t, broker)

	for _, h := range []struct{ name, commands, want string }{
		{"impostor", "echo2=rpc/other-host/echo", `command echo2: topic pattern "rpc/other-host/echo" does not have {executorId} as its second level`},
		{"admin", "admin=cmdhost/{executorId}/admin/{op}", `command admin: topic pattern "cmdhost/{executorId}/admin/{op}" starts with "cmdhost"`},
		{"shadow", "shadow={a}/{b}/{c}", `command shadow: topic pattern "{a}/{b}/{c}" starts with the token {a}`},
	} {
		addTopicsPlugin(t, dir, h.name, h.commands)
		if v := untilRefused(t, host, h.name, 10*time.Second); !strings.Contains(v.LastError, h.want) {
			t.Errorf("%s: %q, want %q", h.name, v.LastError, h.want)
		}
		start := time.Now()
		out, errOut, code := clitest.Run(t, "invoke", "echo", "-d", "hi", "--timeout", "1s", "--broker", broker, "--executor", "cli-host")
		if out != "hi" || code != 0 {
			t.Fatalf("echo after %s: %q %q %d", h.name, out, errOut, code)
		}
		t.Logf("echo answered in %v after %s was refused", time.Since(start).Round(time.Millisecond), h.name)
	}
	echoOnce(t, broker)
	out, errOut, code = clitest.Run(t, append([]string{"plugin", "list"}, host...)...)
	if code != 0 || !strings.Contains(out, "serving") {
		t.Fatalf("plugin list after the hostile plugins: %q %q %d", out, errOut, code)
	}

	addTopicsPlugin(t, dir, "later", "later=")
	clitest.UntilAnswer(t, broker, "later", "later:hi", 10*time.Second)

	if log, err := stop(); err != nil {
		t.Fatalf("serve exited with %v:\n%s", err, log)
	}
}

// echoOnce sends two echo requests, one after the other, with raw MQTT
// and checks that each got exactly one reply: a second subscription
// matching echo's topic would have the broker deliver the first request
// twice, and the host reply twice, before the second request is sent.
func echoOnce(t *testing.T, broker string) {
	t.Helper()
	u, err := url.Parse(broker)
	if err != nil {
		t.Fatal(err)
	}
	respTopic := "clients/" + strings.ReplaceAll(t.Name(), "/", "-") + "/resp"
	c := testkit.Dial(t, u, "once-"+strings.ReplaceAll(t.Name(), "/", "-"))
	defer c.Close()
	c.Subscribe(t, respTopic)
	for i := byte(1); i <= 2; i++ {
		corr := []byte(fmt.Sprintf("echo-once-%06d", int(i)))
		expiry := uint32(10)
		c.Publish(t, &paho.Publish{QoS: 1, Topic: "rpc/cli-host/echo", Payload: []byte{'0' + i},
			Properties: &paho.PublishProperties{CorrelationData: corr, ResponseTopic: respTopic, MessageExpiry: &expiry,
				User: paho.UserProperties{{Key: "__protVer", Value: "1.0"}, {Key: "__srcId", Value: "echo-once"}}}})
		if r := c.Next(t); string(r.Properties.CorrelationData) != string(corr) || string(r.Payload) != string([]byte{'0' + i}) {
			t.Fatalf("request %d: got the reply %q to %q: a reply came twice", i, r.Payload, r.Properties.CorrelationData)
		}
	}
	select {
	case r := <-c.Messages():
		t.Fatalf("a reply more: %q to %q", r.Payload, r.Properties.CorrelationData)
	default:
	}
}
