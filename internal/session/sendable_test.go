package session

import (
	"bytes"
	"strings"
	"testing"

	"github.com/eclipse/paho.golang/paho"
)

// packetSize agrees with paho's encoding, whatever properties are set and
// whatever the size of the remaining length.
func TestPacketSize(t *testing.T) {
	one, exp, alias, sub := byte(1), uint32(10), uint16(3), 300
	for name, p := range map[string]*paho.Publish{
		"bare":          {Topic: "t"},
		"qos 1":         {QoS: 1, Topic: "a/b", Payload: []byte("x")},
		"no properties": {QoS: 1, Topic: "a/b", Properties: nil},
		"all properties": {QoS: 1, Topic: "resp/x", Payload: []byte("payload"), Properties: &paho.PublishProperties{
			PayloadFormat: &one, MessageExpiry: &exp, ContentType: "application/json", ResponseTopic: "r/t",
			CorrelationData: make([]byte, 16), TopicAlias: &alias, SubscriptionIdentifier: &sub,
			User: paho.UserProperties{{Key: "__stat", Value: "200"}, {Key: "k", Value: strings.Repeat("€", 100)}},
		}},
		"2-byte length": {QoS: 1, Topic: "t", Payload: make([]byte, 200)},
		"3-byte length": {QoS: 1, Topic: "t", Payload: make([]byte, 20_000)},
		"4-byte length": {QoS: 1, Topic: "t", Payload: make([]byte, 3_000_000)},
	} {
		var b bytes.Buffer
		if _, err := p.Packet().WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		if got := packetSize(p); got != b.Len() {
			t.Errorf("%s: packetSize %d, paho encodes %d bytes", name, got, b.Len())
		}
	}
}

func TestSendable(t *testing.T) {
	one := byte(1)
	ok := &paho.Publish{QoS: 1, Topic: "r/t", Payload: []byte("é"), Properties: &paho.PublishProperties{
		PayloadFormat: &one, ContentType: "text/plain", User: paho.UserProperties{{Key: "k", Value: "€"}}}}
	if err := sendable(ok, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		p     *paho.Publish
		limit uint32
		want  string
	}{
		{"topic", &paho.Publish{Topic: "r/\x00"}, 0, `topic "r/\x00": character U+0000`},
		{"response topic", &paho.Publish{Topic: "t", Properties: &paho.PublishProperties{ResponseTopic: "a\nb"}}, 0, "response topic"},
		{"content type", &paho.Publish{Topic: "t", Properties: &paho.PublishProperties{ContentType: "\xff"}}, 0, "content type"},
		{"key", &paho.Publish{Topic: "t", Properties: &paho.PublishProperties{User: paho.UserProperties{{Key: "\ufffe", Value: "v"}}}}, 0, "user property key"},
		{"value", &paho.Publish{Topic: "t", Properties: &paho.PublishProperties{User: paho.UserProperties{{Key: "k", Value: strings.Repeat("v", 65536)}}}}, 0, "65536 bytes, more than MQTT's 65535"},
		{"correlation", &paho.Publish{Topic: "t", Properties: &paho.PublishProperties{CorrelationData: make([]byte, 65536)}}, 0, "correlation data of 65536 bytes"},
		{"payload format", &paho.Publish{Topic: "t", Payload: []byte{0xff}, Properties: &paho.PublishProperties{PayloadFormat: &one}}, 0, "payload is marked UTF-8"},
		{"broker limit", &paho.Publish{QoS: 1, Topic: "t", Payload: make([]byte, 100)}, 100, "packet too large: 108 bytes, more than the broker's maximum packet size of 100"},
		{"MQTT limit", &paho.Publish{Topic: "t", Payload: make([]byte, maxRemainingLength)}, 0, "packet too large"},
	} {
		err := sendable(c.p, c.limit)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// BenchmarkSendable is the cost of the last check before a publish, for a
// typical reply: the protocol's user properties, a little metadata, a
// 64-byte payload.
func BenchmarkSendable(b *testing.B) {
	exp, one := uint32(10), byte(1)
	p := &paho.Publish{QoS: 1, Topic: "clients/invoker-1/rpc/echo", Payload: bytes.Repeat([]byte("x"), 64),
		Properties: &paho.PublishProperties{
			CorrelationData: make([]byte, 16), ContentType: "text/plain", MessageExpiry: &exp, PayloadFormat: &one,
			User: paho.UserProperties{
				{Key: "__stat", Value: "200"}, {Key: "__stMsg", Value: ""}, {Key: "__protVer", Value: "1.0"},
				{Key: "__srcId", Value: "host-1"}, {Key: "__ts", Value: "000001763900000000:00001:host-1"},
				{Key: "tenant", Value: "north"},
			},
		}}
	b.ReportAllocs()
	for b.Loop() {
		if err := sendable(p, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}
