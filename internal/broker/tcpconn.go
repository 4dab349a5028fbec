package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Clients over TCP (anyone; the host's own clients come in process) reach
// mochi through tcpListener and boundedConn, which bound what mochi does
// not:
//
//   - Writes never block mochi. mochi writes to a client while holding that
//     client's lock, and every publisher delivering a QoS 1 message to the
//     client takes the same lock (to pick a packet id): a subscriber that
//     stops reading its socket, once the socket's buffers filled, held up
//     every publisher of a matching topic, the host's replies included.
//     boundedConn's Write only queues the bytes; a goroutine of its own
//     writes them. A client whose socket takes nothing for
//     Config.WriteTimeout (it does not read), or that falls more than
//     Config.ClientQueueBytes behind, is disconnected
//     (Stats.ClientsDropped). The queue's bound sits above what a client
//     that reads may be sent at once (its unacknowledged messages,
//     Config.MaxInflightBytes, and a packet): a client that keeps eight
//     replies of 4 MB in flight is not dropped for them, as it was when
//     the bound (4 MiB) was less than two of them. What is queued counts
//     in what the broker holds for its clients (held.go).
//   - Packets are bounded as they are read: a fixed header announcing a
//     packet over Config.MaxPacketBytes ends the connection before mochi
//     allocates its body (mochi's own check would apply to the host's
//     in-process clients as well, whose replies may be larger).
//   - A connection must send its CONNECT within connectTimeout (mochi sets
//     no deadline before it), and at most 2 × Config.MaxClients connections
//     are open at once (beyond Config.MaxClients a CONNECT is refused with
//     a CONNACK, see guard.go).
//   - Accept errors (out of file descriptors) are retried: mochi's accept
//     loop ends at the first, and the broker would accept no one again.

// connectTimeout bounds the wait for a TCP connection's CONNECT.
const connectTimeout = 10 * time.Second

// tcpListener accepts the TCP clients' connections as boundedConns.
type tcpListener struct {
	net.Listener
	cfg   *Config
	stats *stats
	log   *slog.Logger
	open  *atomic.Int64 // connections accepted and not yet closed, on every listener over the network
	gate  *attachGate   // the broker's (attach.go)
	held  *holdings     // the broker's (held.go): its total counts the queues
}

func (l *tcpListener) Accept() (net.Conn, error) {
	backoff := 5 * time.Millisecond
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil, err
			}
			l.stats.note(l.log, "accepting a connection failed; retrying", "err", err)
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		if l.open.Load() >= 2*int64(l.cfg.MaxClients) {
			l.stats.clientsRefused.Add(1)
			l.stats.note(l.log, "connection refused: too many connections", "remote", c.RemoteAddr().String(),
				"open", l.open.Load(), "max_clients", l.cfg.MaxClients)
			_ = c.Close()
			continue
		}
		ticket, ok := l.gate.hand()
		if !ok { // the broker is closing
			_ = c.Close()
			return nil, net.ErrClosed
		}
		l.open.Add(1)
		_ = c.SetReadDeadline(time.Now().Add(connectTimeout))
		bc := newBoundedConn(c, l)
		bc.attach = ticket
		return bc, nil
	}
}

// errQueueFull ends the connection of a client that does not keep up.
var errQueueFull = errors.New("client not reading: its write queue is over its bound (--broker-queue-bytes)")

// errPacketTooLarge ends the connection of a client that sends a packet
// over the maximum.
type errPacketTooLarge struct{ size, max int }

func (e *errPacketTooLarge) Error() string {
	return fmt.Sprintf("packet of %d bytes over the maximum packet size of %d bytes", e.size, e.max)
}

