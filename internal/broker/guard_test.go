package broker

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"runtime"
	"slices"
	"testing"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// startWith starts a broker with cfg on a free port, its log in a buffer.
func startWith(t *testing.T, cfg Config) (*Embedded, *testkit.LogBuffer) {
	t.Helper()
	logs := new(testkit.LogBuffer)
	cfg.Addr = "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	e, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return e, logs
}

func inProcessDialer(e *Embedded) func(context.Context, autopaho.ClientConfig, *url.URL) (net.Conn, error) {
	return func(ctx context.Context, _ autopaho.ClientConfig, _ *url.URL) (net.Conn, error) {
		return e.DialInProcess(ctx)
	}
}

// wantClosedByBroker reads c until the broker closes it: an error that is
// not a timeout (the hang guard of c.read).
func wantClosedByBroker(t *testing.T, c *rawClient, what string) {
	t.Helper()
	for {
		_, err := c.read(t)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%s: the broker did not close the connection: %v", what, err)
		}
		return
	}
}

// The host's client ids are the host's: a TCP client connecting with the
// id of an in-process client (the host's executor), or with one reserved
// before any in-process client used it, is refused with CONNACK 0x85,
// logged with its address; the host's client keeps its session and its
// subscription. Before, the TCP client took the session over.
func TestHostClientIDsReserved(t *testing.T) {
	ctx := testCtx(t)
	e, logs := startWith(t, Config{})
	host := connectWith(t, ctx, e.URL(), inProcessDialer(e), "host-exec", "cmd/#")
	e.Reserve("host-later")

	for _, id := range []string{"host-exec", "host-later"} {
		c := dialRaw(t, e.Addr())
		if ack := c.connect(t, id); ack.ReasonCode != packets.ErrClientIdentifierNotValid.Code {
			t.Fatalf("TCP client with the host's id %s: CONNACK 0x%02x, want 0x85", id, ack.ReasonCode)
		}
		wantClosedByBroker(t, c, id)
		if !logs.Contains("client="+id) || !logs.Contains("remote="+c.conn.LocalAddr().String()) {
			t.Errorf("the refusal of %s is not logged with its id and address:\n%s", id, logs)
		}
	}
	if got := e.Stats().ClientsRefused; got != 2 {
		t.Errorf("ClientsRefused %d, want 2", got)
	}

	inv := connect(t, ctx, e.URL(), "invoker")
	if _, err := inv.cm.Publish(ctx, &paho.Publish{QoS: 1, Topic: "cmd/echo", Payload: []byte("still mine")}); err != nil {
		t.Fatal(err)
	}
	if p := host.next(t, ctx); string(p.Payload) != "still mine" {
		t.Fatalf("the host's client got %q", p.Payload)
	}
	// An id nobody reserved is anyone's.
	rawConnected(t, e.Addr(), "someone")
}

// A request's sender cannot forge the client id the broker stamps: a
// ClientIDProperty it sets is replaced by its own id on a request and
// removed from anything else.
func TestClientIDStampCannotBeForged(t *testing.T) {
	ctx := testCtx(t)
	e := startBroker(t)
	sub := connect(t, ctx, e.URL(), "sub", "cmd/#")
	attacker := connect(t, ctx, e.URL(), "attacker")
	forged := paho.UserProperties{{Key: ClientIDProperty, Value: "victim"}, {Key: "k", Value: "v"}, {Key: ClientIDProperty, Value: "victim"}}
	for _, p := range []*paho.Publish{
		{QoS: 1, Topic: "cmd/req", Properties: &paho.PublishProperties{ResponseTopic: "resp/attacker", User: forged}},
		{QoS: 0, Topic: "cmd/req", Properties: &paho.PublishProperties{ResponseTopic: "resp/attacker", User: forged}},
		{QoS: 1, Topic: "cmd/other", Properties: &paho.PublishProperties{User: forged}},
	} {
		if _, err := attacker.cm.Publish(ctx, p); err != nil {
			t.Fatal(err)
		}
		got := sub.next(t, ctx).Properties.User
		want := paho.UserProperties{{Key: "k", Value: "v"}}
		if p.Properties.ResponseTopic != "" {
			want = stamped(want, "attacker")
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s (QoS %d) arrived with %v, want %v", p.Topic, p.QoS, got, want)
		}
	}
}

