package rpc_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The executor's connection against real brokers: replies to topics an
// ordinary client may not publish to, a session taken over, a request
// larger than the executor announces.

func echoCommand() rpc.Command {
	return rpc.Command{Name: "echo", Topic: rpc.DefaultTopic, Handler: func(_ context.Context, r *abi.Request) (*abi.Response, error) {
		return &abi.Response{Payload: r.Payload, ContentType: r.ContentType}, nil
	}}
}

// request is a valid request to topic answered on responseTopic.
func request(topic, responseTopic string, n int, qos byte) *paho.Publish {
	expiry := uint32(60)
	corr := []byte(fmt.Sprintf("%016d", n))
	return &paho.Publish{QoS: qos, Topic: topic, Payload: []byte("hi"), Properties: &paho.PublishProperties{
		ResponseTopic: responseTopic, CorrelationData: corr, MessageExpiry: &expiry, ContentType: "text/plain",
	}}
}

// Issue 23, item 2: mochi drops a client's PUBLISH to $SYS/… silently and
// never acks it, so each reply there held one of the host's send slots
// (the broker's Receive Maximum, 1,024) for good, and 1,100 such requests
// silenced the host. They are refused now (acked, not answered), and
// honest invokers are answered after the flood.
func TestReservedResponseTopicsDoNotWedge(t *testing.T) {
	u := brokertest.StartEmbedded(t)
	exec := startExecutor(t, u, rpc.Config{ExecutorID: "wedge"}, echoCommand())
	flooder := testkit.Dial(t, u, "flooder-"+t.Name())
	flooder.Subscribe(t, "flood/answer")
	const flood = 1100
	for i := range flood {
		flooder.Publish(t, request("rpc/wedge/echo", "$SYS/x", i, 0))
	}
	// The same client's next request on the same topic is delivered
	// after the flood (MQTT keeps a client's order on a topic).
	flooder.Publish(t, request("rpc/wedge/echo", "flood/answer", flood, 0))
	if reply := flooder.Next(t); string(reply.Payload) != "hi" {
		t.Fatalf("the request after the flood: reply %q", reply.Payload)
	}
	inv := newInvoker(t, u, rpc.InvokerConfig{Session: session.Config{ClientID: "honest-" + t.Name()}})
	res, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/wedge/echo", Payload: []byte("honest"), Timeout: 10 * time.Second})
	if err != nil || string(res.Payload) != "honest" {
		t.Fatalf("an honest invoker after the flood: %v, %+v", err, res)
	}
	if got := exec.SessionStats().ResponseTopicsRefused; got != flood {
		t.Errorf("ResponseTopicsRefused = %d, want %d", got, flood)
	}
	if err := exec.Ready(); err != nil {
		t.Errorf("after the flood: %v", err)
	}
}

