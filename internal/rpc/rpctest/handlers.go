package rpctest

import (
	"fmt"
	"slices"

	"github.com/eclipse/paho.golang/packets"
)

// connect handles the CONNECT that opens connection c. The broker serves one
// client at a time: a new CONNECT takes the connection slot over and closes
// the previous connection (keeping its session, as on a session take-over).
// It reports false if c was closed meanwhile.
func (b *Broker) connect(c *conn, cp *packets.Connect) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.conns[c]; !ok || b.closed {
		return false
	}
	if old := b.current; old != nil {
		delete(b.conns, old)
		b.current = nil
		old.close() // its readLoop's drop then finds it gone and leaves the session alone
	}

	id, assigned := cp.ClientID, ""
	if id == "" {
		b.assigned++
		id = fmt.Sprintf("rpctest-%d", b.assigned)
		assigned = id
	}
	var expiry uint32
	if cp.Properties != nil && cp.Properties.SessionExpiryInterval != nil {
		expiry = *cp.Properties.SessionExpiryInterval
	}
	s := b.sessions[id]
	present := s != nil && !cp.CleanStart // [MQTT-3.2.2-2] [MQTT-3.2.2-3]
	if !present {
		s = &session{clientID: id, inUse: map[uint16]bool{}}
		b.sessions[id] = s
	}
	s.expiry = expiry
	c.sess = s
	b.current = c
	b.last = s
	b.connects = append(b.connects, cp)

	maxQoS := byte(1)
	ack := &packets.Connack{SessionPresent: present, Properties: &packets.Properties{MaximumQOS: &maxQoS}}
	if assigned != "" {
		ack.Properties.AssignedClientID = assigned
	}
	if b.maxPacket > 0 {
		n := b.maxPacket
		ack.Properties.MaximumPacketSize = &n
	}
	if b.receiveMax > 0 {
		n := b.receiveMax
		ack.Properties.ReceiveMaximum = &n
	}
	c.send(encode(ack))

	// Resume the session: unacknowledged QoS 1 deliveries go out again in their
	// original order with the same packet ids, DUP set on those already sent
	// [MQTT-4.4.0-1]. Without redelivery, the sent ones are forgotten.
	kept := s.unacked[:0]
	for _, d := range s.unacked {
		if d.sent && b.noRedeliver {
			delete(s.inUse, d.id)
			continue
		}
		w := d.wire
		if d.sent {
			w = slices.Clone(w)
			w[0] |= 0x08 // DUP flag in the fixed header
		}
		c.send(w)
		d.sent = true
		kept = append(kept, d)
	}
	clear(s.unacked[len(kept):])
	s.unacked = kept
	b.notifyLocked()
	return true
}

func (b *Broker) onPublish(c *conn, p *packets.Publish) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pubs = append(b.pubs, p)
	if p.QoS == 1 {
		if a := pop(&b.pubAcks); !a.Drop {
			c.send(encode(&packets.Puback{PacketID: p.PacketID, ReasonCode: a.Reason, Properties: &packets.Properties{}}))
		}
	}
	b.notifyLocked()
}

func (b *Broker) onPuback(c *conn, p *packets.Puback) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.acks = append(b.acks, p.PacketID)
	if s := c.sess; s != nil {
		if i := slices.IndexFunc(s.unacked, func(d *delivery) bool { return d.id == p.PacketID }); i >= 0 {
			s.unacked = slices.Delete(s.unacked, i, i+1)
			delete(s.inUse, p.PacketID)
		}
	}
	b.notifyLocked()
}

func (b *Broker) onSubscribe(c *conn, p *packets.Subscribe) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a := pop(&b.subAcks)
	if a.Drop {
		return
	}
	reasons := make([]byte, len(p.Subscriptions))
	for i, sub := range p.Subscriptions {
		if a.Reason >= 0x80 {
			reasons[i] = a.Reason
			continue
		}
		reasons[i] = min(sub.QoS, 1) // granted QoS: this broker does not do QoS 2
		if !slices.Contains(c.sess.subs, sub.Topic) {
			c.sess.subs = append(c.sess.subs, sub.Topic)
		}
	}
	c.send(encode(&packets.Suback{PacketID: p.PacketID, Reasons: reasons, Properties: &packets.Properties{}}))
	b.notifyLocked()
}

func (b *Broker) onUnsubscribe(c *conn, p *packets.Unsubscribe) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a := pop(&b.unsubAcks)
	if a.Drop {
		return
	}
	reasons := make([]byte, len(p.Topics))
	for i, topic := range p.Topics {
		switch j := slices.Index(c.sess.subs, topic); {
		case a.Reason >= 0x80:
			reasons[i] = a.Reason
		case j < 0:
			reasons[i] = ReasonNoSubscriptionFound
		default:
			c.sess.subs = slices.Delete(c.sess.subs, j, j+1)
			reasons[i] = ReasonSuccess
		}
	}
	c.send(encode(&packets.Unsuback{PacketID: p.PacketID, Reasons: reasons, Properties: &packets.Properties{}}))
	b.notifyLocked()
}

// onDisconnect handles a client DISCONNECT; the connection is closed after it.
func (b *Broker) onDisconnect(c *conn, p *packets.Disconnect) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p.Properties != nil && p.Properties.SessionExpiryInterval != nil && c.sess != nil {
		c.sess.expiry = *p.Properties.SessionExpiryInterval
	}
}
