package broker

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
)

// rawClient is an MQTT v5 client written packet by packet with mochi's
// codec, for the tests that need what no well-behaved client does: never
// reading its socket, keep-alive 0, a forged property, a huge remaining
// length.
type rawClient struct {
	conn net.Conn
	r    *bufio.Reader
}

// dialRaw opens a TCP connection to addr without sending anything.
func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &rawClient{conn: c, r: bufio.NewReader(c)}
}

// write encodes pk (v5) and writes it.
func (c *rawClient) write(t *testing.T, pk packets.Packet) {
	t.Helper()
	pk.ProtocolVersion = 5
	var buf bytes.Buffer
	var err error
	switch pk.FixedHeader.Type {
	case packets.Connect:
		err = pk.ConnectEncode(&buf)
	case packets.Subscribe:
		err = pk.SubscribeEncode(&buf)
	case packets.Publish:
		err = pk.PublishEncode(&buf)
	case packets.Auth:
		err = pk.AuthEncode(&buf)
	case packets.Puback:
		err = pk.PubackEncode(&buf)
	default:
		t.Fatalf("rawClient cannot write packet type %d", pk.FixedHeader.Type)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.conn.Write(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
}

// read reads the next packet, waiting at most a hang guard.
func (c *rawClient) read(t *testing.T) (packets.Packet, error) {
	t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	return c.readPacket()
}

// readPacket reads the next packet (v5).
func (c *rawClient) readPacket() (packets.Packet, error) {
	var pk packets.Packet
	b, err := c.r.ReadByte()
	if err != nil {
		return pk, err
	}
	if err := pk.FixedHeader.Decode(b); err != nil {
		return pk, err
	}
	if pk.FixedHeader.Remaining, _, err = packets.DecodeLength(c.r); err != nil {
		return pk, err
	}
	body := make([]byte, pk.FixedHeader.Remaining)
	if _, err := io.ReadFull(c.r, body); err != nil {
		return pk, err
	}
	pk.ProtocolVersion = 5
	switch pk.FixedHeader.Type {
	case packets.Connack:
		err = pk.ConnackDecode(body)
	case packets.Suback:
		err = pk.SubackDecode(body)
	case packets.Publish:
		err = pk.PublishDecode(body)
	case packets.Puback:
		err = pk.PubackDecode(body)
	case packets.Disconnect:
		err = pk.DisconnectDecode(body)
	case packets.Auth:
		err = pk.AuthDecode(body)
	}
	return pk, err
}

// connect sends CONNECT as id (keep-alive 0: the broker sets no read
// deadline) and returns the CONNACK's reason code.
func (c *rawClient) connect(t *testing.T, id string) packets.Packet {
	t.Helper()
	c.write(t, packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Connect},
		Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true,
			ClientIdentifier: id},
	})
	ack, err := c.read(t)
	if err != nil {
		t.Fatalf("%s: reading CONNACK: %v", id, err)
	}
	if ack.FixedHeader.Type != packets.Connack {
		t.Fatalf("%s: got packet type %d, want CONNACK", id, ack.FixedHeader.Type)
	}
	return ack
}

// subscribe subscribes to filter at qos and waits for the SUBACK.
func (c *rawClient) subscribe(t *testing.T, filter string, qos byte) {
	t.Helper()
	c.write(t, packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1},
		PacketID:    1,
		Filters:     packets.Subscriptions{{Filter: filter, Qos: qos}},
	})
	ack, err := c.read(t)
	if err != nil || ack.FixedHeader.Type != packets.Suback || len(ack.ReasonCodes) != 1 || ack.ReasonCodes[0] > 2 {
		t.Fatalf("subscribe %s: %+v, %v", filter, ack, err)
	}
}

// rawConnected dials addr and connects as id, failing unless accepted.
func rawConnected(t *testing.T, addr, id string) *rawClient {
	t.Helper()
	c := dialRaw(t, addr)
	if ack := c.connect(t, id); ack.ReasonCode != 0 {
		t.Fatalf("%s: CONNACK reason 0x%02x, want 0", id, ack.ReasonCode)
	}
	return c
}

func (c *rawClient) String() string { return fmt.Sprintf("raw client %s", c.conn.LocalAddr()) }
