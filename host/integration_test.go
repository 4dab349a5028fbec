package host_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/commands"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/wasmtest"
	"github.com/cmdhost/cmdhost/internal/wasm"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

const pluginDir = "../testdata/plugins"

var (
	engineOnce sync.Once
	engine     *wasm.Engine
)

// sharedEngine is the engine of the package's tests, on the tests'
// shared compilation cache.
func sharedEngine(t testing.TB) *wasm.Engine {
	engineOnce.Do(func() {
		var err error
		engine, err = wasmtest.NewEngine(wasm.Config{})
		if err != nil {
			t.Fatal(err)
		}
	})
	return engine
}

// env is a host serving some test plugins through a real broker, and an
// invoker calling it.
type env struct {
	t       testing.TB
	exec    *rpc.Executor
	inv     *rpc.Invoker
	plugins map[string]*wasm.Plugin
	dialer  *droppableDialer
}

func newEnv(t testing.TB, u *url.URL, names ...string) *env {
	t.Helper()
	return newEnvWith(t, u, nil, names...)
}

// newEnvWith is newEnv with the executor's clock (nil: the real one).
func newEnvWith(t testing.TB, u *url.URL, now clock.Clock, names ...string) *env {
	t.Helper()
	return newEnvConfig(t, u, func(c *rpc.Config, _ []rpc.Command) { c.Clock = now }, names...)
}

// newEnvConfig is newEnv with the executor's config and commands adjusted
// by adjust.
func newEnvConfig(t testing.TB, u *url.URL, adjust func(*rpc.Config, []rpc.Command), names ...string) *env {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	e := &env{t: t, plugins: map[string]*wasm.Plugin{}, dialer: &droppableDialer{}}
	var modules []*wasm.Plugin
	for _, n := range names {
		bin, err := os.ReadFile(filepath.Join(pluginDir, n+".wasm"))
		if err != nil {
			t.Fatalf("%v (run `make plugins`)", err)
		}
		// Each run of a test counts from 1: a plugin name of its own gets
		// variables of its own (the commands keep their declared names).
		p, err := sharedEngine(t).Load(context.Background(), testkit.RunName(t, n+"@"), bin, wasm.PluginConfig{PoolSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close(context.Background()) })
		e.plugins[n] = p
		modules = append(modules, p)
	}
	cfg := rpc.Config{
		ExecutorID: "it-host", Session: session.Config{ClientID: "it-host-" + strings.ReplaceAll(t.Name(), "/", "-"), Broker: u, Dial: e.dialer.dial,
			ReconnectDelay: 50 * time.Millisecond}, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	cmds := commands.Fixed(modules, pluginmgr.Defaults{ExecTimeout: 2 * time.Second, Concurrency: 2})
	adjust(&cfg, cmds)
	exec, err := rpc.NewExecutor(cfg, cmds)
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	e.exec = exec
	inv, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: session.Config{Broker: u}})
	if err != nil {
		t.Fatal(err)
	}
	e.inv = inv
	t.Cleanup(func() {
		_ = inv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = exec.Stop(ctx)
	})
	return e
}

func ctxT(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func (e *env) call(command, payload string, timeout time.Duration, corr []byte) (*rpc.Result, error) {
	return e.inv.Invoke(ctxT(e.t), rpc.Call{Topic: "rpc/it-host/" + command, Payload: []byte(payload),
		ContentType: "text/plain", Timeout: timeout, Correlation: corr})
}

func (e *env) mustCall(command, payload string) *rpc.Result {
	e.t.Helper()
	r, err := e.call(command, payload, 10*time.Second, nil)
	if err != nil {
		e.t.Fatalf("%s(%q): %v", command, payload, err)
	}
	return r
}

// droppableDialer connects over TCP and can cut the current connection,
// like a network failure.
type droppableDialer struct {
	mu   sync.Mutex
	conn net.Conn
}

func (d *droppableDialer) dial(ctx context.Context, _ autopaho.ClientConfig, u *url.URL) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.conn = c
	d.mu.Unlock()
	return packets.NewThreadSafeConn(c), nil
}

