package packets

// Tests of cmdhost's changes to the decoder and encoder (see
// ../CMDHOST.md): the packets read are those upstream reads, with fewer
// allocations, and hostile bytes give an error, never a panic.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

func everyPublishProperty() *Publish {
	pf, exp, alias := byte(1), uint32(60), uint16(3)
	return &Publish{
		QoS: 1, PacketID: 7, Topic: "cmdhost/echo",
		Properties: &Properties{
			PayloadFormat: &pf, MessageExpiry: &exp, TopicAlias: &alias,
			ContentType: "text/plain", ResponseTopic: "reply/to",
			CorrelationData: []byte{0, 1, 2, 255},
			User:            []User{{"__ts", "1:2:node"}, {"k", ""}, {"", "v"}},
		},
		Payload: []byte("hello"),
	}
}

func encoded(t testing.TB, p interface {
	WriteTo(io.Writer) (int64, error)
}) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := p.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestPublishRoundTrip(t *testing.T) {
	want := everyPublishProperty()
	cp, err := ReadPacket(bytes.NewReader(encoded(t, want)))
	if err != nil {
		t.Fatal(err)
	}
	got := cp.Content.(*Publish)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %+v %+v, want %+v %+v", got, got.Properties, want, want.Properties)
	}
}

// An empty payload and empty correlation data stay present (non-nil), as
// upstream decodes them.
func TestEmptyFieldsStayPresent(t *testing.T) {
	raw := []byte{
		0x32, 9, // PUBLISH QoS 1, remaining length
		0, 1, 't', 0, 1, // topic "t", packet id 1
		3, PropCorrelationData, 0, 0, // properties: empty correlation data
	}
	cp, err := ReadPacket(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	p := cp.Content.(*Publish)
	if p.Properties.CorrelationData == nil || len(p.Properties.CorrelationData) != 0 {
		t.Fatalf("correlation data %#v, want present and empty", p.Properties.CorrelationData)
	}
	if p.Payload == nil || len(p.Payload) != 0 {
		t.Fatalf("payload %#v, want present and empty", p.Payload)
	}
}

// A packet's payload and properties stay as read while the reader's
// buffer is reused for the packets after it.
func TestPacketsOutliveTheReadBuffer(t *testing.T) {
	var stream bytes.Buffer
	for i := 0; i < 100; i++ {
		p := everyPublishProperty()
		p.Payload = bytes.Repeat([]byte{byte(i)}, 100)
		p.Properties.CorrelationData = []byte{byte(i)}
		stream.Write(encoded(t, p))
	}
	r := bufio.NewReaderSize(&stream, 16)
	var got []*Publish
	for {
		cp, err := ReadPacket(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, cp.Content.(*Publish))
	}
	for i, p := range got {
		if !bytes.Equal(p.Payload, bytes.Repeat([]byte{byte(i)}, 100)) || p.Properties.CorrelationData[0] != byte(i) {
			t.Fatalf("packet %d changed after later reads", i)
		}
	}
}

func TestVBIOfMoreThanFourBytesIsRefused(t *testing.T) {
	raw := []byte{0x30, 0xff, 0xff, 0xff, 0xff, 0x01}
	if _, err := ReadPacket(bytes.NewReader(raw)); !errors.Is(err, errMalformedVBI) {
		t.Fatalf("ReadPacket: %v, want %v", err, errMalformedVBI)
	}
}

// Every prefix of a packet is an error, not a panic nor a packet.
func TestTruncatedPacketsAreErrors(t *testing.T) {
	raw := encoded(t, everyPublishProperty())
	for n := 0; n < len(raw); n++ {
		if _, err := ReadPacket(bytes.NewReader(raw[:n])); err == nil {
			t.Fatalf("the first %d of %d bytes decoded", n, len(raw))
		}
	}
	// A property whose length points past the properties' end.
	past := []byte{
		0x30, 9, 0, 1, 't', // PUBLISH QoS 0, topic "t"
		3, PropContentType, 0, 5, // a content type of 5 bytes, none there
		'a', 'b', // the payload
	}
	if _, err := ReadPacket(bytes.NewReader(past)); err == nil {
		t.Fatal("a property longer than the properties decoded")
	}
}

// piecewise is a packet's encoding as upstream writes it: the fixed
// header, then each piece of its body.
func piecewise(c *ControlPacket) []byte {
	pieces := c.Content.Buffers()
	c.remainingLength = 0
	for _, p := range pieces {
		c.remainingLength += len(p)
	}
	var b bytes.Buffer
	_, _ = c.FixedHeader.WriteTo(&b)
	for _, p := range pieces {
		b.Write(p)
	}
	return b.Bytes()
}

// WriteTo writes the bytes upstream writes, in one Write up to
// maxEncoded and as pieces beyond.
func TestWriteToEncodesAsUpstream(t *testing.T) {
	big := everyPublishProperty()
	big.Payload = bytes.Repeat([]byte("x"), maxEncoded)
	ack := NewControlPacket(PUBACK)
	ack.Content.(*Puback).PacketID = 9
	ackProps := NewControlPacket(PUBACK)
	ackProps.Content.(*Puback).ReasonCode = 0x80
	ackProps.Content.(*Puback).Properties.ReasonString = "no"
	sub := NewControlPacket(SUBSCRIBE)
	sub.Content.(*Subscribe).Subscriptions = []SubOptions{{Topic: "a/+", QoS: 1}}
	for name, c := range map[string]*ControlPacket{
		"publish":            everyPublishProperty().ToControlPacket(),
		"large publish":      big.ToControlPacket(),
		"puback":             ack,
		"puback, properties": ackProps,
		"subscribe":          sub,
		"pingreq":            NewControlPacket(PINGREQ),
	} {
		var w countingWriter
		if _, err := c.WriteTo(&w); err != nil {
			t.Fatal(err)
		}
		if want := piecewise(c); !bytes.Equal(w.Bytes(), want) {
			t.Errorf("%s: wrote % x, want % x", name, w.Bytes(), want)
		}
		if name != "large publish" && w.writes != 1 {
			t.Errorf("%s: written in %d calls, want 1", name, w.writes)
		}
	}
}

type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// Pack never writes more than packedSizeBound, the size it allocates.
func TestPackedSizeBound(t *testing.T) {
	b1, b2, u16, u32, vbi := byte(1), byte(1), uint16(1<<16-1), uint32(1<<32-1), 1<<28-1
	all := &Properties{
		PayloadFormat: &b1, MessageExpiry: &u32, ContentType: "ct", ResponseTopic: "rt",
		CorrelationData: []byte("cd"), SubscriptionIdentifier: &vbi, SessionExpiryInterval: &u32,
		AssignedClientID: "id", ServerKeepAlive: &u16, AuthMethod: "am", AuthData: []byte("ad"),
		RequestProblemInfo: &b1, WillDelayInterval: &u32, RequestResponseInfo: &b2,
		ResponseInfo: "ri", ServerReference: "sr", ReasonString: "rs", ReceiveMaximum: &u16,
		TopicAlias: &u16, TopicAliasMaximum: &u16, MaximumQOS: &b1, RetainAvailable: &b1,
		User: []User{{"k", "v"}, {"", ""}}, MaximumPacketSize: &u32,
		WildcardSubAvailable: &b1, SubIDAvailable: &b1, SharedSubAvailable: &b1,
	}
	for p := CONNECT; p <= AUTH; p++ {
		if n := len(all.Pack(p)); n > all.packedSizeBound() {
			t.Errorf("packet type %d: %d bytes packed, bound %d", p, n, all.packedSizeBound())
		}
	}
}

func BenchmarkReadPublish(b *testing.B) {
	raw := encoded(b, everyPublishProperty())
	r := bytes.NewReader(raw)
	br := bufio.NewReader(r)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Reset(raw)
		br.Reset(r)
		if _, err := ReadPacket(br); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzReadPacket(f *testing.F) {
	f.Add(encoded(f, everyPublishProperty()))
	f.Add([]byte{0x40, 2, 0, 1})
	f.Fuzz(func(t *testing.T, raw []byte) {
		cp, err := ReadPacket(bytes.NewReader(raw))
		if err != nil || cp.Type != PUBLISH {
			return
		}
		// What decodes encodes and decodes to the same.
		again, err := ReadPacket(bytes.NewReader(encoded(t, cp)))
		if err != nil {
			t.Fatalf("re-encoded publish: %v", err)
		}
		if !reflect.DeepEqual(again.Content, cp.Content) {
			t.Fatalf("round trip: %+v, want %+v", again.Content, cp.Content)
		}
	})
}
