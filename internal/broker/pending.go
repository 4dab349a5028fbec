package broker

import (
	"container/heap"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// The connections over the network (the TCP and TLS listeners) are held
// to two bounds, apart:
//
//   - Those logged in (the guard admitted their CONNECT): at most
//     Config.MaxClients. A CONNECT beyond it is refused, CONNACK 0x89.
//   - Those not logged in yet, whose CONNECT has not been read ("pending"):
//     at most maxPending (Config.MaxClients), and at most maxPendingPerSource
//     (a quarter of it) from one source (an IPv4 address, an IPv6 /64:
//     sourceOf). A connection beyond either bound is not refused: room is
//     made by closing the pending connection that has waited longest of
//     the source that holds the most pending connections (beyond the
//     per-source bound, its own source's) and has sent nothing the
//     broker has not read yet: a connection whose CONNECT is there, not
//     read yet (mochi reads it when its goroutine for the connection runs,
//     which may come after many accepts under a flood), is passed over.
//
// Why apart, and why that rule: a socket that never sends its CONNECT
// costs its sender nothing. Counted with the clients, ~1,010 of them,
// re-opened as the broker closed them at connectTimeout, took every
// client's place (11 of 12 correct logins got 0x89). Refusing the
// newcomer once the pending bound is full would lock clients out the same
// way. Closing the oldest of the largest source instead makes a flood
// close its own sockets, while a client, which sends its CONNECT within
// milliseconds of connecting, has left the table long before its turn
// could come: from another source it is never closed while the flood's
// source holds more pending connections than its own; from the flood's
// own source, only if its CONNECT has not arrived when every older one
// of the flood's is gone.
//
// A connection leaves the table when its CONNECT has been read (the
// guard's OnConnect: from then on the login's own bounds hold it,
// logins.go) or when it closes; one whose CONNECT does not come within
// Config.connectTimeout is closed, and one picked to close whose bytes
// arrive before it is is spared (closedPending). A pending connection
// the broker closes ends quietly in mochi's log (pendingClosedError); the
// broker logs it itself, at most once a second with the number left out,
// and counts it (Stats.PendingClosed).
//
// Concurrency: the accept loops (one per listener), each connection's
// goroutine in mochi (Read, OnConnect) and whoever closes a connection
// change the counts under netConns.mu. A connection to close is picked
// under it and closed after, by setting its read deadline to now: mochi's
// read of it ends, and mochi closes it; nothing waits on a socket under
// the lock.

// netConns counts the connections over the network: the pending ones in
// a table by source, the logged-in ones.
type netConns struct {
	maxClients, maxPending, maxPerSource int
	connectTimeout                       time.Duration       // Config.connectTimeout
	errNoConnect                         *pendingClosedError // the end of a connection whose CONNECT did not come in time
	stats                                *stats
	log                                  *slog.Logger

	mu      sync.Mutex
	open    int // accepted and not closed
	clients int // admitted and not closed
	pending int // in the table
	sources map[netip.Prefix]*pendingSource
	bySize  sourceHeap // the sources with pending connections, the one to take room from first
	seq     uint64     // the last pending connection's number (accept order)
}

// maxPending bounds the connections waiting for their CONNECT: as many as
// the clients (with them, the 2 × MaxClients open connections the broker
// held before the two were told apart).
func maxPending(maxClients int) int { return maxClients }

// maxPendingPerSource bounds one source's share of them: a quarter, so
// that a host behind one address (a NAT) may have many connections
// handshaking at once, and one source alone never holds them all.
func maxPendingPerSource(maxClients int) int { return max(1, maxPending(maxClients)/4) }

func newNetConns(cfg *Config, st *stats, log *slog.Logger) *netConns {
	return &netConns{maxClients: cfg.MaxClients, maxPending: maxPending(cfg.MaxClients),
		maxPerSource: maxPendingPerSource(cfg.MaxClients), connectTimeout: cfg.connectTimeout,
		errNoConnect: &pendingClosedError{"none within " + cfg.connectTimeout.String()},
		stats:        st, log: log, sources: map[netip.Prefix]*pendingSource{}}
}

// connState is where a connection is in its life (netConns.mu).
type connState uint8

const (
	connPending       connState = iota // accepted, its CONNECT not read: in the table
	connClosedPending                  // closed by the broker before its CONNECT was read
	connLoggingIn                      // its CONNECT is being checked (OnConnect)
	connAdmitted                       // logged in: counted in clients
	connGone                           // closed
)

// pendingLink is a connection's state and, while pending, its place in
// its source's list (netConns.mu).
type pendingLink struct {
	state      connState
	deadline   time.Time           // its connect timeout
	closedWhy  *pendingClosedError // connClosedPending: why
	source     *pendingSource
	seq        uint64
	prev, next *boundedConn // in its source's list, oldest first
}

// pendingSource is one source's pending connections, oldest first.
type pendingSource struct {
	prefix         netip.Prefix
	oldest, newest *boundedConn
	n              int
	index          int // in netConns.bySize
}

// pendingClosedError ends a connection the broker closed before its
// CONNECT was read. It is io.EOF to mochi (errors.Is): mochi logs a
// connection that ended with EOF at debug (quietEOF), and the broker has
// logged this one itself, rate-limited.
type pendingClosedError struct{ why string }

func (e *pendingClosedError) Error() string { return "connection closed before its CONNECT: " + e.why }

func (e *pendingClosedError) Unwrap() error { return io.EOF }

// maxSkipUnread bounds the connections closeOldest looks at (a look is a
// system call, under the lock every accept takes): a source whose every
// connection has sent something costs no more than a few looks.
const maxSkipUnread = 8

// errRoomMade ends a pending connection closed to make room.
var errRoomMade = &pendingClosedError{"it waited longest of the source holding the most connections not logged in, and the bound on those was reached"}

// wait counts c, just accepted, as pending until deadline (its read
// deadline: the connect timeout), and makes room if that passes a bound.
func (n *netConns) wait(c *boundedConn, deadline time.Time) {
	n.mu.Lock()
	n.open++
	c.link = pendingLink{deadline: deadline}
	closing := n.enter(c)
	n.mu.Unlock()
	for _, v := range closing {
		_ = v.Conn.SetReadDeadline(time.Now()) // mochi's read ends: closedPending
	}
}

// enter puts c in the table, newest of its source, and takes out those
// to close to make room, returned. n.mu is held.
func (n *netConns) enter(c *boundedConn) (closing []*boundedConn) {
	src := sourceOf(c.RemoteAddr())
	s := n.sources[src]
	n.seq++
	c.link.state, c.link.seq, c.link.closedWhy = connPending, n.seq, nil
	if s == nil {
		s = &pendingSource{prefix: src, oldest: c, newest: c, n: 1}
		c.link.source = s
		n.sources[src] = s
		heap.Push(&n.bySize, s)
	} else {
		c.link.source, c.link.prev = s, s.newest
		s.newest.link.next = c
		s.newest = c
		s.n++
		heap.Fix(&n.bySize, s.index)
	}
	n.pending++
	if s.n > n.maxPerSource {
		closing = append(closing, n.closeOldest(s))
	}
	if n.pending > n.maxPending {
		closing = append(closing, n.closeOldest(n.bySize[0]))
	}
	return closing
}

// closeOldest takes the connection of s that has waited longest, of
// those that sent nothing unread (of its oldest maxSkipUnread; if each of
// them has, the oldest), out of the table, as closed. n.mu is held.
func (n *netConns) closeOldest(s *pendingSource) *boundedConn {
	c := s.oldest
	skipped := 0
	for r := c; r != nil && skipped < maxSkipUnread; r = r.link.next {
		if !hasUnread(r.Conn) {
			c = r
			break
		}
		skipped++
	}
	n.unlink(c)
	c.link.state, c.link.closedWhy = connClosedPending, errRoomMade
	return c
}

// unlink takes a pending connection out of the table. n.mu is held.
func (n *netConns) unlink(c *boundedConn) {
	l := &c.link
	s := l.source
	if l.prev != nil {
		l.prev.link.next = l.next
	} else {
		s.oldest = l.next
	}
	if l.next != nil {
		l.next.link.prev = l.prev
	} else {
		s.newest = l.prev
	}
	l.prev, l.next = nil, nil
	s.n--
	n.pending--
	if s.n == 0 {
		heap.Remove(&n.bySize, s.index)
		delete(n.sources, s.prefix)
	} else {
		heap.Fix(&n.bySize, s.index)
	}
}

// loggingIn takes c out of the table: its CONNECT was read. One closed
// as pending meanwhile (its CONNECT was read just before) logs in as well:
// the room it held was given already. False when c is closed.
func (n *netConns) loggingIn(c *boundedConn) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch c.link.state {
	case connPending:
		n.unlink(c)
	case connClosedPending:
	default:
		return c.link.state == connLoggingIn
	}
	c.link.state = connLoggingIn
	return true
}

