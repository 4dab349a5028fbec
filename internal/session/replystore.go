package session

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sync"
)

// replyStore is the session's store of the executor's own QoS 1
// publishes (its replies), kept until the broker acks them so that paho
// can send them again after a reconnect. paho's memory store encodes
// every publish into a buffer when it is stored, a second encoding of
// each reply besides the one written to the connection (~7 % of the
// host's CPU under load, profiled); nearly every stored reply is acked
// and deleted a moment later and never read. replyStore keeps the packet
// as paho gives it and encodes it only when paho reads it back, to send
// it again. That is safe because paho never changes a packet it has
// stored (a resend decodes what Get returns into a new packet), and the
// executor never changes a reply it published.
type replyStore struct {
	mu   sync.Mutex
	next int // order of Put: List returns the ids in it
	held map[uint16]storedPacket
}

type storedPacket struct {
	order  int
	packet io.WriterTo
}

func newReplyStore() *replyStore { return &replyStore{held: map[uint16]storedPacket{}} }

func (s *replyStore) Put(packetID uint16, _ byte, w io.WriterTo) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held[packetID] = storedPacket{order: s.next, packet: w}
	s.next++
	return nil
}

func (s *replyStore) Get(packetID uint16) (io.ReadCloser, error) {
	s.mu.Lock()
	p, ok := s.held[packetID]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("reply store: packet %d not found", packetID)
	}
	var b bytes.Buffer
	if _, err := p.packet.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("reply store: packet %d: %w", packetID, err)
	}
	return io.NopCloser(&b), nil
}

func (s *replyStore) Delete(packetID uint16) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.held[packetID]; !ok {
		return fmt.Errorf("reply store: delete packet %d: not found", packetID)
	}
	delete(s.held, packetID)
	return nil
}

func (s *replyStore) Quarantine(packetID uint16) error { return s.Delete(packetID) }

// List returns the ids held, in the order they were Put.
func (s *replyStore) List() ([]uint16, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]uint16, 0, len(s.held))
	for id := range s.held {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b uint16) int { return s.held[a].order - s.held[b].order })
	return ids, nil
}

func (s *replyStore) Reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.held)
	return nil
}
