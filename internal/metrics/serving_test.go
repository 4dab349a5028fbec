package metrics

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/rpc/rpctest"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// An idle keep-alive connection to the metrics listener is closed by the
// server (issue 23, item 11: it never was).
func TestIdleKeepAliveClosed(t *testing.T) {
	s, err := New(Sources{}).ListenWith(ListenConfig{Addr: "127.0.0.1:0", IdleTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	if res.Close {
		t.Fatal("the server closed after the request: not a keep-alive connection")
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute)) // hang guard
	if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("reading the idle connection: %v, want the server to close it (EOF)", err)
	}
}

// /readyz means serving (issue 23, item 4): a host whose replies the
// broker stops acknowledging turns 503, naming it, and 200 again once it
// serves (here: once the executor has dropped the silent connection and
// connected again). The ages run on a fake clock.
func TestReadyzFollowsTheBrokersAcks(t *testing.T) {
	clock := testkit.NewClock(time.Unix(1_800_000_000, 0))
	broker := rpctest.NewBroker()
	broker.DropNextPubacks(1)
	u, _ := url.Parse("mqtt://fake:1883")
	var exec *rpc.Executor
	c := New(Sources{Session: func() rpc.SessionStats { return exec.SessionStats() }})
	exec, err := rpc.NewExecutor(rpc.Config{
		ExecutorID: "exec-1", Session: session.Config{Broker: u, Dial: broker.Dial, ReconnectDelay: 10 * time.Millisecond}, Clock: clock,
	}, []rpc.Command{{Name: "echo", Topic: rpc.DefaultTopic, Handler: func(_ context.Context, req *abi.Request) (*abi.Response, error) {
		return &abi.Response{Payload: req.Payload}, nil
	}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := exec.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Stop(context.Background())
		_ = broker.Close()
	})
	s, err := c.Listen("127.0.0.1:0", exec.Ready)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	readyz := func() (int, string) {
		t.Helper()
		res, err := http.Get("http://" + s.Addr() + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}

	if _, err := broker.Deliver(request("rpc/exec-1/echo", 1, 60, "resp/1")); err != nil {
		t.Fatal(err)
	}
	if _, err := broker.WaitPublished(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if code, body := readyz(); code != http.StatusOK {
		t.Fatalf("a reply just sent: %d %s", code, body)
	}
	clock.Add(10 * time.Second)
	code, body := readyz()
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "acknowledged none of the host's replies for 10s (1 waiting") {
		t.Fatalf("10 s without a PUBACK: %d %q, want 503 naming it", code, body)
	}
	// At the ack timeout the executor's check (every second, real time)
	// drops the connection; the next one serves.
	clock.Add(20 * time.Second)
	deadline := time.Now().Add(time.Minute) // hang guard
	for code, body = readyz(); code != http.StatusOK; code, body = readyz() {
		if time.Now().After(deadline) {
			t.Fatalf("never ready again: %d %s", code, body)
		}
		time.Sleep(20 * time.Millisecond) // the check runs on its own ticker
	}
	if _, err := broker.Deliver(request("rpc/exec-1/echo", 2, 60, "resp/2")); err != nil {
		t.Fatal(err)
	}
	if _, err := broker.WaitPublished(ctx, 2); err != nil {
		t.Fatal(err)
	}
	lines := scrape(t, c.Handler())
	for _, want := range []string{"cmdhost_replies_unacknowledged_total 1", "cmdhost_broker_connections_recycled_total 1"} {
		if !lines[want] {
			t.Errorf("no %q in the metrics", want)
		}
	}
}
