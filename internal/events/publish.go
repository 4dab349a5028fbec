package events

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"
)

// Publisher sends events as telemetry (serve --events publishes them as
// JSON on cmdhost/{executorId}/events). Emit never blocks the call that
// timed out: events wait in a bounded queue for one goroutine that
// publishes them in order; when the queue is full (the broker is gone or
// slow) an event is dropped and counted rather than held.
type Publisher struct {
	publish func(ctx context.Context, payload []byte) error
	queue   chan Event
	dropped atomic.Int64
	failed  atomic.Int64
	done    chan struct{}
	// mu orders Emit's send against Close's close of queue: Emit holds
	// it shared, Close exclusively, so no send can hit a closed queue.
	mu     sync.RWMutex
	closed bool
}

// DefaultQueue is the number of events a Publisher holds for publishing.
const DefaultQueue = 1024

// NewPublisher starts a publisher that hands each event's JSON to publish,
// which should give up by its context's deadline (5 s an event).
func NewPublisher(publish func(ctx context.Context, payload []byte) error) *Publisher {
	p := &Publisher{publish: publish, queue: make(chan Event, DefaultQueue), done: make(chan struct{})}
	go p.run()
	return p
}

// Emit queues ev, or drops it when the queue is full or the publisher
// closed.
func (p *Publisher) Emit(ev Event) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		p.dropped.Add(1)
		return
	}
	select {
	case p.queue <- ev:
	default:
		p.dropped.Add(1)
	}
}

func (p *Publisher) run() {
	defer close(p.done)
	for ev := range p.queue {
		payload, err := json.Marshal(ev)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err = p.publish(ctx, payload)
			cancel()
		}
		if err != nil {
			p.failed.Add(1)
		}
	}
}

// Dropped returns how many events were dropped because the queue was
// full; Failed how many could not be published.
func (p *Publisher) Dropped() int64 { return p.dropped.Load() }

// Failed returns how many events could not be published.
func (p *Publisher) Failed() int64 { return p.failed.Load() }

// Close stops taking events (later ones are dropped) and waits, until ctx
// is done, for the queued ones to be published.
func (p *Publisher) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.queue)
	}
	p.mu.Unlock()
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
