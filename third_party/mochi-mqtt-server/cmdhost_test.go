package mqtt

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
)

// hangLimit bounds the wait for work that ends by itself unless it is
// deadlocked: it only turns a hang into a failure.
const hangLimit = time.Minute

// NextImmediate (a client's reader, after each packet it processes) and
// Set (a publisher delivering to the client, on another goroutine) run
// at once without deadlocking. NextImmediate read-locked the map twice: a
// Set between the two locks waited for the first and held off the second
// (a sync.RWMutex lets no reader in once a writer waits), and the two
// waited for each other for good.
func TestInflightNextImmediateBesideSet(t *testing.T) {
	const rounds = 200_000
	i := NewInflights()
	i.Set(packets.Packet{PacketID: 1, Expiry: -1})
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for range rounds {
			if _, ok := i.NextImmediate(); !ok {
				t.Error("the waiting message is not next")
				return
			}
		}
	})
	wg.Go(func() {
		for n := range rounds {
			id := uint16(2 + n%1000)
			i.Set(packets.Packet{PacketID: id})
			i.Delete(id)
		}
	})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(hangLimit):
		t.Fatalf("NextImmediate and Set deadlocked")
	}
}

// GetByListener beside clients connecting and leaving: it read-locked the
// clients twice, as NextImmediate did.
func TestClientsGetByListenerBesideAdd(t *testing.T) {
	const rounds = 200_000
	cl := NewClients()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for range rounds {
			cl.GetByListener("tcp")
		}
	})
	wg.Go(func() {
		c := &Client{ID: "a"}
		for range rounds {
			cl.Add(c)
			cl.Delete(c.ID)
		}
	})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(hangLimit):
		t.Fatalf("GetByListener and Add deadlocked")
	}
}

// A message that waited for send quota returns its slot when its PUBACK
// comes, as any other: upstream deleted it from the in-flight map once
// written, so its PUBACK, finding nothing, returned no quota, and each
// message that had waited took a slot of the client's Receive Maximum
// for good (a burst to a client with a Receive Maximum of 64 stopped once
// 64 had waited).
func TestWaitingMessageReturnsItsQuota(t *testing.T) {
	s := New(&Options{})
	if err := s.AddHook(new(allowACL), nil); err != nil {
		t.Fatal(err)
	}
	c, peer := net.Pipe()
	defer c.Close()
	defer peer.Close()
	go func() { _, _ = io.Copy(io.Discard, peer) }() // what the client reads
	cl := s.NewClient(c, "tcp", "subscriber", false)
	cl.Properties.ProtocolVersion = 5
	cl.State.Inflight.ResetSendQuota(1) // the client's Receive Maximum
	sub := packets.Subscription{Filter: "t", Qos: 1}
	publish := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1}, TopicName: "t", Payload: []byte("x")}
	sent := func() packets.Packet {
		t.Helper()
		select {
		case pk := <-cl.State.outbound:
			return *pk
		default:
			t.Fatal("no message queued for the client")
			return packets.Packet{}
		}
	}
	puback := func(id uint16) {
		t.Helper()
		if err := s.processPacket(cl, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Puback}, PacketID: id, ProtocolVersion: 5}); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		if _, err := s.publishToClient(cl, sub, publish); err != nil { // takes the slot
			t.Fatal(err)
		}
		first := sent()
		if _, err := s.publishToClient(cl, sub, publish); err != nil { // waits for it
			t.Fatal(err)
		}
		if len(cl.State.outbound) != 0 {
			t.Fatal("a message was sent beyond the client's Receive Maximum")
		}
		puback(first.PacketID) // frees the slot: the waiting message goes
		second := sent()
		puback(second.PacketID)
		if q := atomic.LoadInt32(&cl.State.Inflight.sendQuota); q != 1 || cl.State.Inflight.Len() != 0 {
			t.Fatalf("round %d: send quota %d and %d in flight after both PUBACKs, want 1 and 0", round, q, cl.State.Inflight.Len())
		}
	}
}

// allowACL lets every client read and write every topic (hooks/auth's
// AllowHook, which this package's tests cannot import).
type allowACL struct{ HookBase }

func (*allowACL) ID() string                            { return "allow-acl" }
func (*allowACL) Provides(b byte) bool                  { return b == OnACLCheck }
func (*allowACL) OnACLCheck(*Client, string, bool) bool { return true }
