package broker

import (
	"context"
	"net"
	"sync"
)

// The host's own clients (its executor, its invoker for nested calls)
// reach the embedded broker in process: DialInProcess hands mochi one end
// of a memory pipe (mempipe.go), through a listener of its own beside the
// TCP one, and returns the other. The clients speak full MQTT v5 over it
// (properties, QoS 1, sessions, acks in order: mochi serves the pipe as
// it serves any connection), without a system call: no loopback TCP
// stack, no socket.

// pipeListener is a net.Listener whose connections are memory pipes.
type pipeListener struct {
	conns     chan *memConn
	closed    chan struct{}
	closeOnce sync.Once
	gate      *attachGate // the broker's (attach.go)
}

func newPipeListener(gate *attachGate) *pipeListener {
	return &pipeListener{conns: make(chan *memConn), closed: make(chan struct{}), gate: gate}
}

// Accept returns the broker's end of the next pipe.
func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		ticket, ok := l.gate.hand()
		if !ok { // the broker is closing
			_ = c.Close()
			return nil, net.ErrClosed
		}
		c.attach = ticket
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial makes a pipe, gives one end to Accept and returns the other.
func (l *pipeListener) dial(ctx context.Context) (net.Conn, error) {
	client, server := memPipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		_, _ = client.Close(), server.Close()
		return nil, net.ErrClosed
	case <-ctx.Done():
		_, _ = client.Close(), server.Close()
		return nil, ctx.Err()
	}
}

// pipeAddr is the address of the in-process listener.
type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "in-process" }

// DialInProcess connects to the broker through an in-memory pipe (see
// above). The connection is closed with the broker.
func (e *Embedded) DialInProcess(ctx context.Context) (net.Conn, error) {
	return e.pipes.dial(ctx)
}
