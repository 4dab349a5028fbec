package broker

import (
	"bytes"
	"io"
	"net"
	"runtime"
	"testing"

	"github.com/mochi-mqtt/server/v2/packets"
)

// idleBound is the most an idle TCP connection may cost the broker (Go
// heap and stacks, the test's own end of it included), documented in
// docs/operations.md. mochi's queue of packets per client alone took
// 512 KiB before (65,535 pointers), so 1000 idle connections cost ~0.5 GiB.
const idleBound = 64 << 10

// 1000 idle connections (CONNECT, then nothing) cost the broker less than
// idleBound each.
func TestIdleConnectionsAreCheap(t *testing.T) {
	const n = 1000
	e := startBroker(t)
	var connect bytes.Buffer
	pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Connect}, ProtocolVersion: 5,
		Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true, Keepalive: 60}}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse + m.StackInuse
	}
	before := heap()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
	})
	ack := make([]byte, 64)
	for i := range n {
		c, err := net.Dial("tcp", e.Addr())
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		connect.Reset()
		pk.Connect.ClientIdentifier = "idle-" + string(rune('a'+i%26)) + itoa(i)
		if err := pk.ConnectEncode(&connect); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(connect.Bytes()); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAtLeast(c, ack, 2); err != nil || ack[0] != 0x20 {
			t.Fatalf("connection %d: no CONNACK: %v", i, err)
		}
	}
	per := (heap() - before) / n
	t.Logf("%d idle connections: %d KiB of Go heap and stacks each (bound %d KiB)", n, per>>10, idleBound>>10)
	if per > idleBound {
		t.Errorf("an idle connection costs %d KiB, over the bound of %d KiB", per>>10, idleBound>>10)
	}
}

func itoa(i int) string {
	var b [20]byte
	p := len(b)
	for {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[p:])
		}
	}
}
