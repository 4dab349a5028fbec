package session

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	pahosession "github.com/eclipse/paho.golang/paho/session"
)

// ackLedger counts the acks of the connection: made (Session.Ack marked a
// request acked, Client.Ack) and sent (paho wrote the PUBACK). paho sends
// manual acks from a ticker, in receipt order, and a disconnect drops the
// ones not sent yet: the broker then redelivers requests that were
// answered, and a restarted host, whose dedup store is new, would run them
// again. The executor's Stop waits for sent to catch up with made
// (Session.FlushAcks) before it disconnects.
//
// It wraps the client's session, through which paho writes every PUBACK
// (SessionManager.Ack). When a connection is lost its unsent acks are
// moot (the broker redelivers those requests anyway): made is set back to
// sent. Client.Ack is called under mu, so that an ack made just before
// that reset is counted before it; Ack below takes no lock (paho calls it
// under the ack tracker's lock, which Client.Ack takes under mu).
type ackLedger struct {
	pahosession.SessionManager

	mu       sync.Mutex
	made     int64
	sent     atomic.Int64
	progress chan struct{} // one slot: a PUBACK was written
}

func newAckLedger(s pahosession.SessionManager) *ackLedger {
	return &ackLedger{SessionManager: s, progress: make(chan struct{}, 1)}
}

// ack marks pub acked on the client that delivered it, and counts it.
func (l *ackLedger) ack(client *paho.Client, pub *paho.Publish) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := client.Ack(pub); err != nil {
		return err
	}
	l.made++
	return nil
}

// Ack writes the PUBACK (paho's ack tracker calls it, in receipt order).
func (l *ackLedger) Ack(pb *packets.Publish) error {
	err := l.SessionManager.Ack(pb)
	l.sent.Add(1)
	select {
	case l.progress <- struct{}{}:
	default:
	}
	return err
}

// ConnectionLost forgets the lost connection's unsent acks.
func (l *ackLedger) ConnectionLost(dp *packets.Disconnect) error {
	l.mu.Lock()
	l.made = l.sent.Load()
	l.mu.Unlock()
	return l.SessionManager.ConnectionLost(dp)
}

// flushed waits until every ack made has been sent, or ctx ends.
func (l *ackLedger) flushed(ctx context.Context) error {
	for {
		l.mu.Lock()
		unsent := l.made - l.sent.Load()
		l.mu.Unlock()
		if unsent <= 0 {
			return nil
		}
		select {
		case <-l.progress:
		case <-ctx.Done():
			return fmt.Errorf("%d acks not sent: %w", unsent, ctx.Err())
		}
	}
}
