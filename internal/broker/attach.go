package broker

import "sync"

// mochi's attachClient adds to its listeners' WaitGroup (ClientsWg) on the
// goroutine that serves a new connection, before it first reads from it,
// and Server.Close waits on that WaitGroup (Listeners.CloseAll). A
// connection accepted just before the broker closes can make that Add
// run while Close waits: a misuse of the WaitGroup that the race detector
// reports, and a client Close may not wait for. So the broker's listeners
// count the connections they hand to mochi until each is first read from
// (mochi's Add is before that) or closed, and Close first shuts the gate:
// from then on no connection is handed, and Close waits for the count to
// drop to zero before it lets mochi wait. Every Add then happens before
// mochi's Wait.

// attachGate counts the connections handed to mochi and not yet read from.
type attachGate struct {
	mu     sync.Mutex
	handed int
	shut   bool
	idle   chan struct{} // closed once shut with none handed
}

func newAttachGate() *attachGate { return &attachGate{idle: make(chan struct{})} }

// hand counts a connection about to be handed to mochi and returns its
// ticket; false once the gate is shut (the connection must be closed).
func (g *attachGate) hand() (attachTicket, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut {
		return attachTicket{}, false
	}
	g.handed++
	return attachTicket{gate: g, once: new(sync.Once)}, true
}

func (g *attachGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.handed--
	if g.shut && g.handed == 0 {
		close(g.idle)
	}
}

// shutAndWait hands no more connections and waits until every connection
// handed has been read from or closed.
func (g *attachGate) shutAndWait() {
	g.mu.Lock()
	if !g.shut {
		g.shut = true
		if g.handed == 0 {
			close(g.idle)
		}
	}
	g.mu.Unlock()
	<-g.idle
}

// attachTicket is one connection's place in its gate's count, given up at
// its first read or its close, whichever comes first. The zero ticket
// counts nothing.
type attachTicket struct {
	gate *attachGate
	once *sync.Once
}

func (t attachTicket) done() {
	if t.gate != nil {
		t.once.Do(t.gate.release)
	}
}
