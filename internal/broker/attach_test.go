package broker

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The broker closes while clients connect, over TCP and in process: Close
// returns, and (under -race, as make test runs it) no connection's attach
// races mochi's wait for its clients (attach.go). Each round closes a
// broker that has accepted connections whose serving goroutines may not
// have started yet.
func TestCloseWhileClientsConnect(t *testing.T) {
	for range 20 {
		e, err := Start(Config{Addr: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		var dialed atomic.Int64
		accepting := make(chan struct{}) // closed at the 8th connection
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					var c net.Conn
					var err error
					if i%2 == 0 {
						c, err = net.Dial("tcp", e.Addr())
					} else {
						ctx, cancel := context.WithTimeout(context.Background(), time.Second)
						c, err = e.DialInProcess(ctx)
						cancel()
					}
					if err != nil {
						continue // closed, or closing
					}
					if dialed.Add(1) == 8 {
						close(accepting)
					}
					_ = c.Close()
				}
			}()
		}
		select {
		case <-accepting:
		case <-time.After(time.Minute):
			t.Fatal("no connection accepted in a minute")
		}
		closed := make(chan error, 1)
		go func() { closed <- e.Close() }()
		select {
		case err := <-closed:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(time.Minute):
			t.Fatal("Close did not return in a minute while clients connected")
		}
		close(stop)
		wg.Wait()
	}
}