// full reports whether Config.MaxClients clients are logged in: the
// cheap refusal, before a login's checks.
func (n *netConns) full() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.clients >= n.maxClients
}

// admit counts c, whose login passed, among the clients; false when
// Config.MaxClients are logged in already, or c is closed.
func (n *netConns) admit(c *boundedConn) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if c.link.state != connLoggingIn || n.clients >= n.maxClients {
		return false
	}
	n.clients++
	c.link.state = connAdmitted
	return true
}

// gone forgets c, closed.
func (n *netConns) gone(c *boundedConn) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch c.link.state {
	case connGone:
		return
	case connPending:
		n.unlink(c)
	case connAdmitted:
		n.clients--
	}
	n.open--
	c.link.state = connGone
}

// closedPending is the error mochi gets for a read of c that ended with
// err, when c is a pending connection the broker closed (to make room)
// or whose CONNECT did not come in time; nil otherwise (err stands).
//
// A connection picked to close whose bytes have come since it was picked
// (its CONNECT, which a client sends at once, but the flood's newer
// connections came faster) is spared instead: it enters the table again,
// newest of its source, and retry says to read again. A connection
// sending a byte now and then to be spared is still closed at its
// connect timeout. The handshake of a TLS connection cannot be read again
// (crypto/tls keeps its error): inHandshake says it failed.
func (n *netConns) closedPending(c *boundedConn, err error, inHandshake bool) (_ *pendingClosedError, retry bool) {
	if err == nil {
		return nil, false
	}
	var ne net.Error
	var closing []*boundedConn
	n.mu.Lock()
	switch st := c.link.state; {
	case st == connClosedPending && c.link.closedWhy == errRoomMade && !inHandshake && hasUnread(c.Conn):
		closing = n.enter(c)
		n.mu.Unlock()
		_ = c.Conn.SetReadDeadline(c.link.deadline)
		for _, v := range closing {
			_ = v.Conn.SetReadDeadline(time.Now())
		}
		return nil, true
	case st == connClosedPending:
		why := c.link.closedWhy
		pending, source := n.pending, c.link.source
		n.mu.Unlock()
		n.stats.pendingClosed.Add(1)
		n.stats.notePending(n.log, "connection closed before its CONNECT: room made for a newer one", "remote", c.RemoteAddr().String(),
			"source", source.prefix.String(), "pending", pending, "max_pending", n.maxPending, "max_pending_per_source", n.maxPerSource)
		return why, false
	case st == connPending && errors.As(err, &ne) && ne.Timeout():
		n.unlink(c)
		c.link.state, c.link.closedWhy = connClosedPending, n.errNoConnect
		n.mu.Unlock()
		n.stats.pendingClosed.Add(1)
		n.stats.notePending(n.log, "connection closed: no CONNECT within "+n.connectTimeout.String(), "remote", c.RemoteAddr().String())
		return n.errNoConnect, false
	}
	n.mu.Unlock()
	return nil, false
}

// counts returns the clients logged in, the connections pending and
// those open (for the tests).
func (n *netConns) counts() (clients, pending, open int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.clients, n.pending, n.open
}

// sourceHeap orders the sources with pending connections: the one
// holding the most first, and of those the one whose oldest connection
// came first.
type sourceHeap []*pendingSource

func (h sourceHeap) Len() int { return len(h) }

func (h sourceHeap) Less(i, j int) bool {
	if h[i].n != h[j].n {
		return h[i].n > h[j].n
	}
	return h[i].oldest.link.seq < h[j].oldest.link.seq
}

func (h sourceHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *sourceHeap) Push(x any) {
	s := x.(*pendingSource)
	s.index = len(*h)
	*h = append(*h, s)
}

func (h *sourceHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	s.index = -1
	return s
}
