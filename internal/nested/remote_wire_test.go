package nested_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
)

// A guest's nested call to another executor carries metadata the guest
// chose: metadata mosquitto would refuse fails that branch at once with an
// error naming it, instead of costing the host's invoker its connection;
// the next remote call goes through.
func TestNestedRemoteMetadataChecked(t *testing.T) {
	u := brokertest.StartMosquitto(t)
	a := newNestHost(t, "host-a", "nest")
	b := newNestHost(t, "host-b", "probe")
	serveNestHost(t, u, a)
	serveNestHost(t, u, b)
	call := nestCaller(t, u, "host-a")

	v := call(callSpec{Command: "probe-request", Executor: "host-b", Payload: "hi", ContentType: "text/plain",
		Metadata: map[string]string{"k": "line\nbreak"}, TimeoutMs: 3000})
	if v.Outcome != "error" || !strings.Contains(v.Error+v.Message, `metadata "k": value: character U+000A`) {
		t.Fatalf("%+v", v)
	}
	v = call(callSpec{Command: "probe-request", Executor: "host-b", Payload: "hi", ContentType: "text/plain",
		Metadata: map[string]string{"k": "fine"}, TimeoutMs: 3000})
	var p probeView
	if err := json.Unmarshal([]byte(v.Payload), &p); v.Status != 200 || err != nil || p.Metadata["k"] != "fine" {
		t.Fatalf("the next remote call: %+v %v", v, err)
	}
}
