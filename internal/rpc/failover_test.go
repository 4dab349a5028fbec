package rpc_test

import (
	"context"
	"log/slog"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// A call made while the invoker's session has no broker (the first of
// its list gone, the next not up yet) waits for the next connection and
// goes out there, within its context: it failed at once with "no
// connection available" (an invoker under load when its broker was
// killed, TestBridgedBrokerKilledRunsNothingTwice in cmd/cmdhost/internal/exactlyonce).
func TestInvokeWaitsForTheNextBroker(t *testing.T) {
	first, err := broker.Start(broker.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Close() })
	l, err := net.Listen("tcp", "127.0.0.1:0") // the next broker's address, nothing there yet
	if err != nil {
		t.Fatal(err)
	}
	nextAddr := l.Addr().String()
	_ = l.Close()
	next := &url.URL{Scheme: "mqtt", Host: nextAddr}

	logs := &testkit.LogBuffer{}
	cfg := rpc.InvokerConfig{}
	cfg.Session.Logger = slog.New(slog.NewTextHandler(logs, nil))
	cfg.Session.Failover = []*url.URL{next}
	inv := newInvoker(t, first.URL(), cfg)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the invoker without a broker", func() bool { return logs.HasLine(nextAddr, "connection refused") })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // hang guard
	defer cancel()
	out := invokeAsync(ctx, inv, rpc.Call{Topic: "rpc/fo/echo", Payload: []byte("hi"), ContentType: "text/plain", Timeout: 30 * time.Second})
	select {
	case o := <-out:
		t.Fatalf("the call ended while no broker was up: %+v, %v", o.res, o.err)
	default:
	}
	second, err := broker.Start(broker.Config{Addr: nextAddr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Close() })
	startExecutor(t, second.URL(), rpc.Config{ExecutorID: "fo"}, echoCommand())
	if o := wait(t, out); o.err != nil || o.res.Status != 200 || string(o.res.Payload) != "hi" {
		t.Fatalf("the call made while no broker was up: %+v, %v", o.res, o.err)
	}
}

// A call after Close ends at once, not at its context's end: the wait
// for a connection (above) is not a wait for one that never comes.
func TestInvokeAfterCloseEndsAtOnce(t *testing.T) {
	inv := newInvoker(t, brokertest.StartEmbedded(t), rpc.InvokerConfig{})
	if err := inv.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard
	defer cancel()
	out := invokeAsync(ctx, inv, rpc.Call{Topic: "rpc/fo/echo", Payload: []byte("hi"), Timeout: time.Minute})
	select {
	case o := <-out:
		if o.err == nil {
			t.Fatalf("a call after Close: %+v, want an error", o.res)
		}
	case <-time.After(5 * time.Second): // a bound on "at once", not a synchronisation
		t.Fatal("a call after Close still waits after 5 s")
	}
}
