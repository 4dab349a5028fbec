package clientcmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// cmdhost publish sends a telemetry message as the Azure IoT Operations
// telemetry sender does: QoS 1, __protVer 1.0, __srcId its client id, an
// __ts of its clock, the user properties, a CloudEvent's attributes; the
// payload marked UTF-8 for text. A subscriber gets exactly that.
func TestPublishHeaders(t *testing.T) {
	u := brokertest.StartMosquitto(t)
	sub := testkit.Dial(t, u, "publish-watcher")
	sub.Subscribe(t, "sensors/#")
	payload := filepath.Join(t.TempDir(), "reading.json")
	if err := os.WriteFile(payload, []byte(`{"c": 21.5}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := clitest.Run(t, "publish", "sensors/d1/temp", "-f", payload, "--content-type", "application/json", "--meta", "site=north",
		"--meta", "floor=2", "--event-type", "reading", "--event-source", "/plant/1", "--event-id", "e-17", "--expiry", "90s",
		"--client-id", "sensor-1", "--json", "--broker", u.String())
	var sent Published
	if code != 0 || json.Unmarshal([]byte(out), &sent) != nil {
		t.Fatalf("publish: %q %q %d", out, errOut, code)
	}
	p := sub.Next(t)
	props := p.Properties
	u2 := props.User
	if p.Topic != "sensors/d1/temp" || string(p.Payload) != `{"c": 21.5}` || p.QoS != 1 || props.ContentType != "application/json" ||
		props.PayloadFormat == nil || *props.PayloadFormat != 1 || props.MessageExpiry == nil || *props.MessageExpiry < 85 {
		t.Errorf("got %+v, properties %+v", p, props)
	}
	want := map[string]string{"__protVer": "1.0", "__srcId": "sensor-1", "site": "north", "floor": "2", "specversion": "1.0",
		"type": "reading", "source": "/plant/1", "id": "e-17", "datacontenttype": "application/json"}
	for k, v := range want {
		if got := u2.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	ts, err := hlc.Parse(u2.Get("__ts"))
	if err != nil || ts.NodeID != "sensor-1" || time.Since(time.UnixMilli(ts.Millis)) > time.Minute {
		t.Errorf("__ts %q: %v", u2.Get("__ts"), err)
	}
	if _, err := time.Parse(time.RFC3339Nano, u2.Get("time")); err != nil {
		t.Errorf("time %q: %v", u2.Get("time"), err)
	}
	if sent.Topic != p.Topic || sent.Bytes != len(p.Payload) || sent.SourceID != "sensor-1" || sent.EventID != "e-17" || sent.Timestamp != u2.Get("__ts") {
		t.Errorf("--json printed %+v", sent)
	}
	// Plain: no CloudEvent, a payload that is bytes, nothing printed.
	if out, errOut, code := clitest.Run(t, "publish", "sensors/d2/temp", "-d", "\xff", "--broker", u.String()); code != 0 || out != "" {
		t.Fatalf("publish: %q %q %d", out, errOut, code)
	}
	p = sub.Next(t)
	if p.Properties.PayloadFormat != nil || p.Properties.User.Get("specversion") != "" || !strings.HasPrefix(p.Properties.User.Get("__srcId"), "cmdhost-publish-") {
		t.Errorf("plain message %+v", p.Properties)
	}
}

// publish's bad command lines get exit 2 and say what to fix; no broker,
// exit 3.
func TestPublishErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"publish"}, base.ExitUsage, "publish needs a topic: cmdhost publish TOPIC"},
		{[]string{"publish", "a/b", "c"}, base.ExitUsage, "publish takes one topic, got 2 arguments"},
		{[]string{"publish", "a/+/b"}, base.ExitUsage, `topic "a/+/b": not a topic name`},
		{[]string{"publish", "a//b"}, base.ExitUsage, "not a topic name"},
		{[]string{"publish", "rpc/h/echo"}, base.ExitUsage, "topics under rpc/ are the hosts' own"},
		{[]string{"publish", "$SYS/x"}, base.ExitUsage, "topics under $SYS/"},
		{[]string{"publish", "a/b", "--meta", "__ts=1"}, base.ExitUsage, "--meta __ts: properties starting with __ are the protocol's"},
		{[]string{"publish", "a/b", "--meta", "nokey"}, base.ExitUsage, "--meta wants key=value"},
		{[]string{"publish", "a/b", "--event-type", "t", "--meta", "id=1"}, base.ExitUsage, "--meta id: a CloudEvent attribute"},
		{[]string{"publish", "a/b", "--event-source", "/s"}, base.ExitUsage, "give its type with --event-type"},
		{[]string{"publish", "a/b", "-d", "x", "-f", "y"}, base.ExitUsage, "not both"},
		{[]string{"publish", "a/b", "--timeout", "0s"}, base.ExitUsage, "--timeout must be positive"},
		{[]string{"publish", "a/b", "--client-id", "a:b"}, base.ExitUsage, "--client-id \"a:b\""},
		{[]string{"publish", "a/b", "--broker", "localhost:1883"}, base.ExitUsage, "want a URL such as"},
		{[]string{"publish", "a/b", "--broker", "mqtt://" + clitest.FreeAddr(t)}, base.ExitNoBroker, "connection refused"},
	} {
		out, errOut, code := clitest.Run(t, c.args...)
		if code != c.code || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: stdout %q, stderr %q, exit %d; want exit %d and %q", c.args, out, errOut, code, c.code, c.want)
		}
	}
}