// rogue connects once, with no reconnection, as clientID (a clean
// start, as an anonymous client would), and returns a channel closed when
// the broker drops it.
func rogue(t *testing.T, addr, clientID string) <-chan struct{} {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	lost := make(chan struct{})
	var once sync.Once
	drop := func() { once.Do(func() { close(lost) }) }
	c := paho.NewClient(paho.ClientConfig{Conn: conn,
		OnClientError:      func(error) { drop() },
		OnServerDisconnect: func(*paho.Disconnect) { drop() },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Connect(ctx, &paho.Connect{ClientID: clientID, CleanStart: true, KeepAlive: 30}); err != nil {
		t.Fatalf("rogue connecting as %s: %v", clientID, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return lost
}

// Issue 23, item 3: a client connecting with the host's client id takes
// its session. The host reports it (an Error naming the client id, a
// count), connects again (which takes the session back from the rogue),
// subscribes again, and serves: after each of several rounds.
func TestTakeoverReportedAndServedAgain(t *testing.T) {
	u := brokertest.StartMosquitto(t)
	var logs testkit.LogBuffer
	exec := startExecutor(t, u, rpc.Config{ExecutorID: "victim", Session: session.Config{ReconnectDelay: 50 * time.Millisecond},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}, echoCommand())
	clientID := "victim-" + strings.ReplaceAll(t.Name(), "/", "-") // startExecutor's
	inv := newInvoker(t, u, rpc.InvokerConfig{Session: session.Config{ClientID: "inv-" + t.Name()}})
	const rounds = 5
	for round := 1; round <= rounds; round++ {
		took := time.Now()
		lost := rogue(t, u.Host, clientID)
		// The host takes its session back: the broker drops the rogue.
		select {
		case <-lost:
		case <-time.After(time.Minute): // hang guard
			t.Fatalf("round %d: the host never took its session back", round)
		}
		// Serving again: the request is sent until the host acknowledges
		// it (an ask), as one sent before the host subscribed again is
		// lost with the session the rogue cleaned.
		res, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/victim/echo", Payload: []byte("again"), Timeout: 30 * time.Second, Ack: true})
		if err != nil || string(res.Payload) != "again" {
			t.Fatalf("round %d: after the takeover: %v, %+v", round, err, res)
		}
		t.Logf("round %d: serving again %v after the rogue connected", round, time.Since(took).Round(time.Millisecond))
	}
	// mosquitto 2.0.11 closes the host's connection without a DISCONNECT
	// "session taken over"; the rogue's clean start shows instead, as a
	// session the broker no longer has when the host is back.
	st := exec.SessionStats()
	if st.SessionTakeovers+st.SessionsLost != rounds {
		t.Errorf("SessionTakeovers %d + SessionsLost %d, want %d in all", st.SessionTakeovers, st.SessionsLost, rounds)
	}
	if !(logs.Contains("level=ERROR msg=\"session taken over") || logs.Contains("level=ERROR msg=\"session lost")) ||
		!logs.Contains("client_id="+clientID) {
		t.Errorf("no Error naming the takeover and the client id in the log:\n%s", logs.String())
	}
}

// Issue 23, item 5: the executor announces its Maximum Packet Size
// (Config.Session.MaxPacketSize) in its CONNECT, so the broker does not deliver
// a larger request: mosquitto drops it for the host, whose heap does not
// grow by it, and the host serves the next request.
func TestLargeRequestNotDelivered(t *testing.T) {
	u := brokertest.StartMosquitto(t)
	var calls atomic.Int64
	cmd := echoCommand()
	echo := cmd.Handler
	cmd.Handler = func(ctx context.Context, r *abi.Request) (*abi.Response, error) {
		calls.Add(1)
		return echo(ctx, r)
	}
	cmd.Concurrency = 1 // run in receipt order: the large one would run first
	startExecutor(t, u, rpc.Config{ExecutorID: "bounded", Session: session.Config{MaxPacketSize: 64 << 10}}, cmd)
	client := testkit.Dial(t, u, "big-"+t.Name())
	client.Subscribe(t, "big/answer")

	const large = 8 << 20
	big := request("rpc/bounded/echo", "big/answer", 1, 1)
	big.Payload = make([]byte, large)
	// What publishing it costs this process (the test's client) alone:
	// the same request to a topic nobody serves.
	unrouted := *big
	unrouted.Topic = "nobody/serves/this"
	allocated := func(publish func()) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		publish()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	baseline := allocated(func() { client.Publish(t, &unrouted) })
	var reply *paho.Publish
	grew := allocated(func() {
		client.Publish(t, big) // mosquitto acks it: it is the host it does not reach
		client.Publish(t, request("rpc/bounded/echo", "big/answer", 2, 1))
		reply = client.Next(t)
	})
	if string(reply.Payload) != "hi" {
		t.Fatalf("the first reply answers the %d-byte request: the large one reached the host", len(reply.Payload))
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d calls, want only the small request's", n)
	}
	if grew >= baseline+large/2 {
		t.Errorf("the process allocated %d bytes while the %d-byte request went by (%d to publish it): the host read it", grew, large, baseline)
	}
}
