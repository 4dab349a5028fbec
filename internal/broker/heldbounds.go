package broker

import (
	"maps"
	"slices"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// The bounds on what the ledgers hold (held.go): admit before a delivery,
// makeRoom when the TCP clients hold Config.MaxHeldBytes, the sweep for
// the time bounds, and drop, which carries them out.

// admit reports whether a message may be delivered to cl (the guard asks
// before each delivery to a TCP client, and for each of its
// subscriptions): not to a client whose messages were dropped, nor to a
// session whose client left more than disconnectedHold ago, nor to a
// client holding Config.MaxInflightBytes unacknowledged; and, when the
// TCP clients hold Config.MaxHeldBytes, not before the one holding the
// most lost it (not at all if that is cl).
func (h *holdings) admit(cl *mqtt.Client) bool {
	l := ledgerOf(cl)
	if l == nil {
		return true
	}
	now := h.clock.Now()
	l.mu.Lock()
	dropped, left, held := l.dropped, l.left, l.bytes
	l.mu.Unlock()
	why := ""
	switch {
	case dropped:
		why = "what it held was dropped"
	case !left.IsZero() && now.Sub(left) >= disconnectedHold:
		why = "it left more than " + disconnectedHold.String() + " ago"
	case held >= int64(h.cfg.MaxInflightBytes):
		why = "its unacknowledged messages reach --broker-inflight-bytes (it does not acknowledge)"
	}
	if why == "" && h.total.Load() >= int64(h.cfg.MaxHeldBytes) && !h.makeRoom(cl) {
		why = "the clients hold --broker-held-bytes, and it the most"
	}
	if why == "" {
		return true
	}
	h.stats.messagesDropped.Add(1)
	h.stats.note(h.log, "message not delivered: "+why, "client", logText(cl.ID), "user", logText(string(cl.Properties.Username)),
		"remote", cl.Net.Remote, "held_bytes", held)
	return false
}

// makeRoom drops what the TCP client holding the most holds (its
// unacknowledged messages and its queue), while the clients hold
// Config.MaxHeldBytes; false if that client is cl.
func (h *holdings) makeRoom(cl *mqtt.Client) bool {
	h.room.Lock()
	defer h.room.Unlock()
	if h.total.Load() < int64(h.cfg.MaxHeldBytes) { // another delivery made room
		return true
	}
	// A client dropped a moment ago may still be counted: its last
	// bytes get closeLinger to go out. What such clients hold is on its
	// way out, so it is not made room for twice.
	var most *mqtt.Client
	var mostBytes, leaving int64
	for _, c := range h.srv.Clients.GetAll() {
		l := ledgerOf(c)
		if l == nil {
			continue
		}
		l.mu.Lock()
		held, dropped := l.bytes, l.dropped
		l.mu.Unlock()
		held += queuedOf(c)
		switch {
		case dropped:
			leaving += held
		case held > mostBytes:
			most, mostBytes = c, held
		}
	}
	if h.total.Load()-leaving < int64(h.cfg.MaxHeldBytes) {
		return true
	}
	if most == nil {
		return false
	}
	h.drop(most, holdsTheMost, "the clients over TCP hold --broker-held-bytes, and it the most", mostBytes)
	return most != cl
}

// sweep drops what the clients that do not acknowledge, and the sessions
// left longer than disconnectedHold ago, hold; it runs every
// sweepInterval while any ledger holds messages.
func (h *holdings) sweep() {
	now := h.clock.Now()
	h.mu.Lock()
	h.timer = nil
	ledgers := slices.Collect(maps.Keys(h.holding))
	h.mu.Unlock()
	for _, l := range ledgers {
		l.reconcile(h)
		l.mu.Lock()
		cl, why := l.cl, ""
		switch {
		case len(l.msgs) == 0:
		case l.dropped:
			why = "what it held was dropped" // a message kept as it was dropped
		case !l.left.IsZero():
			if now.Sub(l.left) >= disconnectedHold {
				why = "it left more than " + disconnectedHold.String() + " ago"
			}
		case !now.Before(latest(l.since, l.requestsUntil).Add(h.cfg.AckTimeout)):
			why = "it acknowledged none of the messages it holds for " + h.cfg.AckTimeout.String()
		}
		held := l.bytes
		l.mu.Unlock()
		if why != "" {
			h.drop(cl, notAcknowledging, why, held) // the code is sent only to a client still connected
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.holding) > 0 && h.timer == nil && !h.closed {
		h.timer = h.clock.AfterFunc(sweepInterval, h.sweep)
	}
}

// latest returns the later of a and b.
func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// reconcile uncounts the messages of l that mochi forgot without a hook,
// once it was marked dirty.
func (l *heldLedger) reconcile(h *holdings) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.dirty || l.cl == nil {
		return
	}
	l.dirty = false
	var gone []uint16
	for id := range l.msgs {
		if _, ok := l.cl.State.Inflight.Get(id); !ok {
			gone = append(gone, id)
		}
	}
	h.forget(l, gone)
}

// drop disconnects cl (if connected, with code) and drops what it holds,
// counted and logged with why; nothing more is kept for it.
func (h *holdings) drop(cl *mqtt.Client, code packets.Code, why string, held int64) {
	l := ledgerOf(cl)
	l.mu.Lock()
	l.dropped = true
	n := len(l.msgs)
	l.mu.Unlock()
	connected := !cl.Closed()
	if connected {
		h.stats.clientsDropped.Add(1)
		_ = h.srv.DisconnectClient(cl, code)
	}
	cl.ClearInflights() // runs OnQosDropped for each
	h.stats.messagesDropped.Add(uint64(n))
	if ok, leftOut := h.drops.Allow(time.Now()); ok {
		h.log.Warn("embedded broker: messages held for a client dropped: "+why, "client", logText(cl.ID),
			"user", logText(string(cl.Properties.Username)), "remote", cl.Net.Remote, "disconnected", connected,
			"messages", n, "held_bytes", held, "drops_not_logged", leftOut)
	}
}
