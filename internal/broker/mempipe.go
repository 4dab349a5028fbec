package broker

import (
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// memPipeBound is how many unread bytes the client's direction of a
// memory pipe holds before the client's writers wait for the broker (a
// write larger than it goes in whole once the direction is empty). It is
// larger than the kernel's buffers of a socket pair, so a host that could
// keep up over a socket keeps up here.
const memPipeBound = 1 << 20

// memPipe returns the two ends of a connection in memory: the client's,
// then the broker's. Unlike net.Pipe, a write returns once its bytes are
// buffered, not once the reader took them: the broker and paho each read
// in a goroutine of its own and write from others, as over a socket, and
// a synchronous pipe stalled them (BENCHMARKS.md, "In-process connections
// to the embedded broker"). Unlike the socket pair used before, nothing
// crosses the kernel: a write is a copy and, when the reader waits, a
// wake-up.
//
// The broker's writes never wait, as they never wait for a TCP client
// (tcpconn.go): mochi writes to a client holding the client's write lock,
// and its reader of that client takes the lock to send each PUBACK. When
// the broker's direction was bounded too (a MiB), a host sending and sent
// replies of a MiB stopped for good (issue 40): mochi's writer waited for
// the host to read; the host's reader waited for paho's session lock,
// held by paho's acker while it waited for the broker to read; and
// mochi's reader waited for the write lock. What the broker's direction
// holds is what mochi sent the host and the host has not read yet: its
// QoS 1 messages are those mochi keeps until the host acknowledges them
// anyway (within the Receive Maximum of the host's session), and the host
// reads on while its handlers work.
func memPipe() (*memConn, *memConn) {
	toBroker, toClient := newPipeHalf(memPipeBound), newPipeHalf(0)
	return &memConn{in: toClient, out: toBroker}, &memConn{in: toBroker, out: toClient}
}

// pipeHalf is one direction of a memory pipe: bytes written by one end
// and read by the other. Everything is under mu. A goroutine that must
// wait takes the current wake channel (made on demand) and waits for it
// to close; whoever changes what it waits on (data, space, a close, a
// deadline) closes it. A timer per side, reset for each wait with a
// deadline, closes it when the deadline passes.
type pipeHalf struct {
	bound    int // the unread bytes past which writers wait; 0: none
	mu       sync.Mutex
	buf      []byte // buf[off:] is unread
	off      int
	readEnd  bool // the reading end closed: writes fail
	writeEnd bool // the writing end closed (Close or CloseWrite): reads end with io.EOF once drained

	readDeadline, writeDeadline time.Time
	readWake, writeWake         chan struct{}
	readTimer, writeTimer       *time.Timer
}

func newPipeHalf(bound int) *pipeHalf { return &pipeHalf{bound: bound} }

// wakeLocked closes *ch, if made, to wake its waiters.
func wakeLocked(ch *chan struct{}) {
	if *ch != nil {
		close(*ch)
		*ch = nil
	}
}

// waitLocked releases mu until *ch closes or deadline passes (the
// caller then checks again), with timer reset to fire at the deadline.
func (h *pipeHalf) waitLocked(ch *chan struct{}, timer **time.Timer, deadline time.Time) {
	if *ch == nil {
		*ch = make(chan struct{})
	}
	wake := *ch
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if *timer == nil {
			*timer = time.AfterFunc(d, func() {
				h.mu.Lock()
				wakeLocked(ch)
				h.mu.Unlock()
			})
		} else {
			(*timer).Reset(d)
		}
	}
	h.mu.Unlock()
	<-wake
	h.mu.Lock()
}

func passed(deadline time.Time) bool {
	return !deadline.IsZero() && !time.Now().Before(deadline)
}