func (d *droppableDialer) drop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn != nil {
		_ = d.conn.Close()
	}
}

func TestEchoThroughBroker(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		e := newEnv(t, u, "echo", "wat-echo")
		for _, cmd := range []string{"echo", "wat-echo"} {
			r := e.mustCall(cmd, "hi")
			if r.Status != abi.StatusOK || string(r.Payload) != "hi" || r.ContentType != "text/plain" {
				t.Fatalf("%s: %+v", cmd, r)
			}
		}
	})
}

// The host's execution timeout (2 s) cuts a guest that sleeps or spins:
// 408 naming it; the host serves normally afterwards.
func TestExecutionTimeoutThroughBroker(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		e := newEnv(t, u, "sleep", "spin")
		// Without the execution timeout, sleep would answer 200 after 6 s
		// and spin would run until the request's expiry (no reply).
		for _, c := range []struct{ cmd, payload string }{{"sleep", "6000"}, {"spin", ""}} {
			r, err := e.call(c.cmd, c.payload, time.Minute, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != abi.StatusRequestTimeout || r.PropName != "ExecutionTimeout" || r.PropValue != "PT2S" {
				t.Fatalf("%s: %+v", c.cmd, r)
			}
		}
		if r := e.mustCall("sleep", "1"); string(r.Payload) != "1" {
			t.Fatalf("after the timeouts: %+v", r)
		}
	})
}

// A request whose expiry (1 s) is shorter than the execution timeout gets
// no response: the invoker times out.
func TestExpiryBeforeExecutionTimeout(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		e := newEnv(t, u, "sleep")
		_, err := e.call("sleep", "1800", time.Second, nil)
		if !errors.Is(err, rpc.ErrNoResponse) {
			t.Fatalf("want no response, got %v", err)
		}
	})
}

// A request without message expiry gets 400 naming it.
func TestMissingExpiryThroughBroker(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		newEnv(t, u, "echo")
		resp := rawRequest(t, u, &paho.Publish{QoS: 1, Topic: "rpc/it-host/echo", Payload: []byte("x"),
			Properties: &paho.PublishProperties{CorrelationData: []byte("0123456789abcdef")}})
		if s := userProp(resp, "__stat"); s != "400" || userProp(resp, "__propName") != "Message Expiry" {
			t.Fatalf("__stat %q __propName %q", s, userProp(resp, "__propName"))
		}
	})
}

// An echo with a run tag, non-idempotent, with counter:
// 1. one call → "Hello!:1";
// 2. a duplicate within the first's window → the same reply, run once;
// 3. a duplicate after the first's window → discarded: no reply;
// 4. a new correlation → run again: "Hello!:2".
func TestEchoWithTagNonIdempotent(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		e := newEnv(t, u, "counter")
		corr := []byte("scenario-1-2-3-x")
		first, err := e.call("counter", "Hello!", 2*time.Second, corr)
		if err != nil || string(first.Payload) != "Hello!:1" {
			t.Fatalf("scenario 1: %+v %v", first, err)
		}
		dup, err := e.call("counter", "Hello!", 2*time.Second, corr)
		if err != nil || string(dup.Payload) != "Hello!:1" {
			t.Fatalf("scenario 2: a duplicate within the window: %+v %v", dup, err)
		}
		time.Sleep(2100 * time.Millisecond) // let the first request's 2 s window pass
		if late, err := e.call("counter", "Hello!", 2*time.Second, corr); !errors.Is(err, rpc.ErrNoResponse) {
			t.Fatalf("scenario 3: a duplicate after the window must be discarded, got %+v %v", late, err)
		}
		next := e.mustCall("counter", "Hello!")
		if string(next.Payload) != "Hello!:2" {
			t.Fatalf("scenario 4: a new request runs again: %q", next.Payload)
		}
		if c := e.plugins["counter"].Stats().Calls; c != 2 {
			t.Fatalf("counter ran %d times, want 2", c)
		}
	})
}

