package session

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

// recordingConn is a net.Conn whose writes are recorded, and whose first
// write blocks until release is closed.
type recordingConn struct {
	net.Conn
	mu      sync.Mutex
	writes  [][]byte
	entered chan struct{} // closed when the first write begins
	release chan struct{}
	once    sync.Once
}

func newRecordingConn() *recordingConn {
	return &recordingConn{entered: make(chan struct{}), release: make(chan struct{})}
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.once.Do(func() {
		close(c.entered)
		<-c.release
	})
	c.mu.Lock()
	c.writes = append(c.writes, append([]byte(nil), p...))
	c.mu.Unlock()
	return len(p), nil
}

func (c *recordingConn) Close() error                     { return nil }
func (c *recordingConn) SetWriteDeadline(time.Time) error { return nil }

// writePacket writes a packet as paho does: its pieces under the lock.
func writePacket(c *brokerConn, pieces ...string) {
	c.Lock()
	for _, p := range pieces {
		_, _ = c.Write([]byte(p))
	}
	c.Unlock()
}

// A packet's pieces go out in one write; packets ended while another
// goroutine writes go out together in its next write, whole and in
// order; a write outside a packet goes out at once.
func TestBrokerConnCoalesces(t *testing.T) {
	rc := newRecordingConn()
	c := &brokerConn{Conn: rc}
	c.sent.L = &c.mu

	first := make(chan struct{})
	go func() {
		writePacket(c, "A1", "A2", "A3") // its write blocks
		close(first)
	}()
	<-rc.entered
	writePacket(c, "B1", "B2")
	writePacket(c, "C1")
	close(rc.release)
	<-first
	if want := [][]byte{[]byte("A1A2A3"), []byte("B1B2C1")}; !equalWrites(rc.writes, want) {
		t.Errorf("writes %q, want %q", rc.writes, want)
	}

	_, _ = c.Write([]byte("D")) // outside a packet: at once
	if n := len(rc.writes); n != 3 {
		t.Errorf("a write outside a packet was not sent at once: %d writes", n)
	}
}

// Close waits for a write in progress and sends what was gathered
// meanwhile before it closes.
func TestBrokerConnCloseSendsAll(t *testing.T) {
	rc := newRecordingConn()
	c := &brokerConn{Conn: rc}
	c.sent.L = &c.mu
	go writePacket(c, "A") // its write blocks
	<-rc.entered
	writePacket(c, "B")
	closed := make(chan struct{})
	go func() {
		_ = c.Close()
		close(closed)
	}()
	close(rc.release)
	<-closed
	if want := [][]byte{[]byte("A"), []byte("B")}; !equalWrites(rc.writes, want) {
		t.Errorf("writes %q before Close returned, want %q", rc.writes, want)
	}
}

func equalWrites(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// Over TCP, packets of 8 goroutines arrive whole and each goroutine's in
// the order it wrote them, and the reads see them all.
func TestBrokerConnPacketsStayWhole(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		s, err := l.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- s
	}()
	raw, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := newBrokerConn(raw)
	server := <-accepted
	if server == nil {
		t.Fatal("no connection accepted")
	}
	defer server.Close()

	const writers, packets = 8, 2000
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := range packets {
				// [writer][seq:4][len:2][body], body in three pieces
				var head [7]byte
				head[0] = byte(w)
				binary.BigEndian.PutUint32(head[1:], uint32(seq))
				body := bytes.Repeat([]byte{byte(w)}, 10+seq%50)
				binary.BigEndian.PutUint16(head[5:], uint16(len(body)))
				writePacket(c, string(head[:]), string(body[:5]), string(body[5:]))
			}
		}()
	}
	done := make(chan error, 1)
	go func() {
		next := make([]uint32, writers)
		var head [7]byte
		for range writers * packets {
			if _, err := io.ReadFull(server, head[:]); err != nil {
				done <- err
				return
			}
			w, seq := head[0], binary.BigEndian.Uint32(head[1:])
			body := make([]byte, binary.BigEndian.Uint16(head[5:]))
			if _, err := io.ReadFull(server, body); err != nil {
				done <- err
				return
			}
			if int(w) >= writers || seq != next[w] || !bytes.Equal(body, bytes.Repeat([]byte{w}, len(body))) {
				done <- io.ErrUnexpectedEOF
				t.Errorf("packet of writer %d seq %d (want seq %d) torn or out of order", w, seq, next[w%writers])
				return
			}
			next[w]++
		}
		done <- nil
	}()
	wg.Wait()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // hang guard
		t.Fatal("not every packet arrived within a minute")
	}

	// Reads through the buffer see what the other side sends, whole.
	msg := bytes.Repeat([]byte("r"), 100_000)
	go func() { _, _ = server.Write(msg) }()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, msg) {
		t.Errorf("read %d bytes through the buffer: %v", len(got), err)
	}
	_ = c.Close()
}

// stuckConn is a connection whose peer never reads: a write blocks until
// the write deadline passes.
type stuckConn struct {
	net.Conn
	mu       sync.Mutex
	deadline time.Time
	set      chan struct{} // signalled when a deadline is set
}

func (c *stuckConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	select {
	case c.set <- struct{}{}:
	default:
	}
	return nil
}

func (c *stuckConn) Write(p []byte) (int, error) {
	for {
		c.mu.Lock()
		d := c.deadline
		c.mu.Unlock()
		if !d.IsZero() {
			time.Sleep(time.Until(d))
			return 0, os.ErrDeadlineExceeded
		}
		<-c.set
	}
}

func (c *stuckConn) Close() error { return nil }

// A broker that stopped reading does not hold Close: the write in
// progress fails at the deadline Close sets, and Close returns.
func TestBrokerConnCloseWithAStuckBroker(t *testing.T) {
	sc := &stuckConn{set: make(chan struct{}, 1)}
	c := &brokerConn{Conn: sc}
	c.sent.L = &c.mu
	go writePacket(c, "never read")
	for {
		c.mu.Lock()
		sending := c.sending
		c.mu.Unlock()
		if sending {
			break
		}
		runtime.Gosched()
	}
	closed := make(chan struct{})
	go func() {
		_ = c.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(time.Minute): // hang guard; Close waits lingerTimeout
		t.Fatal("Close waited for a write that never ends")
	}
}