// boundedConn is a TCP client's connection (see the top of this file).
// Write appends to pending and, if no flusher runs, starts one; the
// flusher writes pending to the socket batch by batch and ends when it is
// empty, so an idle connection has no goroutine and no buffer. Read
// passes the bytes through a frameReader.
type boundedConn struct {
	net.Conn
	l      *tcpListener
	frames frameReader // Read's only: mochi reads from one goroutine
	// handshook is Read's only: a TLS connection's handshake is done.
	handshook bool
	attach    attachTicket // given up at the first Read or Close (attach.go)
	held      heldLedger   // what the broker holds for its client (held.go)

	mu       sync.Mutex
	pending  []byte // bytes queued, not yet taken by the flusher
	queued   int    // bytes Write took and that are neither written nor discarded: pending's and the flusher's batch's
	flushing bool
	closed   bool  // Close was called: the flusher closes once pending is out
	err      error // once set, every Write fails with it

	closeOnce sync.Once
}

// closeLinger bounds how long a closed connection's last bytes (a
// DISCONNECT, a refusing CONNACK) may take to go out.
const closeLinger = time.Second

// writeChunk is the most one socket write takes: each chunk gets
// WriteTimeout, so the timeout measures a lack of progress, not the
// time a large batch takes.
const writeChunk = 64 << 10

func newBoundedConn(c net.Conn, l *tcpListener) *boundedConn {
	return &boundedConn{Conn: c, l: l, frames: frameReader{max: l.cfg.MaxPacketBytes}}
}

func (c *boundedConn) Read(b []byte) (int, error) {
	c.attach.done()
	if tc, ok := c.Conn.(*tls.Conn); ok && !c.handshook {
		// The handshake, done here (not in mochi's first read) to log a
		// client refused by it with its address and why.
		if err := tc.Handshake(); err != nil {
			c.l.stats.clientsRefused.Add(1)
			c.l.stats.note(c.l.log, "client refused: TLS handshake failed", "remote", c.RemoteAddr().String(), "err", err)
			return 0, err
		}
		c.handshook = true
	}
	n, err := c.Conn.Read(b)
	if n > 0 {
		if ok, tooLarge := c.frames.scan(b[:n]); tooLarge != nil {
			c.l.stats.packetsTooLarge.Add(1)
			c.l.stats.note(c.l.log, "client disconnected: packet too large", "remote", c.RemoteAddr().String(),
				"size", tooLarge.size, "max", tooLarge.max)
			return ok, tooLarge
		}
	}
	return n, err
}

// Write queues b; it never waits for the socket.
func (c *boundedConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return 0, err
	}
	if c.closed {
		c.mu.Unlock()
		return 0, net.ErrClosed
	}
	if queued := c.queued; queued > 0 && queued+len(b) > c.l.cfg.ClientQueueBytes {
		c.err = errQueueFull
		c.account(-len(c.pending))
		c.pending = nil
		c.mu.Unlock()
		c.drop(errQueueFull, queued+len(b))
		return 0, errQueueFull
	}
	c.pending = append(c.pending, b...)
	c.account(len(b))
	start := !c.flushing
	c.flushing = true
	c.mu.Unlock()
	if start {
		go c.flush()
	}
	return len(b), nil
}

// account counts n more bytes queued (n < 0: fewer), here and in what
// the broker holds. c.mu is held.
func (c *boundedConn) account(n int) {
	c.queued += n
	c.l.held.total.Add(int64(n))
}

// queuedBytes returns the bytes queued for the socket.
func (c *boundedConn) queuedBytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int64(c.queued)
}

// flush writes pending to the socket until it is empty.
func (c *boundedConn) flush() {
	for {
		c.mu.Lock()
		if len(c.pending) == 0 || c.err != nil {
			c.account(-len(c.pending)) // discarded after an error
			c.pending = nil
			c.flushing = false
			closed := c.closed
			c.mu.Unlock()
			if closed {
				c.closeConn()
			}
			return
		}
		batch := c.pending
		c.pending = nil
		c.mu.Unlock()

		written, err := c.writeAll(batch)

		c.mu.Lock()
		c.account(written - len(batch))     // what the error left unwritten
		first := err != nil && c.err == nil // not the end of a drop or close already under way
		if first {
			c.err = err
		}
		closed := c.closed
		c.mu.Unlock()
		if err != nil {
			if first && !closed {
				c.drop(err, len(batch))
			}
			c.closeConn()
		}
	}
}

