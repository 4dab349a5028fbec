package servecmd

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

// Probes of serve's embedded broker through the binary, written as an
// attacker would try it (issue 24).

// rawConnack sends pk (a v5 CONNECT) to addr and returns the CONNACK's
// reason code, and the connection.
func rawConnack(t *testing.T, addr string, pk packets.Packet) (byte, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	pk.ProtocolVersion = 5
	var buf bytes.Buffer
	if err := pk.ConnectEncode(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second)) // hang guard
	r := bufio.NewReader(c)
	var ack packets.Packet
	b, err := r.ReadByte()
	if err == nil {
		err = ack.FixedHeader.Decode(b)
	}
	if err == nil {
		ack.FixedHeader.Remaining, _, err = packets.DecodeLength(r)
	}
	body := make([]byte, ack.FixedHeader.Remaining)
	if err == nil {
		_, err = io.ReadFull(r, body)
	}
	if err != nil || ack.FixedHeader.Type != packets.Connack {
		t.Fatalf("no CONNACK: %v (type %d)", err, ack.FixedHeader.Type)
	}
	ack.ProtocolVersion = 5
	if err := ack.ConnackDecode(body); err != nil {
		t.Fatal(err)
	}
	return ack.ReasonCode, c
}

// A user who may only call commands leaves a will on the replicas'
// announcement topic (a forged replica for `plugin list --all`), on the
// events topic and in another client's reply prefix: each CONNECT is
// refused, not authorized, and serve logs it with the user; a will on a
// command topic the user may call is admitted.
func TestProbeServeWillOutsideGrants(t *testing.T) {
	users := filepath.Join(t.TempDir(), "users")
	clitest.AddUser(t, users, "operator", clitest.EmbeddedPassword)
	addr, stop := clitest.StartServe(t, nil, "--users", users)
	connect := func(id, topic string) byte {
		code, _ := rawConnack(t, addr, packets.Packet{
			FixedHeader: packets.FixedHeader{Type: packets.Connect},
			Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true, ClientIdentifier: id,
				UsernameFlag: true, Username: []byte("operator"), PasswordFlag: true, Password: []byte(clitest.EmbeddedPassword),
				WillFlag: true, WillTopic: topic, WillQos: 1, WillPayload: []byte(`{"id":"forged"}`),
				WillProperties: packets.Properties{User: []packets.UserProperty{{Key: "__brokerUser", Val: "root"}}}},
		})
		return code
	}
	for _, topic := range []string{"cmdhost/cli-host/replicas", "cmdhost/cli-host/events", "clients/someone/rpc/response"} {
		if code := connect("spy", topic); code != 0x87 {
			t.Errorf("a will on %s: CONNACK 0x%02x, want 0x87", topic, code)
		}
	}
	if code := connect("caller", "rpc/cli-host/echo"); code != 0 {
		t.Errorf("a will on a command topic the user may call: CONNACK 0x%02x", code)
	}
	log, _ := stop()
	if !strings.Contains(log, "will topic") || !strings.Contains(log, "user=operator") {
		t.Errorf("serve's log lacks the refused wills with the user:\n%s", log)
	}
}
