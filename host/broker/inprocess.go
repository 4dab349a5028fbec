package broker

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
)

// The host's own clients (its executor, its invoker for nested calls)
// reach the embedded broker in process: DialInProcess hands mochi one end
// of a connected socket pair, through a listener of its own beside the
// TCP one, and returns the other. The clients speak full MQTT v5 over it
// (properties, QoS 1, sessions, acks in order: mochi serves the pair as
// it serves any socket), without the loopback TCP stack a connection to
// itself costs.

// pipeListener is a net.Listener whose connections are socket pairs made
// in process.
type pipeListener struct {
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept returns the broker's end of the next pipe.
func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
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
	client, server, err := socketPair()
	if err != nil {
		return nil, err
	}
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

// socketPair returns the two ends of a connected pair of Unix stream
// sockets. Not net.Pipe: its writes wait for the reader, and the broker
// and paho each have a goroutine that reads only once its write went
// out; through a synchronous pipe the two waited for each other
// (measured: the executor stalled under 16 requests in flight). A socket
// pair has the kernel's buffers between them, as TCP has, without the
// TCP stack.
func socketPair() (net.Conn, net.Conn, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("broker: in-process connection: %w", err)
	}
	var conns [2]net.Conn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "cmdhost-in-process")
		c, err := net.FileConn(f) // duplicates fd
		_ = f.Close()
		if err != nil {
			if i == 1 {
				_ = conns[0].Close()
			} else {
				_ = syscall.Close(fds[1])
			}
			return nil, nil, fmt.Errorf("broker: in-process connection: %w", err)
		}
		conns[i] = c
	}
	return conns[0], conns[1], nil
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