// writeAll writes b in chunks, each given WriteTimeout (closeLinger once
// the connection is closed), uncounting each chunk written; it returns
// how many bytes it wrote.
func (c *boundedConn) writeAll(b []byte) (int, error) {
	written := 0
	for written < len(b) {
		n := min(len(b)-written, writeChunk)
		limit := c.l.cfg.WriteTimeout
		c.mu.Lock()
		if c.closed {
			limit = min(limit, closeLinger)
		}
		c.mu.Unlock()
		_ = c.Conn.SetWriteDeadline(time.Now().Add(limit))
		n, err := c.Conn.Write(b[written : written+n])
		written += n
		c.mu.Lock()
		c.account(-n)
		c.mu.Unlock()
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// drop disconnects a client that does not read, and says so.
func (c *boundedConn) drop(why error, queued int) {
	c.l.stats.clientsDropped.Add(1)
	c.l.stats.note(c.l.log, "client disconnected: it does not read what it is sent", "remote", c.RemoteAddr().String(),
		"queued_bytes", queued, "reason", why.Error())
	c.closeConn()
}

// Close closes the connection; bytes still queued (a DISCONNECT, a
// refusing CONNACK) get closeLinger to go out first. Reads end at once.
func (c *boundedConn) Close() error {
	c.attach.done()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	flushing := c.flushing
	c.mu.Unlock()
	if !flushing {
		c.closeConn()
		return nil
	}
	_ = c.Conn.SetWriteDeadline(time.Now().Add(closeLinger)) // a write blocked now gets no longer
	if cr, ok := c.Conn.(interface{ CloseRead() error }); ok {
		_ = cr.CloseRead()
	} else { // TLS: no half close; the read ends at its deadline
		_ = c.Conn.SetReadDeadline(time.Now())
	}
	return nil
}

// closeConn closes the socket and counts the connection gone, once.
func (c *boundedConn) closeConn() {
	c.closeOnce.Do(func() {
		_ = c.Conn.Close()
		c.l.open.Add(-1)
	})
}

// SetDeadline sets the read deadline only: mochi sets both from the
// client's keep-alive, and the writes have their own (WriteTimeout).
func (c *boundedConn) SetDeadline(t time.Time) error { return c.Conn.SetReadDeadline(t) }

// SetWriteDeadline is ignored: see SetDeadline.
func (c *boundedConn) SetWriteDeadline(time.Time) error { return nil }

// frameReader follows the MQTT framing of the bytes a client sends: a
// fixed header (a type byte, then the remaining length in 1 to 4 bytes
// of 7 bits each) and a body of that length. It reports a packet over max
// as soon as its length is known, before its body is read.
type frameReader struct {
	max int

	inHeader bool // reading the remaining length
	lenBytes int  // of the remaining length read so far
	length   int  // the remaining length read so far
	shift    uint
	bodyLeft int // body bytes still to come
}

// scan follows b. On a packet over max it returns how many bytes of b
// come before that packet's first byte in b (0 if it began in an
// earlier read) and the error.
func (f *frameReader) scan(b []byte) (int, *errPacketTooLarge) {
	start := 0 // where the current packet began in b
	for i := 0; i < len(b); {
		switch {
		case f.bodyLeft > 0:
			n := min(f.bodyLeft, len(b)-i)
			f.bodyLeft -= n
			i += n
		case !f.inHeader:
			start = i
			f.inHeader, f.lenBytes, f.length, f.shift = true, 0, 0, 0
			i++ // the type byte
		default:
			x := b[i]
			i++
			f.length |= int(x&0x7f) << f.shift
			f.shift += 7
			f.lenBytes++
			if x&0x80 != 0 && f.lenBytes < 4 {
				continue
			}
			f.inHeader = false
			if size := 1 + f.lenBytes + f.length; f.max > 0 && size > f.max {
				return start, &errPacketTooLarge{size: size, max: f.max}
			}
			f.bodyLeft = f.length
		}
	}
	return len(b), nil
}
