// Package loadgen is the request generator of make bench-e2e: one MQTT v5
// client keeping a fixed number of requests in flight against an
// executor, each with unique correlation data, QoS 1 and a message expiry,
// timing each from its publish to its reply. It is the same for every
// executor it measures, so that their figures compare.
//
// Each of the requests in flight is sent by a worker with a connection
// and a response topic of its own: W invokers, as the executor (or the
// broker, which knows each client's id) sees them. An executor that keeps
// each request's dedup entry until its expiry and bounds what one invoker
// may hold (cmdhost does both; on its embedded broker an invoker is its
// MQTT client) would refuse one invoker sending tens of thousands of
// requests within an expiry; so would it a real one.
package loadgen

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// Config is one measurement.
type Config struct {
	// Broker is the broker's mqtt://HOST:PORT.
	Broker *url.URL
	// Topic is the request topic; Payload, each request's payload.
	Topic   string
	Payload []byte
	// Topics, when not empty, are request topics each request picks one
	// of at random, in place of Topic: calls spread over many commands.
	Topics []string
	// Requests is how many requests to time, after Warmup untimed ones;
	// InFlight, how many are outstanding at any time.
	Requests, Warmup, InFlight int
	// Expiry is each request's message expiry (default 2 s: an executor
	// keeps a request's dedup entry about twice that).
	Expiry time.Duration
}

// Result is a measurement's outcome.
type Result struct {
	Requests int
	Elapsed  time.Duration
	P50, P99 time.Duration
}

// Rate is the requests per second.
func (r Result) Rate() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// Run connects, sends cfg.Warmup then cfg.Requests requests, cfg.InFlight
// at a time, and disconnects. A reply whose __stat is not 200 (or that
// does not come within its expiry) fails the run.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Expiry == 0 {
		cfg.Expiry = 2 * time.Second
	}
	g := &generator{cfg: cfg, waiting: map[uint64]chan error{}}
	var idb [8]byte
	binary.BigEndian.PutUint64(idb[:], uint64(time.Now().UnixNano()))
	g.respTopic = fmt.Sprintf("bench/resp/%x", idb)
	defer g.disconnect()
	for w := range cfg.InFlight {
		c, err := g.connect(ctx, fmt.Sprintf("bench-%x-%d", idb, w), fmt.Sprintf("%s/%d", g.respTopic, w))
		if err != nil {
			return Result{}, err
		}
		g.clients = append(g.clients, c)
	}
	if _, err := g.send(ctx, cfg.Warmup); err != nil {
		return Result{}, fmt.Errorf("warm-up: %w", err)
	}
	start := time.Now()
	lat, err := g.send(ctx, cfg.Requests)
	elapsed := time.Since(start)
	if err != nil {
		return Result{}, err
	}
	slices.Sort(lat)
	return Result{Requests: len(lat), Elapsed: elapsed, P50: lat[len(lat)/2], P99: lat[len(lat)*99/100]}, nil
}

type generator struct {
	cfg       Config
	clients   []*paho.Client // a worker's, by its number
	respTopic string
	next      atomic.Uint64 // correlation data: a counter, unique per client
	mu        sync.Mutex
	waiting   map[uint64]chan error
}

// connect connects one worker's client as id and subscribes to its
// response topic.
func (g *generator) connect(ctx context.Context, id, respTopic string) (*paho.Client, error) {
	conn, err := net.Dial("tcp", g.cfg.Broker.Host)
	if err != nil {
		return nil, err
	}
	c := paho.NewClient(paho.ClientConfig{Conn: conn, ClientID: id,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){g.receive}})
	if _, err := c.Connect(ctx, &paho.Connect{KeepAlive: 30, CleanStart: true, ClientID: id,
		Properties: &paho.ConnectProperties{RequestProblemInfo: true}}); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("connect %s: %w", id, err)
	}
	if _, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: respTopic, QoS: 1}}}); err != nil {
		_ = c.Disconnect(&paho.Disconnect{})
		return nil, fmt.Errorf("subscribe %s: %w", respTopic, err)
	}
	return c, nil
}

// disconnect disconnects the workers' clients.
func (g *generator) disconnect() {
	for _, c := range g.clients {
		_ = c.Disconnect(&paho.Disconnect{})
	}
}

// send sends n requests, cfg.InFlight at a time, and returns their
// latencies.
func (g *generator) send(ctx context.Context, n int) ([]time.Duration, error) {
	if n == 0 {
		return nil, nil
	}
	var (
		left   atomic.Int64
		wg     sync.WaitGroup
		mu     sync.Mutex
		lat    = make([]time.Duration, 0, n)
		failed error
	)
	left.Store(int64(n))
	for w := range g.cfg.InFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, n/g.cfg.InFlight+1)
			defer func() {
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			}()
			for left.Add(-1) >= 0 {
				d, err := g.one(ctx, g.clients[w], fmt.Sprintf("%s/%d", g.respTopic, w))
				if err != nil {
					mu.Lock()
					failed = errors.Join(failed, err)
					mu.Unlock()
					return
				}
				mine = append(mine, d)
			}
		}()
	}
	wg.Wait()
	return lat, failed
}

// one sends a request and waits for its reply.
func (g *generator) one(ctx context.Context, client *paho.Client, respTopic string) (time.Duration, error) {
	id := g.next.Add(1)
	var corr [16]byte // the protocol's correlation data: 16 bytes
	binary.BigEndian.PutUint64(corr[8:], id)
	done := make(chan error, 1)
	g.mu.Lock()
	g.waiting[id] = done
	g.mu.Unlock()
	expiry := uint32(g.cfg.Expiry / time.Second)
	topic := g.cfg.Topic
	if len(g.cfg.Topics) > 0 {
		topic = g.cfg.Topics[rand.IntN(len(g.cfg.Topics))]
	}
	start := time.Now()
	if _, err := client.Publish(ctx, &paho.Publish{Topic: topic, QoS: 1, Payload: g.cfg.Payload,
		Properties: &paho.PublishProperties{ResponseTopic: respTopic, CorrelationData: corr[:], ContentType: "text/plain",
			MessageExpiry: &expiry}}); err != nil {
		return 0, fmt.Errorf("publish: %w", err)
	}
	t := time.NewTimer(g.cfg.Expiry)
	defer t.Stop()
	select {
	case err := <-done:
		return time.Since(start), err
	case <-t.C:
		return 0, fmt.Errorf("no reply to request %d within its expiry", id)
	}
}

// receive routes a reply to its request by correlation data.
func (g *generator) receive(pr paho.PublishReceived) (bool, error) {
	p := pr.Packet
	if len(p.Properties.CorrelationData) != 16 {
		return true, nil
	}
	id := binary.BigEndian.Uint64(p.Properties.CorrelationData[8:])
	g.mu.Lock()
	done := g.waiting[id]
	delete(g.waiting, id)
	g.mu.Unlock()
	if done == nil {
		return true, nil // a duplicate reply
	}
	var err error
	if st := p.Properties.User.Get("__stat"); st != "200" {
		err = fmt.Errorf("request %d answered __stat %q (%s)", id, st, p.Properties.User.Get("__stMsg"))
	}
	done <- err
	return true, nil
}
