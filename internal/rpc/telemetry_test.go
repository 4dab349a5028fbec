package rpc

import (
	"strings"
	"testing"
)

// Telemetry goes out with the protocol's properties; a message the broker
// would refuse is an error and never published.
func TestPublishTelemetry(t *testing.T) {
	h := start(t, Config{}, Command{Name: "echo", Handler: echoHandler})
	if err := h.exec.PublishTelemetry(ctx(t), "cmdhost/exec-1/events", []byte(`{"kind":"timeout"}`), "application/json"); err != nil {
		t.Fatal(err)
	}
	pubs, err := h.broker.WaitPublished(ctx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := user(pubs[0], "__srcId"); v != "exec-1" || pubs[0].Properties.ContentType != "application/json" {
		t.Fatalf("%+v", pubs[0].Properties)
	}
	for _, c := range []struct{ topic, contentType, want string }{
		{"cmdhost/exec-1/events", "application/json\n", "content type"},
		{"cmdhost/\x01/events", "application/json", "topic"},
		{"cmdhost/+/events", "application/json", "not a topic name"},
	} {
		err := h.exec.PublishTelemetry(ctx(t), c.topic, []byte("{}"), c.contentType)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: %v, want an error naming the %s", c.topic, c.contentType, err, c.want)
		}
	}
	if n := len(h.broker.Published()); n != 1 {
		t.Fatalf("%d messages published, want only the first", n)
	}
}

// PublishTelemetryAt stamps the message with the __ts it is given (a
// service's own time of what it tells of), not the executor's clock.
func TestPublishTelemetryAt(t *testing.T) {
	h := start(t, Config{}, Command{Name: "echo", Handler: echoHandler})
	const at = "001800000000000:00003:cmdhost"
	if err := h.exec.PublishTelemetryAt(ctx(t), "clients/x/notify", []byte("+OK\r\n"), "application/octet-stream", at); err != nil {
		t.Fatal(err)
	}
	pubs, err := h.broker.WaitPublished(ctx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := user(pubs[0], "__ts"); v != at || pubs[0].QoS != 1 {
		t.Fatalf("__ts %q, QoS %d; want %q, 1", v, pubs[0].QoS, at)
	}
}