// The executor's connection drops while a call runs: the broker
// redelivers the request (persistent session), the duplicate is answered
// from the first execution, which ran once.
func TestRedeliveryAfterExecutorDrops(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		e := newEnv(t, u, "sleep")
		done := make(chan *rpc.Result, 1)
		go func() {
			r, err := e.call("sleep", "1500", 10*time.Second, nil)
			if err != nil {
				t.Error(err)
			}
			done <- r
		}()
		testkit.WaitFor(t, "sleep to run", func() bool { return e.plugins["sleep"].Stats().InUse == 1 })
		e.dialer.drop()
		select {
		case r := <-done:
			if r == nil || string(r.Payload) != "1500" {
				t.Fatalf("reply after the drop: %+v", r)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("no reply after the executor's connection dropped")
		}
		if c := e.plugins["sleep"].Stats().Calls; c != 1 {
			t.Fatalf("the redelivered request ran again: %d calls", c)
		}
	})
}

// rawRequest publishes p with a response topic of its own and returns the
// response.
func rawRequest(t *testing.T, u *url.URL, p *paho.Publish) *paho.Publish {
	t.Helper()
	c := newRawClient(t, u)
	p.Properties.ResponseTopic = c.respTopic
	c.Publish(t, p)
	return c.next(t)
}

func userProp(p *paho.Publish, key string) string {
	for _, u := range p.Properties.User {
		if u.Key == key {
			return u.Value
		}
	}
	return ""
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// An echo with a run tag, idempotent with a 1 h response TTL, with
// counter-idem and a clock the test moves:
// 1. one call → "Hello!:1";
// 2. a duplicate within the first's window → the same reply, run once;
// 3. a duplicate after the window → discarded, but the reply stays cached;
// 4. an equivalent request (new correlation) within the TTL → "Hello!:1";
// 5. an equivalent request after the TTL → run again: "Hello!:2".
func TestEchoWithTagIdempotent(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		clock := testkit.NewClock(time.Now())
		e := newEnvWith(t, u, clock, "counter-idem")
		corr := []byte("idempotent-scen1")
		first, err := e.call("counter-idem", "Hello!", 5*time.Second, corr)
		if err != nil || string(first.Payload) != "Hello!:1" {
			t.Fatalf("scenario 1: %+v %v", first, err)
		}
		dup, err := e.call("counter-idem", "Hello!", 5*time.Second, corr)
		if err != nil || string(dup.Payload) != "Hello!:1" {
			t.Fatalf("scenario 2: %+v %v", dup, err)
		}
		clock.Add(6 * time.Second) // past the first request's 5 s window
		if late, err := e.call("counter-idem", "Hello!", time.Second, corr); !errors.Is(err, rpc.ErrNoResponse) {
			t.Fatalf("scenario 3: a duplicate after the window must be discarded, got %+v %v", late, err)
		}
		equiv := e.mustCall("counter-idem", "Hello!")
		if string(equiv.Payload) != "Hello!:1" {
			t.Fatalf("scenario 4: an equivalent request within the TTL: %q", equiv.Payload)
		}
		clock.Add(time.Hour)
		after := e.mustCall("counter-idem", "Hello!")
		if string(after.Payload) != "Hello!:2" {
			t.Fatalf("scenario 5: an equivalent request after the TTL: %q", after.Payload)
		}
		if c := e.plugins["counter-idem"].Stats().Calls; c != 2 {
			t.Fatalf("counter-idem ran %d times, want 2", c)
		}
		if st := e.exec.ReuseStats(); st.Hits != 1 {
			t.Fatalf("reuse stats %+v, want one hit (scenario 4)", st)
		}
	})
}
