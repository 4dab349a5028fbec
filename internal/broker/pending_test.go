package broker

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// dialFrom opens a TCP connection to addr from the loopback address src
// (127.0.0.2, 127.0.0.3…: each a source of its own to the broker),
// without sending anything.
func dialFrom(t *testing.T, src, addr string) *rawClient {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &rawClient{conn: c, r: bufio.NewReader(c)}
}

// waitPending waits until the broker holds n pending connections (so
// that which one came first is settled).
func waitPending(t *testing.T, e *Embedded, n int) {
	t.Helper()
	testkit.WaitFor(t, "pending connections", func() bool {
		_, pending, _ := e.guard.conns.counts()
		return pending == n
	})
}

// The connections yet to send their CONNECT are bounded apart from the
// clients (MaxClients of each), a quarter of them per source: beyond the
// source's bound its own connection that waited longest is closed, beyond
// the whole bound the one that waited longest of the source holding the
// most (of two holding as many, the one whose oldest came first). The
// newcomer is never the one refused, and every connection kept logs in:
// pending connections took no client's place. Before, the clients' bound
// counted every open connection, and a 9th pending connection was refused
// 0x89 at its CONNECT.
func TestPendingRoomMadeFromTheLargestSource(t *testing.T) {
	e, logs := startWith(t, Config{MaxClients: 8}) // 8 pending, 2 per source
	if got := maxPendingPerSource(8); got != 2 {
		t.Fatalf("maxPendingPerSource(8) = %d, want 2", got)
	}
	a1 := dialFrom(t, "127.0.0.2", e.Addr())
	waitPending(t, e, 1)
	a2 := dialFrom(t, "127.0.0.2", e.Addr())
	waitPending(t, e, 2)
	a3 := dialFrom(t, "127.0.0.2", e.Addr()) // a third from one source: its oldest goes
	wantClosedByBroker(t, a1, "the oldest of a source over its bound")
	waitPending(t, e, 2)

	kept := []*rawClient{a2, a3}
	for _, src := range []string{"127.0.0.3", "127.0.0.3", "127.0.0.4", "127.0.0.4", "127.0.0.5", "127.0.0.6"} {
		kept = append(kept, dialFrom(t, src, e.Addr()))
		waitPending(t, e, len(kept))
	}
	// The ninth: 127.0.0.2, .3 and .4 hold two each, and .2's oldest (a2)
	// came first.
	kept = append(kept, dialFrom(t, "127.0.0.7", e.Addr()))
	wantClosedByBroker(t, a2, "the oldest of the largest source, the bound full")
	kept = kept[1:]
	for i, c := range kept {
		if ack := c.connect(t, "kept-"+itoa(i)); ack.ReasonCode != 0 {
			t.Errorf("%s: CONNACK 0x%02x, want 0", c, ack.ReasonCode)
		}
	}
	if clients, pending, _ := e.guard.conns.counts(); clients != 8 || pending != 0 {
		t.Errorf("%d clients, %d pending; want 8 and 0", clients, pending)
	}
	if got := e.Stats().PendingClosed; got != 2 {
		t.Errorf("PendingClosed %d, want 2", got)
	}
	if !logs.Contains("room made for a newer one") || !logs.Contains("source=127.0.0.2/32") {
		t.Errorf("the closing is not logged with its source:\n%s", logs)
	}
}

// A client sharing its source with a flood of idle sockets gets in when
// its CONNECT comes before the flood's sockets older than it are gone:
// with the source at its bound, maxPendingPerSource-1 newer sockets from
// there. Before, the flood's sockets counted against the clients' bound,
// and the client's CONNECT got 0x89.
func TestPendingClientSharingAFloodsSource(t *testing.T) {
	const maxClients = 40
	perSource := maxPendingPerSource(maxClients) // 10
	e, _ := startWith(t, Config{MaxClients: maxClients})
	var flood []*rawClient
	open := func() {
		flood = append(flood, dialFrom(t, "127.0.0.2", e.Addr()))
	}
	for range perSource - 1 {
		open()
		waitPending(t, e, len(flood))
	}
	client := dialFrom(t, "127.0.0.2", e.Addr()) // the client, slow to send its CONNECT
	waitPending(t, e, perSource)
	for i := range perSource - 1 { // each closes the flood's oldest
		open()
		wantClosedByBroker(t, flood[i], "the flood's oldest socket")
	}
	if ack := client.connect(t, "client"); ack.ReasonCode != 0 {
		t.Fatalf("the client beside the flood: CONNACK 0x%02x, want 0", ack.ReasonCode)
	}
	if got, want := e.Stats().PendingClosed, uint64(perSource-1); got != want {
		t.Errorf("PendingClosed %d, want %d", got, want)
	}
}

// A connection that sends no CONNECT within the connect timeout is
// closed, logged by the broker (rate-limited), not by mochi: mochi warned
// once per connection ("read connection: … i/o timeout").
func TestPendingTimeoutIsQuiet(t *testing.T) {
	e, logs := startWith(t, Config{connectTimeout: 50 * time.Millisecond})
	for range 3 {
		wantClosedByBroker(t, dialFrom(t, "127.0.0.2", e.Addr()), "a connection sending nothing")
	}
	if got := e.Stats().PendingClosed; got != 3 {
		t.Errorf("PendingClosed %d, want 3", got)
	}
	if !logs.Contains("no CONNECT within 50ms") {
		t.Errorf("the timeout is not logged:\n%s", logs)
	}
	if logs.Contains("i/o timeout") {
		t.Errorf("mochi logs the timeout:\n%s", logs)
	}
	if clients, pending, _ := e.guard.conns.counts(); clients != 0 || pending != 0 {
		t.Errorf("%d clients, %d pending after the timeouts; want none", clients, pending)
	}
}

// sourceOf keys IPv4 by address and IPv6 by /64.
func TestSourceOf(t *testing.T) {
	for _, c := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 1}, "192.0.2.7/32"},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:192.0.2.7"), Port: 1}, "192.0.2.7/32"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:3:4:5:6"), Port: 1}, "2001:db8:1:2::/64"},
		{&net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 1, Zone: "eth0"}, "fe80::/64"},
		{nil, "invalid Prefix"},
	} {
		if got := sourceOf(c.addr).String(); got != c.want {
			t.Errorf("sourceOf(%v) = %s, want %s", c.addr, got, c.want)
		}
	}
}

// A connection waiting for its CONNECT costs the broker less than
// idleBound (Go heap and stacks, the test's own end included): at the
// default bound, 1000 of them from four sources (250 each, the
// per-source bound) hold under 64 MiB, whatever a flood does.
func TestPendingConnectionsAreCheap(t *testing.T) {
	e := startBroker(t)
	n := maxPending(DefaultMaxClients)
	before := heapInUse()
	for i := range n {
		dialFrom(t, "127.0.0."+itoa(2+i%4), e.Addr())
	}
	waitPending(t, e, n)
	per := (heapInUse() - before) / uint64(n)
	t.Logf("%d connections waiting for their CONNECT: %d KiB of Go heap and stacks each (bound %d KiB)", n, per>>10, idleBound>>10)
	if per > idleBound {
		t.Errorf("a connection waiting for its CONNECT costs %d KiB, over the bound of %d KiB", per>>10, idleBound>>10)
	}
}