// The maximum packet size is announced in CONNACK (with Retain Available
// 0) and enforced before a packet's body is read: a PUBLISH announcing
// 200 MB ends its connection without the broker allocating it (counted in
// TotalAlloc, which counts every allocation whether or not it was freed).
// A packet of the maximum passes; the host's in-process clients are not
// bounded by it (their replies may be larger than a request may be).
func TestMaxPacketSize(t *testing.T) {
	const max = 1 << 20
	ctx := testCtx(t)
	e, logs := startWith(t, Config{MaxPacketBytes: max})
	c := dialRaw(t, e.Addr())
	ack := c.connect(t, "big")
	if ack.ReasonCode != 0 || ack.Properties.MaximumPacketSize != max || !ack.Properties.RetainAvailableFlag || ack.Properties.RetainAvailable != 0 {
		t.Fatalf("CONNACK %+v: want Maximum Packet Size %d and Retain Available 0", ack.Properties, max)
	}

	sub := connect(t, ctx, e.URL(), "sub", "big/#")
	pub := connect(t, ctx, e.URL(), "pub")
	// A PUBLISH of exactly max bytes: fixed header 1 + 3, topic 2 + 5,
	// properties 1, payload the rest.
	payload := bytes.Repeat([]byte("x"), max-4-7-1)
	if _, err := pub.cm.Publish(ctx, &paho.Publish{QoS: 0, Topic: "big/1", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	if p := sub.next(t, ctx); len(p.Payload) != len(payload) {
		t.Fatalf("a packet of the maximum: got %d bytes", len(p.Payload))
	}

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	// A QoS 0 PUBLISH whose remaining length says 200 MB, then a few bytes
	// of it: the broker must not wait for (nor allocate) the rest.
	header := []byte{0x30}
	header = append(header, encodeLength(200<<20)...)
	if _, err := c.conn.Write(append(header, []byte("\x00\x05big/2")...)); err != nil {
		t.Fatal(err)
	}
	wantClosedByBroker(t, c, "a 200 MB PUBLISH")
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("the broker allocated %d MiB for a packet it refused", grew>>20)
	}
	if got := e.Stats().PacketsTooLarge; got != 1 {
		t.Errorf("PacketsTooLarge %d, want 1", got)
	}
	if !logs.Contains("packet too large") || !logs.Contains("max=1048576") {
		t.Errorf("the refusal is not logged with the bound:\n%s", logs)
	}

	host := connectWith(t, ctx, e.URL(), inProcessDialer(e), "host-exec")
	big := bytes.Repeat([]byte("y"), 2*max)
	if _, err := host.cm.Publish(ctx, &paho.Publish{QoS: 1, Topic: "big/reply", Payload: big}); err != nil {
		t.Fatalf("an in-process client's packet over the TCP maximum: %v", err)
	}
	if p := sub.next(t, ctx); len(p.Payload) != len(big) {
		t.Fatalf("the in-process client's large packet: got %d bytes", len(p.Payload))
	}
}

// encodeLength is MQTT's variable byte integer.
func encodeLength(n int) []byte {
	var out []byte
	for {
		b := byte(n % 128)
		n /= 128
		if n > 0 {
			b |= 0x80
		}
		out = append(out, b)
		if n == 0 {
			return out
		}
	}
}

// Beyond MaxClients a CONNECT is refused with CONNACK 0x89 (server busy);
// the host's in-process clients still connect, and a place freed is
// taken again.
func TestMaxClients(t *testing.T) {
	ctx := testCtx(t)
	e, logs := startWith(t, Config{MaxClients: 3})
	var clients []*rawClient
	for _, id := range []string{"a", "b", "c"} {
		clients = append(clients, rawConnected(t, e.Addr(), id))
	}
	over := dialRaw(t, e.Addr())
	if ack := over.connect(t, "d"); ack.ReasonCode != packets.ErrServerBusy.Code {
		t.Fatalf("a fourth client: CONNACK 0x%02x, want 0x89", ack.ReasonCode)
	}
	wantClosedByBroker(t, over, "the fourth client")
	if !logs.Contains("too many clients") {
		t.Errorf("the refusal is not logged:\n%s", logs)
	}
	connectWith(t, ctx, e.URL(), inProcessDialer(e), "host-exec")

	_ = clients[0].conn.Close()
	// The broker counts the connection gone once it has seen it close:
	// retry until it has (a hang guard bounds it).
	for {
		c := dialRaw(t, e.Addr())
		ack := c.connect(t, "e")
		if ack.ReasonCode == 0 {
			break
		}
		if ack.ReasonCode != packets.ErrServerBusy.Code {
			t.Fatalf("CONNACK 0x%02x", ack.ReasonCode)
		}
		if ctx.Err() != nil {
			t.Fatal("the place of a client that left is never freed")
		}
	}
	if got := e.Stats().ClientsRefused; got < 1 {
		t.Errorf("ClientsRefused %d", got)
	}
}
