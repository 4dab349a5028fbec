package broker

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// A user flooding the broker with requests it may not send (each with a
// response topic in another client's prefix, refused by the guard), each
// carrying a payload and an admin token in a user property: the log never
// holds the payload (raw or as mochi's decimal bytes) nor the token, it
// holds a bounded number of lines per second, and formatting it costs the
// host nothing in proportion to the payloads. Before, mochi logged each
// refusal at ERROR with the whole packet: 25 MB of requests made 90 MB of
// log, the token in clear, and +180 MB of host memory while formatting.
func TestRefusedPublishFloodLogsNoPayload(t *testing.T) {
	e, logs := startWith(t, Config{UsersFile: usersFile(t, "mallory", "mallory-pw")})
	c := dialRaw(t, e.Addr())
	if ack := c.connectAs(t, "mallory-1", "mallory", "mallory-pw"); ack.ReasonCode != 0 {
		t.Fatalf("CONNACK 0x%02x", ack.ReasonCode)
	}

	const n = 200
	const secret = "s3cret-admin-token-4f1c2b"
	payload := bytes.Repeat([]byte{0xA7}, 64<<10) // 167 in decimal
	pk := packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1}, ProtocolVersion: 5,
		PacketID: 9, TopicName: "rpc/h/echo", Payload: payload,
		Properties: packets.Properties{ResponseTopic: "clients/alice-1/rpc/response",
			User: []packets.UserProperty{{Key: "cmdhost-admin-token", Val: secret}}},
		Mods: packets.Mods{AllowResponseInfo: true},
	}
	var wire bytes.Buffer
	if err := pk.PublishEncode(&wire); err != nil {
		t.Fatal(err)
	}
	before := logs.String()

	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	start := time.Now()
	wrote := make(chan error, 1)
	go func() {
		for range n {
			if _, err := c.conn.Write(wire.Bytes()); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	for i := range n {
		ack, err := c.read(t)
		if err != nil || ack.FixedHeader.Type != packets.Puback || ack.ReasonCode != notAuthorized {
			t.Fatalf("publish %d of %d: %+v, %v; want PUBACK 0x87", i+1, n, ack.FixedHeader, err)
		}
	}
	elapsed := time.Since(start)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&m1)

	flood := strings.TrimPrefix(logs.String(), before)
	lines := strings.Count(flood, "\n")
	// The guard's refusals, one line a second from the first (mochi's
	// own line for each is left out): at most whole seconds + 1.
	maxLines := int(elapsed/time.Second) + 1
	t.Logf("%d refused publishes of %d KiB in %v: %d log lines, %d bytes of log, %d KiB allocated per publish",
		n, len(payload)>>10, elapsed.Round(time.Millisecond), lines, len(flood), (m1.TotalAlloc-m0.TotalAlloc)/n>>10)
	for _, leak := range []string{secret, "167 167 167", string(payload[:16])} {
		if strings.Contains(flood, leak) {
			t.Errorf("the log holds what the client sent (%.20q):\n%.2000s", leak, flood)
		}
	}
	if lines > maxLines {
		t.Errorf("%d log lines in %v, want at most %d:\n%.2000s", lines, elapsed, maxLines, flood)
	}
	// Reading a publish costs about its size (mochi's read buffer and the
	// packet's payload); formatting one as mochi logged it cost several
	// times that (a decimal number and a space per byte, and the buffers
	// they grew in).
	if per := (m1.TotalAlloc - m0.TotalAlloc) / n; per > 3*uint64(len(payload)) {
		t.Errorf("%d KiB allocated per refused publish of %d KiB: the log formats what the client sent", per>>10, len(payload)>>10)
	}
}

