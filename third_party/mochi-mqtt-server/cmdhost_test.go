package mqtt

import (
	"sync"
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
