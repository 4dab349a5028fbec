package host_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
)

// TestOutboxTakenOverFromKilledHost: two hosts of one executor id on one
// Redis (Config.Store.URL) and mosquitto. Host A, a process of its own, runs
// a non-idempotent command that publishes one message per request
// (tally), with its packets to the broker held from the first request on
// (a proxy between them), so that what it commits stays in the outbox:
// some messages read by its sender, pending with it, and not sent. It is
// killed with SIGKILL. Host B starts with a short Config.Store.OutboxTakeover,
// takes over what was pending with A, reads the rest, and every message
// arrives once: one copy of one id each.
func TestOutboxTakenOverFromKilledHost(t *testing.T) {
	if serveIfKillable(t) {
		return
	}
	testkit.Needs(t, testkit.Plugins)
	const total, executor = 10, "takeover-host"
	store, broker := testkit.StartRedis(t), brokertest.StartMosquitto(t)
	proxy := startHoldingProxy(t, broker.Host)
	dir := t.TempDir()
	testkit.InstallFile(t, "../testdata/plugins-alt/tally.wasm", dir, "tally.wasm")
	testkit.Install(t, dir, "tally.json", []byte(`{"publish": {"topics": ["tally/#"]}}`))
	msgs := countMessages(t, broker, "tally/#")

	a := startKillable(t, "TestOutboxTakenOverFromKilledHost", killableHost{Plugins: dir, Broker: "mqtt://" + proxy.addr(), Store: store.URL,
		ExecutorID: executor, ClientID: "takeover-a", OutboxTakeover: 200 * time.Millisecond})
	proxy.hold()
	inv, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: session.Config{Broker: broker, ClientID: "takeover-cli"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inv.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	var calls sync.WaitGroup
	t.Cleanup(func() { cancel(); calls.Wait() })
	for i := range total {
		calls.Go(func() { // answered by no one: A's reply is held, then A is dead
			_, _ = inv.Invoke(ctx, rpc.Call{Topic: "rpc/" + executor + "/tally", Payload: fmt.Appendf(nil, "t-%02d", i),
				ContentType: "text/plain", Timeout: time.Minute})
		})
	}
	outbox := newOutboxView(t, store.Addr, executor)
	testkit.WaitFor(t, "every request's message in the outbox, some read by host A", func() bool {
		n, pending := outbox.read(t, "takeover-a")
		return n == total && pending > 0
	})
	kill(t, a)
	_, pendingA := outbox.read(t, "takeover-a")

	b := hosttest.Serve(t, host.Config{
		PluginsDir: t.TempDir(),
		ExecutorID: executor,
		CacheDir:   testkit.CacheDir(),
		Broker:     host.BrokerConfig{URL: broker, ClientID: "takeover-b"},
		Store:      host.StoreConfig{URL: store.URL, OutboxTakeover: 200 * time.Millisecond},
	})
	testkit.WaitFor(t, "every message", func() bool { return msgs.payloads() == total })
	testkit.WaitFor(t, "the outbox empty", func() bool { n, _ := outbox.read(t, "takeover-b"); return n == 0 })
	for i := range total {
		v := fmt.Sprintf("%d", i+1) // tally's values, 1 to total, one per request
		if ids := msgs.idsOf(v); len(ids) != 1 || ids[0].copies != 1 {
			t.Errorf("the message of value %s came as %+v, want one copy of one id", v, ids)
		}
	}
	if got := host.OutboxTakenOver(b); got != uint64(pendingA) {
		t.Errorf("host B took over %d messages, and %d were pending with the killed host", got, pendingA)
	}
	t.Logf("%d messages, %d of them taken over from the killed host", total, pendingA)
}

// outboxView reads an executor's outbox in Redis (docs/messages.md,
// "With --store"): the messages its streams hold, and those pending
// with one reader.
type outboxView struct {
	rdb   *redis.Client
	index string
}

func newOutboxView(t *testing.T, addr, executor string) *outboxView {
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = rdb.Close() })
	return &outboxView{rdb: rdb, index: "cmdhost:outbox:" + executor}
}

// read returns the messages the outbox holds and those pending with
// consumer.
func (o *outboxView) read(t *testing.T, consumer string) (held, pending int64) {
	t.Helper()
	ctx := ctxT(t)
	streams, err := o.rdb.SMembers(ctx, o.index).Result()
	if err != nil {
		t.Fatalf("the outbox's streams: %v", err)
	}
	for _, s := range streams {
		n, err := o.rdb.XLen(ctx, s).Result()
		if err != nil {
			t.Fatalf("XLEN %s: %v", s, err)
		}
		held += n
		p, err := o.rdb.XPending(ctx, s, "cmdhost").Result()
		if err != nil && !strings.HasPrefix(err.Error(), "NOGROUP") {
			t.Fatalf("XPENDING %s: %v", s, err)
		}
		if p != nil {
			pending += p.Consumers[consumer]
		}
	}
	return held, pending
}

// holdingProxy forwards TCP connections to a broker; once hold is called,
// what its clients send is held and never reaches the broker (their
// connections look alive, and what the broker sends still reaches them).
type holdingProxy struct {
	ln   net.Listener
	held chan struct{}
	once sync.Once
}

func startHoldingProxy(t *testing.T, target string) *holdingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &holdingProxy{ln: ln, held: make(chan struct{})}
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, up)
			mu.Unlock()
			wg.Go(func() { _, _ = io.Copy(c, up); _ = c.Close(); _ = up.Close() })
			wg.Go(func() { p.forward(up, c); _ = c.Close(); _ = up.Close() })
		}
	})
	return p
}

func (p *holdingProxy) addr() string { return p.ln.Addr().String() }

// hold stops forwarding what the clients send, from now on.
func (p *holdingProxy) hold() { p.once.Do(func() { close(p.held) }) }

// forward copies src to dst until hold, then reads src to its end and
// drops it.
func (p *holdingProxy) forward(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-p.held:
		default:
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
