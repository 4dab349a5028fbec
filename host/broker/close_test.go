package broker

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// connectPacket is an MQTT v5 CONNECT with clean start and client id id.
func connectPacket(id string) []byte {
	body := []byte{0, 4, 'M', 'Q', 'T', 'T', 5, 2, 0, 60, 0, 0, byte(len(id))}
	body = append(body, id...)
	return append([]byte{0x10, byte(len(body))}, body...)
}

// Close returns, and disconnects its clients, while clients keep
// connecting and leaving. mochi's own Close could deadlock on its clients'
// lock when one detached during it (broker.go, Close): a stack dump of a
// hung test run shows it. This stress run exercises Close's own way of
// disconnecting clients; it did not reproduce the deadlock without the fix
// in 150 rounds (the window is a few instructions wide), so it guards the
// path rather than proving the fix.
func TestCloseWhileClientsLeave(t *testing.T) {
	for round := range 30 {
		e, err := Start(Config{Addr: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		addr := e.URL().Host
		stop := make(chan struct{})
		var churn sync.WaitGroup
		for w := range 4 {
			churn.Add(1)
			go func() {
				defer churn.Done()
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					c, err := net.Dial("tcp", addr)
					if err != nil {
						return // closed
					}
					_, _ = c.Write(connectPacket(fmt.Sprintf("churn-%d-%d-%d", round, w, n)))
					_ = c.SetReadDeadline(time.Now().Add(time.Second))
					_, _ = c.Read(make([]byte, 64)) // the CONNACK, or nothing
					_ = c.Close()
				}
			}()
		}
		closed := make(chan error, 1)
		go func() { closed <- e.Close() }()
		select {
		case err := <-closed:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(time.Minute): // hang guard
			t.Fatalf("round %d: Close did not return while clients left", round)
		}
		close(stop)
		churn.Wait()
	}
}
