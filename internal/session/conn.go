package session

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
)

// lingerTimeout bounds how long closing a connection waits for the
// broker to close its side.
const lingerTimeout = 2 * time.Second

// dialBroker returns the dial of a broker URL (mqtt, tcp, tls, mqtts,
// ssl) with a brokerConn; TLS as auth says, its files read at each dial.
func dialBroker(auth Auth) DialFunc {
	return func(ctx context.Context, _ autopaho.ClientConfig, u *url.URL) (net.Conn, error) {
		var d net.Dialer
		switch strings.ToLower(u.Scheme) {
		case "mqtt", "tcp", "":
			c, err := d.DialContext(ctx, "tcp", u.Host)
			if err != nil {
				return nil, err
			}
			return newBrokerConn(c), nil
		case "tls", "mqtts", "ssl":
			cfg, err := auth.tlsConfig(u.Host)
			if err != nil {
				return nil, err
			}
			c, err := (&tls.Dialer{NetDialer: &d, Config: cfg}).DialContext(ctx, "tcp", u.Host)
			if err != nil {
				return nil, err
			}
			bc := newBrokerConn(c)
			bc.tls = true
			return bc, nil
		}
		return nil, fmt.Errorf("broker URL scheme %q: want mqtt, tcp, tls, mqtts or ssl", u.Scheme)
	}
}

// DialFunc is how a client reaches the broker (Config.Dial).
type DialFunc = func(ctx context.Context, cfg autopaho.ClientConfig, u *url.URL) (net.Conn, error)

// dialer is d, or dialBroker(auth) when d is nil, with every connection
// d makes a brokerConn (an in-process pipe gains as much from fewer,
// larger writes as a socket does).
func dialer(d DialFunc, auth Auth) DialFunc {
	if d == nil {
		return dialBroker(auth)
	}
	return func(ctx context.Context, cfg autopaho.ClientConfig, u *url.URL) (net.Conn, error) {
		c, err := d(ctx, cfg, u)
		if err != nil {
			return nil, err
		}
		return newBrokerConn(c), nil
	}
}

// brokerReadBuffer is the size of a brokerConn's read buffer: many
// requests fit in one read. maxGathered bounds what its writers may
// gather while one of them writes.
const (
	brokerReadBuffer = 32 << 10
	maxGathered      = 256 << 10
)

// brokerConn is the session's connection to the broker (the executor's
// and the invoker's).
// It saves system calls, which are most of what a request costs the
// host, and closes gracefully.
//
// Reads are buffered: paho reads a packet's fixed header a byte at a
// time, then its body, each a system call on a bare connection; through
// the buffer, one read takes in every packet the broker has sent.
//
// Writes are coalesced. paho writes a packet in pieces (a PUBLISH in
// four) under the connection's lock, which brokerConn provides
// (sync.Locker: the pieces of two packets never interleave). The pieces
// are gathered, and the goroutine that ends a packet (Unlock) sends
// everything gathered in one write, unless another goroutine is sending:
// then that one sends it too, in its next write, before it stops. So
// packets go out whole and in order, at once when the connection is
// idle (nothing waits for a timer), and many in one write when it is
// busy. A write error closes the connection: paho's reader sees it and
// reconnects.
//
// Close lets the broker read everything sent before it: it sends what is
// gathered (within lingerTimeout), shuts the writing side (after paho's DISCONNECT), reads and
// drops what the broker still sends (requests it will redeliver, as they
// are not acked) until the broker closes its side or lingerTimeout
// passes, and only then closes. Closing at once with unread data would
// send a reset, and a broker that meets it while writing (mosquitto:
// "Broken pipe") drops the connection without reading the acks that
// preceded the DISCONNECT: it would redeliver requests that were
// answered. Measured with TestGracefulRestartRunsNothingTwice: up to 50
// of 3,000 requests ran twice across two restarts without it.
type brokerConn struct {
	net.Conn
	r      *bufio.Reader // paho's one reader goroutine only
	packet sync.Mutex    // held from Lock to Unlock: one packet at a time

	mu       sync.Mutex
	sent     sync.Cond // signalled when a sender stops
	gathered []byte    // what is to be sent
	spare    []byte    // the buffer last sent, reused
	inPacket bool      // a packet is being gathered (Lock to Unlock)
	sending  bool      // a goroutine is writing to Conn
	err      error     // the first write error

	tls     bool                  // a TLS connection (dialBroker)
	readErr atomic.Pointer[error] // the first read error (refusal.go reads it)
}

func newBrokerConn(c net.Conn) *brokerConn {
	bc := &brokerConn{Conn: c, r: bufio.NewReaderSize(c, brokerReadBuffer)}
	bc.sent.L = &bc.mu
	return bc
}

func (c *brokerConn) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil {
		c.readErr.CompareAndSwap(nil, &err)
	}
	return n, err
}

// ReadByte reads from the buffer: paho's decoder (third_party) reads a
// packet's fixed header with it, without a call or an allocation per byte.
func (c *brokerConn) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err != nil {
		c.readErr.CompareAndSwap(nil, &err)
	}
	return b, err
}

// readError is the first error a read of c returned, or nil.
func (c *brokerConn) readError() error {
	if p := c.readErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Lock starts a packet (paho's packet writer takes it).
func (c *brokerConn) Lock() {
	c.packet.Lock()
	c.mu.Lock()
	c.inPacket = true
	c.mu.Unlock()
}

// Unlock ends a packet and sends what is gathered.
func (c *brokerConn) Unlock() {
	c.mu.Lock()
	c.inPacket = false
	c.mu.Unlock()
	c.packet.Unlock()
	c.send()
}

// Write gathers p; outside a packet (a write paho made without the lock)
// it is sent at once.
func (c *brokerConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return 0, c.err
	}
	c.gathered = append(c.gathered, p...)
	inPacket := c.inPacket
	c.mu.Unlock()
	if !inPacket {
		c.send()
	}
	return len(p), nil
}

// send writes what is gathered, and what is gathered meanwhile, unless
// another goroutine is at it; then it returns at once, or, when more
// than maxGathered waits, once the sender has written some (the
// broker's back-pressure reaches paho's writers, as it would without the
// gathering).
func (c *brokerConn) send() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.sending {
		if len(c.gathered) <= maxGathered || c.err != nil {
			return // the sender writes it before it stops
		}
		c.sent.Wait()
	}
	c.sending = true
	for len(c.gathered) > 0 && c.err == nil {
		out := c.gathered
		c.gathered = c.spare[:0]
		c.mu.Unlock()
		_, err := c.Conn.Write(out)
		c.mu.Lock()
		c.spare = nil
		if cap(out) <= maxGathered { // a large reply's buffer is not kept
			c.spare = out
		}
		if err != nil {
			c.err = err
			_ = c.Conn.Close() // paho's reader fails and reconnects
		}
		c.sent.Broadcast()
	}
	c.sending = false
	c.sent.Broadcast()
}

func (c *brokerConn) Close() error {
	// Nothing written from now on may wait longer than lingerTimeout: a
	// broker that stopped reading must not hold Close (nor a writer
	// stuck in Write, whom the deadline releases with an error).
	_ = c.Conn.SetWriteDeadline(time.Now().Add(lingerTimeout))
	c.send()
	c.mu.Lock()
	for c.sending {
		c.sent.Wait() // the sender stops by the deadline at the latest
	}
	c.mu.Unlock()
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		_ = c.Conn.SetReadDeadline(time.Now().Add(lingerTimeout))
		_, _ = io.Copy(io.Discard, c.Conn)
	}
	return c.Conn.Close()
}
