package broker

import (
	"maps"
	"slices"
	"strings"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// The hooks through which mochi tells holdings what it keeps for each
// client and what it forgets (held.go), and two of mochi's ways with
// what it keeps that the host corrects: a message held kept the whole
// packet it was read from (OnPublish), and a message sent once a
// client's Receive Maximum let it was forgotten with the quota it took
// (OnPacketSent, OnPacketRead).

// OnPublish gives a PUBLISH strings of its own. mochi decodes a packet's
// strings (its topic, response topic, content type, user properties) as
// views of the buffer it read the packet into, and copies only the
// payload into what it keeps for a subscriber: each message held kept
// the whole packet it was read from as well, twice its size (300 replies
// of 1 MiB held: +129 MiB of heap for 64 MiB of messages).
func (h *holdings) OnPublish(_ *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	pk.TopicName = strings.Clone(pk.TopicName)
	p := &pk.Properties
	p.ResponseTopic, p.ContentType = strings.Clone(p.ResponseTopic), strings.Clone(p.ContentType)
	if len(p.User) > 0 {
		user := make([]packets.UserProperty, len(p.User))
		for i, u := range p.User {
			user[i] = packets.UserProperty{Key: strings.Clone(u.Key), Val: strings.Clone(u.Val)}
		}
		p.User = user
	}
	return pk, nil
}

// OnQosPublish counts a PUBLISH mochi keeps until cl acknowledges it (or
// sends again: a session resumed).
func (h *holdings) OnQosPublish(cl *mqtt.Client, pk packets.Packet, _ int64, _ int) {
	l := ledgerOf(cl)
	if l == nil || pk.FixedHeader.Type != packets.Publish {
		return
	}
	var until time.Time
	if pk.Properties.ResponseTopic != "" && pk.Expiry > 0 {
		until = time.Unix(pk.Expiry, 0)
	}
	h.add(l, cl, pk.PacketID, messageBytes(&pk), until)
}

// OnQosComplete uncounts a message cl acknowledged.
func (h *holdings) OnQosComplete(cl *mqtt.Client, pk packets.Packet) {
	if l := ledgerOf(cl); l != nil {
		h.remove(l, pk.PacketID, true)
	}
}

// OnQosDropped uncounts a message mochi dropped (expired, or its session
// cleared).
func (h *holdings) OnQosDropped(cl *mqtt.Client, pk packets.Packet) {
	if l := ledgerOf(cl); l != nil {
		h.remove(l, pk.PacketID, false)
	}
}

// OnPacketSent uncounts a message mochi sends once cl's Receive Maximum
// lets it (one it kept with Expiry -1 while the quota was spent): mochi
// forgets it right after, without a hook (a session's messages sent
// again at a reconnection, Dup, are kept). So mochi would not know the
// client's PUBACK for it either, and never give back its quota: a
// client with Receive Maximum 1 got two messages and then nothing, for
// good. The message is remembered until that PUBACK (OnPacketRead).
func (h *holdings) OnPacketSent(cl *mqtt.Client, pk packets.Packet, _ []byte) {
	if pk.FixedHeader.Type != packets.Publish || pk.FixedHeader.Qos != 1 || pk.Expiry >= 0 || pk.FixedHeader.Dup {
		return
	}
	l := ledgerOf(cl)
	if l == nil {
		h.quotaMu.Lock()
		defer h.quotaMu.Unlock()
		if h.sentOnQuota == nil {
			h.sentOnQuota = map[*mqtt.Client]map[uint16]bool{}
		}
		if h.sentOnQuota[cl] == nil {
			h.sentOnQuota[cl] = map[uint16]bool{}
		}
		h.sentOnQuota[cl][pk.PacketID] = true
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sentOnQuota == nil {
		l.sentOnQuota = map[uint16]bool{}
	}
	l.sentOnQuota[pk.PacketID] = true
	h.forget(l, []uint16{pk.PacketID})
}

// OnPacketRead gives back the quota of a message sent once cl's Receive
// Maximum let it (OnPacketSent) when cl acknowledges it, before mochi
// processes the PUBACK (which then sends the next message waiting), and
// counts the acknowledgement.
func (h *holdings) OnPacketRead(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if pk.FixedHeader.Type != packets.Puback {
		return pk, nil
	}
	if l := ledgerOf(cl); l != nil {
		l.mu.Lock()
		if l.sentOnQuota[pk.PacketID] {
			delete(l.sentOnQuota, pk.PacketID)
			l.since = h.clock.Now()
			cl.State.Inflight.IncreaseSendQuota()
		}
		l.mu.Unlock()
		return pk, nil
	}
	h.quotaMu.Lock()
	if sent := h.sentOnQuota[cl]; sent[pk.PacketID] {
		delete(sent, pk.PacketID)
		cl.State.Inflight.IncreaseSendQuota()
	}
	h.quotaMu.Unlock()
	return pk, nil
}

// OnPublishDropped marks cl's ledger for a check: mochi's packet queue for
// cl was full, and it forgot the message (if it kept one) without a hook.
func (h *holdings) OnPublishDropped(cl *mqtt.Client, _ packets.Packet) {
	if l := ledgerOf(cl); l != nil {
		l.mu.Lock()
		l.dirty = true
		l.mu.Unlock()
	}
}

// OnSessionEstablish carries over to cl, a client resuming a session,
// how long the session's last client held messages without
// acknowledging any while it was connected (mochi runs it before it hands
// the session's messages over, and sends them again).
func (h *holdings) OnSessionEstablish(cl *mqtt.Client, pk packets.Packet) {
	l := ledgerOf(cl)
	if l == nil || pk.Connect.Clean {
		return
	}
	prev, ok := h.srv.Clients.Get(cl.ID)
	if !ok || prev == cl {
		return
	}
	pl := ledgerOf(prev)
	if pl == nil {
		return
	}
	pl.mu.Lock()
	var silent time.Duration
	if len(pl.msgs) > 0 && !pl.dropped {
		end := pl.left
		if end.IsZero() { // taken over while connected
			end = h.clock.Now()
		}
		silent = max(0, end.Sub(latest(pl.since, pl.requestsUntil)))
	}
	pl.mu.Unlock()
	l.mu.Lock()
	l.silentBefore = silent
	l.mu.Unlock()
}

// OnDisconnect notes when cl left: its session keeps what it holds for
// disconnectedHold from then.
func (h *holdings) OnDisconnect(cl *mqtt.Client, _ error, _ bool) {
	if l := ledgerOf(cl); l != nil {
		l.mu.Lock()
		l.left = h.clock.Now()
		l.mu.Unlock()
		return
	}
	h.quotaMu.Lock()
	delete(h.sentOnQuota, cl) // a client that comes back is a new one
	h.quotaMu.Unlock()
}

// OnClientExpired uncounts what an expired session held: mochi forgets
// the client without clearing its messages.
func (h *holdings) OnClientExpired(cl *mqtt.Client) {
	if l := ledgerOf(cl); l != nil {
		l.mu.Lock()
		l.dropped = true
		h.forget(l, slices.Collect(maps.Keys(l.msgs)))
		l.mu.Unlock()
	}
}
