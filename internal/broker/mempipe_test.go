package broker

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

func TestMemPipeCarriesBytesInOrder(t *testing.T) {
	a, b := memPipe()
	var want bytes.Buffer
	for i := 0; i < 1000; i++ {
		want.Write(bytes.Repeat([]byte{byte(i)}, i%300))
	}
	go func() {
		data := want.Bytes()
		for len(data) > 0 {
			n := min(len(data), 777)
			if _, err := a.Write(data[:n]); err != nil {
				t.Error(err)
				return
			}
			data = data[n:]
		}
		_ = a.CloseWrite()
	}()
	got, err := io.ReadAll(b)
	if err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("read %d bytes (%v), want the %d written in order", len(got), err, want.Len())
	}
	// The other direction still works after the half-close.
	if _, err := b.Write([]byte("back")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(a, buf); err != nil || string(buf) != "back" {
		t.Fatalf("read %q, %v", buf, err)
	}
}

// Concurrent writes arrive whole: the bytes of two writes never
// interleave (mochi writes a packet in one call).
func TestMemPipeWritesStayWhole(t *testing.T) {
	a, b := memPipe()
	const writers, each, size = 8, 200, 3000 // writes beyond the bound wait
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := bytes.Repeat([]byte{byte('a' + w)}, size)
			for i := 0; i < each; i++ {
				if _, err := a.Write(p); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); _ = a.CloseWrite() }()
	got, err := io.ReadAll(b)
	if err != nil || len(got) != writers*each*size {
		t.Fatalf("read %d bytes (%v), want %d", len(got), err, writers*each*size)
	}
	for i := 0; i < len(got); i += size {
		if !bytes.Equal(got[i:i+size], bytes.Repeat(got[i:i+1], size)) {
			t.Fatalf("the write at byte %d is interleaved with another", i)
		}
	}
}

// A writer waits while the reader is a bound behind, and goes on once it
// reads; a write alone in an empty pipe goes in whole, whatever its size.
func TestMemPipeBoundsWhatWaits(t *testing.T) {
	a, b := memPipe()
	if _, err := a.Write(make([]byte, 3*memPipeBound)); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() { _, err := a.Write([]byte("x")); wrote <- err }()
	_ = a.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	if err := <-wrote; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a write past the bound: %v, want to wait until its deadline", err)
	}
	_ = a.SetWriteDeadline(time.Time{})
	go func() { _, err := a.Write([]byte("y")); wrote <- err }()
	if _, err := io.ReadFull(b, make([]byte, 3*memPipeBound)); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := b.Read(buf); err != nil || buf[0] != 'y' {
		t.Fatalf("read %q, %v", buf, err)
	}
}

// The broker's end never waits for the client to read: mochi writes
// holding the client's write lock, which its reader of the client needs
// for each PUBACK (TestInProcessLargeMessagesBothWays).
func TestMemPipeBrokerWritesNeverWait(t *testing.T) {
	client, broker := memPipe()
	_ = broker.SetWriteDeadline(time.Now().Add(-time.Second)) // a wait would fail at once
	for i := range 4 {
		if _, err := broker.Write(make([]byte, 3*memPipeBound)); err != nil {
			t.Fatalf("the broker's write with %d MiB unread: %v", 3*i, err)
		}
	}
	if _, err := io.ReadFull(client, make([]byte, 12*memPipeBound)); err != nil {
		t.Fatal(err)
	}
}

func TestMemPipeReadDeadline(t *testing.T) {
	a, b := memPipe()
	_ = b.SetReadDeadline(time.Now().Add(-time.Second))
	if _, err := b.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past its deadline: %v", err)
	}
	var ne net.Error
	if _, err := b.Read(make([]byte, 1)); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("the deadline's error %v is not a net.Error with Timeout", err)
	}
	// A reader waiting without a deadline is woken by one set meanwhile.
	_ = b.SetReadDeadline(time.Time{})
	read := make(chan error, 1)
	go func() { _, err := b.Read(make([]byte, 1)); read <- err }()
	_ = b.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if err := <-read; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a waiting read given a deadline: %v", err)
	}
	// Data before the deadline is read.
	_ = b.SetReadDeadline(time.Now().Add(time.Hour))
	go func() { _, _ = a.Write([]byte("z")) }()
	if _, err := b.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
}

func TestMemPipeClose(t *testing.T) {
	a, b := memPipe()
	read := make(chan error, 1)
	go func() { _, err := b.Read(make([]byte, 1)); read <- err }()
	if _, err := a.Write([]byte("last")); err != nil {
		t.Fatal(err)
	}
	_ = a.Close()
	if err := <-read; err != nil {
		t.Fatalf("what was written before Close: %v", err)
	}
	rest, err := io.ReadAll(b)
	if err != nil || string(rest) != "ast" {
		t.Fatalf("after the peer's Close: %q, %v; want the rest, then EOF", rest, err)
	}
	if _, err := b.Write([]byte("x")); err == nil {
		t.Fatal("a write to a closed peer succeeded")
	}
	if _, err := a.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a read after Close: %v", err)
	}
	if _, err := a.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a write after Close: %v", err)
	}
	// Close wakes a reader waiting at its own end.
	c, _ := memPipe()
	go func() { _, err := c.Read(make([]byte, 1)); read <- err }()
	_ = c.Close()
	if err := <-read; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a waiting read when its end closes: %v", err)
	}
}

// A reader that always leaves some bytes unread does not make the pipe
// keep what it read: the buffer stays near what is unread.
func TestMemPipeLaggingReaderKeepsTheBufferBounded(t *testing.T) {
	a, b := memPipe()
	chunk := make([]byte, 1000)
	if _, err := a.Write(chunk); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(b, chunk[:950]); err != nil { // 50 bytes stay unread
		t.Fatal(err)
	}
	half := a.out
	for i := 0; i < 20_000; i++ { // 20 MB through the pipe
		if _, err := a.Write(chunk); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(b, chunk); err != nil {
			t.Fatal(err)
		}
		if c := cap(half.buf); c > 64<<10 {
			t.Fatalf("after %d writes of %d bytes, 50 unread, the buffer holds %d bytes", i+1, len(chunk), c)
		}
	}
}