func (h *pipeHalf) read(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		switch {
		case h.readEnd:
			return 0, net.ErrClosed
		case h.off < len(h.buf):
			n := copy(p, h.buf[h.off:])
			h.off += n
			if h.off == len(h.buf) {
				h.off, h.buf = 0, h.buf[:0]
				if cap(h.buf) > memPipeBound { // a large write's buffer is not kept
					h.buf = nil
				}
			}
			wakeLocked(&h.writeWake)
			return n, nil
		case h.writeEnd:
			return 0, io.EOF
		case passed(h.readDeadline):
			return 0, os.ErrDeadlineExceeded
		}
		h.waitLocked(&h.readWake, &h.readTimer, h.readDeadline)
	}
}

func (h *pipeHalf) write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		switch {
		case h.writeEnd:
			return 0, net.ErrClosed
		case h.readEnd:
			return 0, io.ErrClosedPipe
		case h.bound == 0 || h.off == len(h.buf) || len(h.buf)-h.off+len(p) <= h.bound:
			if h.off > 0 && cap(h.buf)-len(h.buf) < len(p) {
				// Move the unread bytes to the front rather than grow:
				// a reader that never quite catches up would otherwise
				// keep what it read, and the buffer would grow without
				// end.
				n := copy(h.buf, h.buf[h.off:])
				h.off, h.buf = 0, h.buf[:n]
			}
			h.buf = append(h.buf, p...)
			wakeLocked(&h.readWake)
			return len(p), nil
		case passed(h.writeDeadline):
			return 0, os.ErrDeadlineExceeded
		}
		h.waitLocked(&h.writeWake, &h.writeTimer, h.writeDeadline)
	}
}

// closeRead ends the reading side: reads and writes fail from now on.
func (h *pipeHalf) closeRead() {
	h.mu.Lock()
	h.readEnd = true
	h.buf, h.off = nil, 0
	wakeLocked(&h.readWake)
	wakeLocked(&h.writeWake)
	h.mu.Unlock()
}

// closeWrite ends the writing side: the reader gets what was written,
// then io.EOF.
func (h *pipeHalf) closeWrite() {
	h.mu.Lock()
	h.writeEnd = true
	wakeLocked(&h.readWake)
	wakeLocked(&h.writeWake)
	h.mu.Unlock()
}

func (h *pipeHalf) setReadDeadline(t time.Time) {
	h.mu.Lock()
	h.readDeadline = t
	wakeLocked(&h.readWake)
	h.mu.Unlock()
}

func (h *pipeHalf) setWriteDeadline(t time.Time) {
	h.mu.Lock()
	h.writeDeadline = t
	wakeLocked(&h.writeWake)
	h.mu.Unlock()
}

// memConn is one end of a memory pipe: it reads in and writes out.
type memConn struct {
	in, out *pipeHalf
	attach  attachTicket // the broker's end: given up at the first Read or Close (attach.go)
}

func (c *memConn) Read(p []byte) (int, error) {
	c.attach.done()
	return c.in.read(p)
}

func (c *memConn) Write(p []byte) (int, error) { return c.out.write(p) }

// Close ends both directions at this end: the peer reads what was
// written, then io.EOF; its writes fail.
func (c *memConn) Close() error {
	c.attach.done()
	c.in.closeRead()
	c.out.closeWrite()
	return nil
}

// CloseWrite ends this end's writing only (as a TCP half-close).
func (c *memConn) CloseWrite() error {
	c.out.closeWrite()
	return nil
}

func (c *memConn) LocalAddr() net.Addr  { return pipeAddr{} }
func (c *memConn) RemoteAddr() net.Addr { return pipeAddr{} }

func (c *memConn) SetDeadline(t time.Time) error {
	c.in.setReadDeadline(t)
	c.out.setWriteDeadline(t)
	return nil
}

func (c *memConn) SetReadDeadline(t time.Time) error {
	c.in.setReadDeadline(t)
	return nil
}

func (c *memConn) SetWriteDeadline(t time.Time) error {
	c.out.setWriteDeadline(t)
	return nil
}