// CONNECTs the guard refuses (here: no user name, on a broker with a
// users file) cost the log a bounded number of lines a second: mochi's own
// warning at the end of each refused connection is left out, and its
// other warnings are rate-limited (before, a line per CONNECT: 19,948
// lines in 14 s).
func TestRefusedConnectFloodLogsBoundedLines(t *testing.T) {
	e, logs := startWith(t, Config{UsersFile: usersFile(t, "alice", "alice-pw")})
	const n = 200
	start := time.Now()
	for i := range n {
		c := dialRaw(t, e.Addr())
		if ack := c.connectAs(t, "anon-"+itoa(i), "", ""); ack.ReasonCode != notAuthorized {
			t.Fatalf("CONNECT %d: CONNACK 0x%02x, want 0x87", i, ack.ReasonCode)
		}
		wantClosedByBroker(t, c, "a refused client")
		_ = c.conn.Close()
	}
	// mochi logs at the end of each connection, after the CONNACK: the
	// count below is taken once the connections are closed (a line
	// still to come would only lower it).
	testkit.WaitFor(t, "the refused connections closed", func() bool { return e.guard.open.Load() == 0 })
	elapsed := time.Since(start)
	lines := strings.Count(logs.String(), "\n")
	// Two kinds of line, each at most once a second from the first: the
	// guard's refusals and mochi's warning of a keep-alive below 5 s.
	maxLines := 2 * (int(elapsed/time.Second) + 1)
	t.Logf("%d refused CONNECTs in %v: %d log lines", n, elapsed.Round(time.Millisecond), lines)
	if lines > maxLines {
		t.Errorf("%d log lines in %v, want at most %d:\n%.3000s", lines, elapsed, maxLines, logs.String())
	}
}

// What mochi logs goes through the handler without a payload, a user
// property or a string longer than logMax, whatever holds it: a packet,
// a pointer to one, a will, a byte slice, a group, the attributes of a
// derived logger.
func TestMochiLogScrubs(t *testing.T) {
	const secret = "s3cret-user-property"
	payload := []byte("PAYLOAD-" + strings.Repeat("p", 100))
	user := []packets.UserProperty{{Key: "cmdhost-admin-token", Val: secret}}
	pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1}, PacketID: 7, TopicName: "rpc/h/echo",
		Payload: payload, Properties: packets.Properties{User: user}}
	will := mqtt.Will{TopicName: "w", Payload: payload, User: user}
	long := strings.Repeat("i", 10<<10)

	var out testkit.LogBuffer
	log := slog.New(newMochiLog(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})))
	log.With("client", long, "packet", pk).Debug("derived")
	log.Debug("packet rejected", "packet", pk, "pointer", &pk, "will", will, "bytes", payload, "client", long,
		slog.Group("g", "packet", pk, "user", user), "error", errors.New("malformed packet"))
	got := out.String()
	for _, leak := range []string{secret, "PAYLOAD", "80 65 89", long[:logMax+1]} {
		if strings.Contains(got, leak) {
			t.Errorf("the log holds %.20q:\n%s", leak, got)
		}
	}
	for _, want := range []string{"packet.type=Publish", "packet.payload_bytes=108", "pointer.topic=rpc/h/echo",
		"will.payload_bytes=108", `bytes="([]uint8 not logged)"`, "g.packet.user_properties=1", `error="malformed packet"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the log lacks %s:\n%s", want, got)
		}
	}
}

// mochi's warnings and errors are rate-limited per message: one line a
// second, the next saying how many were left out; debug lines are not.
func TestMochiLogRateLimited(t *testing.T) {
	var out testkit.LogBuffer
	h := newMochiLog(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t0 := time.Unix(1_800_000_000, 0)
	for i, at := range []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, time.Second} {
		for _, level := range []slog.Level{slog.LevelWarn, slog.LevelError, slog.LevelDebug} {
			msg := level.String() + " line"
			if err := h.Handle(context.Background(), slog.NewRecord(t0.Add(at), level, msg, 0)); err != nil {
				t.Fatal(i, err)
			}
		}
	}
	got := out.String()
	for _, c := range []struct {
		line string
		n    int
	}{{`msg="WARN line"`, 2}, {`msg="ERROR line"`, 2}, {`msg="DEBUG line"`, 4}, {"lines_not_logged=2", 2}} {
		if n := strings.Count(got, c.line); n != c.n {
			t.Errorf("%s: %d lines, want %d:\n%s", c.line, n, c.n, got)
		}
	}
}
