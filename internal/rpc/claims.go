package rpc

import (
	"sync"

	"github.com/cmdhost/cmdhost/cache"
)

// claimQueue takes the claims of a shared dedup store (Redis) off paho's
// receive goroutine. With the store in memory, a claim costs a map
// insert and is made as a request arrives. In Redis it is a round trip:
// made there, one after another, the claims would cap the executor at
// one request per round trip. So requests queue here in arrival order,
// and one goroutine at a time claims everything queued in one pipeline
// (cache.BatchClaimer) and admits the requests in order: their FIFO
// slots, acks and the cancels among them keep the order of arrival. A
// request alone is claimed at once: nothing waits for a timer.
type claimQueue struct {
	e      *Executor
	claims cache.BatchClaimer[*reply]

	mu      sync.Mutex
	queued  []queuedClaim
	running bool // a goroutine is claiming; it takes what is queued
}

type queuedClaim struct {
	in  *incoming
	key cache.Key // none for a cancel
}

func newClaimQueue(e *Executor) *claimQueue {
	bc, ok := e.dedup.(cache.BatchClaimer[*reply])
	if !ok {
		return nil
	}
	return &claimQueue{e: e, claims: bc}
}

// add queues a request (or a cancel) and starts a claiming goroutine if
// none runs.
func (q *claimQueue) add(in *incoming, key cache.Key) {
	q.mu.Lock()
	q.queued = append(q.queued, queuedClaim{in, key})
	start := !q.running
	q.running = true
	q.mu.Unlock()
	if start {
		go q.run()
	}
}

// run claims and admits what is queued, batch after batch, until the
// queue is empty.
func (q *claimQueue) run() {
	for {
		q.mu.Lock()
		batch := q.queued
		q.queued = nil
		if len(batch) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		var reqs []cache.ClaimRequest
		for _, c := range batch {
			if !c.in.cancel {
				r := cache.ClaimRequest{Invoker: q.e.invokerOf(c.in), Key: c.key, Expiry: c.in.expiry,
					Idempotent: c.in.route.cmd.Idempotent}
				if q.e.carrier != nil {
					r.Reuse, _ = q.e.reuseKey(c.in) // looked up in the claim's round trip
				}
				reqs = append(reqs, r)
			}
		}
		results := q.claims.ClaimAll(reqs)
		for _, c := range batch {
			if c.in.cancel {
				q.e.cancel(c.in)
				continue
			}
			r := results[0]
			results = results[1:]
			if r.ReuseAsked {
				c.in.reuseAsked = true
				if r.ReuseHit {
					c.in.reused = r.Reused
				}
			}
			q.e.admitClaimed(c.in, c.key, r.Entry, r.First, r.Err)
		}
	}
}
