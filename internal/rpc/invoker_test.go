package rpc_test

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The invoker's ask tests (PROTOCOL.md "Extensions") run against both real
// brokers (brokertest.ForEach), with a scripted responder in the
// executor's place: the test reads every message on the request topic and
// answers as its script says.

const askTopic = "rpc/scripted/cmd"

// responder stands in for an executor: a client subscribed to the request
// topic that hands the test each message arriving there, in order.
type responder struct {
	*testkit.Client
	t *testing.T
}

func newResponder(t *testing.T, u *url.URL) *responder {
	t.Helper()
	r := &responder{Client: testkit.Dial(t, u, "responder-"+strings.ReplaceAll(t.Name(), "/", "-")), t: t}
	r.Subscribe(t, askTopic)
	return r
}

// next returns the next message on the request topic.
func (r *responder) next() *paho.Publish {
	r.t.Helper()
	return r.Next(r.t)
}

// untilCancel reads messages until a cancel and returns the requests
// before it and the cancel. The invoker sends the cancel last, on the same
// topic, so every request it sent has arrived by then.
func (r *responder) untilCancel() (requests []*paho.Publish, cancel *paho.Publish) {
	r.t.Helper()
	for {
		p := r.next()
		if v, _ := prop(p, "cmdhost-cancel"); v == "1" {
			return requests, p
		}
		requests = append(requests, p)
	}
}

// answer publishes a response to req with a status and a payload.
func (r *responder) answer(req *paho.Publish, status abi.Status, payload string) {
	r.t.Helper()
	r.answerTo(req.Properties.ResponseTopic, req.Properties.CorrelationData, status, payload)
}

func (r *responder) answerTo(topic string, corr []byte, status abi.Status, payload string) {
	r.t.Helper()
	expiry := uint32(10)
	r.Publish(r.t, &paho.Publish{
		QoS: 1, Topic: topic, Payload: []byte(payload),
		Properties: &paho.PublishProperties{
			CorrelationData: corr, MessageExpiry: &expiry,
			User: paho.UserProperties{{Key: "__stat", Value: strconv.Itoa(int(status))}, {Key: "__protVer", Value: "1.0"}},
		},
	})
}

func prop(p *paho.Publish, key string) (string, bool) {
	for _, u := range p.Properties.User {
		if u.Key == key {
			return u.Value, true
		}
	}
	return "", false
}

func ctxT(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// startExecutor starts an executor of cfg on the broker u, with a client
// id of the test's own, serving cmds until the test ends.
func startExecutor(t *testing.T, u *url.URL, cfg rpc.Config, cmds ...rpc.Command) *rpc.Executor {
	t.Helper()
	cfg.Session.Broker = u
	cfg.Session.ClientID = cfg.ExecutorID + "-" + strings.ReplaceAll(t.Name(), "/", "-")
	exec, err := rpc.NewExecutor(cfg, cmds)
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = exec.Stop(ctx)
	})
	return exec
}

func newInvoker(t *testing.T, u *url.URL, cfg rpc.InvokerConfig) *rpc.Invoker {
	t.Helper()
	cfg.Session.Broker = u
	inv, err := rpc.NewInvoker(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inv.Close() })
	return inv
}

type outcome struct {
	res  *rpc.Result
	err  error
	took time.Duration
}

// invokeAsync runs the call in a goroutine; the test plays the executor.
func invokeAsync(ctx context.Context, inv *rpc.Invoker, c rpc.Call) <-chan outcome {
	out := make(chan outcome, 1)
	go func() {
		start := time.Now()
		res, err := inv.Invoke(ctx, c)
		out <- outcome{res, err, time.Since(start)}
	}()
	return out
}

func wait(t *testing.T, out <-chan outcome) outcome {
	t.Helper()
	select {
	case o := <-out:
		return o
	case <-time.After(60 * time.Second):
		t.Fatal("the call did not end within 60 s")
		return outcome{}
	}
}

func askCall(timeout time.Duration) rpc.Call {
	return rpc.Call{Topic: askTopic, Payload: []byte("hi"), ContentType: "text/plain", Timeout: timeout, Ack: true}
}

// checkSame checks that every send is the same request: same correlation
// data, response topic and payload, and the ack property.
func checkSame(t *testing.T, sends []*paho.Publish) {
	t.Helper()
	first := sends[0].Properties
	for i, p := range sends {
		if !bytes.Equal(p.Properties.CorrelationData, first.CorrelationData) || p.Properties.ResponseTopic != first.ResponseTopic ||
			string(p.Payload) != "hi" || p.Properties.MessageExpiry == nil {
			t.Fatalf("send %d is not the same request: %+v vs %+v", i+1, p.Properties, first)
		}
		if v, _ := prop(p, "cmdhost-ack"); v != "1" {
			t.Fatalf("send %d lacks cmdhost-ack: 1: %v", i+1, p.Properties.User)
		}
	}
	if len(first.CorrelationData) != 16 {
		t.Fatalf("correlation data of %d bytes", len(first.CorrelationData))
	}
}

// The request is sent again, the same request each time, until an ack;
// then the call waits for the reply.
func TestAskRetriesUntilAck(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		r := newResponder(t, u)
		inv := newInvoker(t, u, rpc.InvokerConfig{})
		out := invokeAsync(ctxT(t), inv, askCall(5*time.Second))
		sends := []*paho.Publish{r.next(), r.next(), r.next()} // two lost, the third arrives
		checkSame(t, sends)
		r.answer(sends[2], abi.StatusAccepted, "")
		r.answer(sends[2], abi.StatusOK, "done")
		o := wait(t, out)
		if o.err != nil || o.res.Status != abi.StatusOK || string(o.res.Payload) != "done" {
			t.Fatalf("result %+v, err %v", o.res, o.err)
		}
		// The third send went out at 300 ms (100 ms, then 200 ms more).
		if o.res.Sends != 3 || o.res.AckedAfter < 300*time.Millisecond || o.res.AckedAfter > o.took {
			t.Fatalf("sends %d, acked after %v (the call took %v); want 3 sends, acked after 300 ms", o.res.Sends, o.res.AckedAfter, o.took)
		}
	})
}

// No retry after the ack: the call then waits for its reply until its
// timeout, well past the ack window, and sends a cancel at the end.
func TestAskAckStopsRetries(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		r := newResponder(t, u)
		// Sends due at 0, 100 and 300 ms; no executor at 700 ms.
		inv := newInvoker(t, u, rpc.InvokerConfig{AckAttempts: 3, AckInterval: 100 * time.Millisecond})
		out := invokeAsync(ctxT(t), inv, askCall(1500*time.Millisecond))
		sends := []*paho.Publish{r.next(), r.next()}
		r.answer(sends[1], abi.StatusAccepted, "")
		o := wait(t, out)
		if !errors.Is(o.err, rpc.ErrNoResponse) || errors.Is(o.err, rpc.ErrNoExecutor) || o.took < 1500*time.Millisecond {
			t.Fatalf("after an ack the call waits for its timeout: err %v after %v", o.err, o.took)
		}
		if !errors.Is(o.err, rpc.ErrAcked) || !strings.Contains(o.err.Error(), "the executor acknowledged the request") {
			t.Errorf("the timeout error does not say the request was acked: %v", o.err)
		}
		requests, _ := r.untilCancel()
		if n := len(sends) + len(requests); n != 2 {
			t.Fatalf("%d sends; want 2: the ack stops the retries", n)
		}
	})
}

// A reply without an ack (an executor that answers at once) ends the call
// and its retries.
func TestAskReplyWithoutAck(t *testing.T) {
	u := brokertest.StartEmbedded(t)
	r := newResponder(t, u)
	inv := newInvoker(t, u, rpc.InvokerConfig{})
	out := invokeAsync(ctxT(t), inv, askCall(5*time.Second))
	r.answer(r.next(), abi.StatusOK, "quick")
	if o := wait(t, out); o.err != nil || string(o.res.Payload) != "quick" {
		t.Fatalf("result %+v, err %v", o.res, o.err)
	}
}

// Nobody answers: the call fails fast with ErrNoExecutor after its sends.
func TestAskNoExecutor(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		r := newResponder(t, u) // subscribed, silent: it counts the sends
		inv := newInvoker(t, u, rpc.InvokerConfig{})
		o := wait(t, invokeAsync(ctxT(t), inv, askCall(60*time.Second)))
		if !errors.Is(o.err, rpc.ErrNoExecutor) || !strings.Contains(o.err.Error(), "no executor answered") {
			t.Fatalf("err %v; want ErrNoExecutor", o.err)
		}
		// The defaults: sends at 0, 100, 300, 700 ms, given up at 1.5 s,
		// long before the call's 60 s timeout.
		if o.took < 1500*time.Millisecond || o.took >= 30*time.Second {
			t.Fatalf("no executor answered after %v; want 1.5 s ≤ it, and not the call's timeout", o.took)
		}
		t.Logf("no executor answered after %v", o.took.Round(time.Millisecond))
		requests, _ := r.untilCancel()
		if len(requests) != rpc.DefaultAckAttempts {
			t.Fatalf("%d sends; want %d", len(requests), rpc.DefaultAckAttempts)
		}
		checkSame(t, requests)
	})
}

// No resend is sent at or after the call's end: it could reach an executor
// that would run it for an invoker no longer waiting.
func TestAskNoResendAfterTheEnd(t *testing.T) {
	u := brokertest.StartEmbedded(t)
	r := newResponder(t, u)
	// Sends due at 0 and 100 ms; the next at 300 ms is after the end.
	inv := newInvoker(t, u, rpc.InvokerConfig{AckInterval: 100 * time.Millisecond})
	o := wait(t, invokeAsync(ctxT(t), inv, askCall(250*time.Millisecond)))
	if !errors.Is(o.err, rpc.ErrNoResponse) || !strings.Contains(o.err.Error(), "no executor acknowledged it") {
		t.Fatalf("err %v; want ErrNoResponse without an ack", o.err)
	}
	if requests, _ := r.untilCancel(); len(requests) != 2 {
		t.Fatalf("%d sends in 250 ms; want 2 (at 0 and 100 ms)", len(requests))
	}
}

// checkCancel checks a cancel's properties against the request it cancels.
func checkCancel(t *testing.T, req, cancel *paho.Publish) {
	t.Helper()
	p := cancel.Properties
	if cancel.Topic != askTopic || !bytes.Equal(p.CorrelationData, req.Properties.CorrelationData) ||
		p.ResponseTopic != req.Properties.ResponseTopic || len(cancel.Payload) != 0 {
		t.Fatalf("cancel on %s, correlation %x, response topic %q, payload %q; want %s, %x, %q, none",
			cancel.Topic, p.CorrelationData, p.ResponseTopic, cancel.Payload, askTopic, req.Properties.CorrelationData, req.Properties.ResponseTopic)
	}
	if p.MessageExpiry == nil || *p.MessageExpiry == 0 || *p.MessageExpiry > 10 {
		t.Fatalf("cancel's message expiry %v; want a short one", p.MessageExpiry)
	}
	for key, want := range map[string]string{"cmdhost-cancel": "1", "__protVer": "1.0"} {
		if v, _ := prop(cancel, key); v != want {
			t.Errorf("cancel's %s = %q; want %q", key, v, want)
		}
	}
	for _, key := range []string{"__srcId", "__ts"} {
		if v, _ := prop(cancel, key); v == "" {
			t.Errorf("cancel lacks %s", key)
		}
	}
	if _, ok := prop(cancel, "cmdhost-ack"); ok {
		t.Error("a cancel asks for no ack")
	}
}

// A call's Timestamp is its request's __ts, in place of the invoker's
// clock (one __ts, not two); without one, the invoker's clock's.
func TestCallTimestamp(t *testing.T) {
	u := brokertest.StartEmbedded(t)
	r := newResponder(t, u)
	inv := newInvoker(t, u, rpc.InvokerConfig{})
	for _, ts := range []string{"001800000000000:00007:mine", ""} {
		out := invokeAsync(ctxT(t), inv, rpc.Call{Topic: askTopic, Payload: []byte("x"), Timeout: 5 * time.Second, Timestamp: ts})
		req := r.next()
		var got []string
		for _, up := range req.Properties.User {
			if up.Key == "__ts" {
				got = append(got, up.Value)
			}
		}
		switch {
		case len(got) != 1:
			t.Fatalf("Timestamp %q: __ts %q, want one", ts, got)
		case ts != "" && got[0] != ts:
			t.Fatalf("__ts %q, want the call's %q", got[0], ts)
		case ts == "":
			if _, err := hlc.Parse(got[0]); err != nil || strings.HasSuffix(got[0], ":mine") {
				t.Fatalf("__ts %q, want a reading of the invoker's clock: %v", got[0], err)
			}
		}
		r.answer(req, abi.StatusOK, "done")
		if o := wait(t, out); o.err != nil {
			t.Fatal(o.err)
		}
	}
}

// At its own timeout the call fails with ErrNoResponse and cancels, best
// effort; the 499 that answers the cancel comes too late and is ignored.
func TestAskCancelOnTimeout(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		r := newResponder(t, u)
		inv := newInvoker(t, u, rpc.InvokerConfig{})
		out := invokeAsync(ctxT(t), inv, askCall(300*time.Millisecond))
		req := r.next()
		r.answer(req, abi.StatusAccepted, "")
		o := wait(t, out)
		if !errors.Is(o.err, rpc.ErrNoResponse) {
			t.Fatalf("err %v; want ErrNoResponse", o.err)
		}
		_, cancel := r.untilCancel()
		checkCancel(t, req, cancel)
		r.answer(cancel, abi.StatusCancelled, "") // late: nobody waits for it
	})
}

// A cancelled ctx (Ctrl-C) ends the call with ctx's error and cancels.
func TestAskCancelOnContextCancel(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		r := newResponder(t, u)
		inv := newInvoker(t, u, rpc.InvokerConfig{})
		ctx, cancel := context.WithCancel(ctxT(t))
		out := invokeAsync(ctx, inv, askCall(10*time.Second))
		req := r.next()
		r.answer(req, abi.StatusAccepted, "")
		cancel()
		o := wait(t, out)
		if !errors.Is(o.err, context.Canceled) {
			t.Fatalf("err %v; want context.Canceled", o.err)
		}
		_, c := r.untilCancel()
		checkCancel(t, req, c)
	})
}

// A 499 (the executor cancelled the call) is a result, not an error.
func TestAskCancelledIsAResult(t *testing.T) {
	u := brokertest.StartEmbedded(t)
	r := newResponder(t, u)
	inv := newInvoker(t, u, rpc.InvokerConfig{})
	out := invokeAsync(ctxT(t), inv, askCall(5*time.Second))
	req := r.next()
	r.answer(req, abi.StatusAccepted, "")
	r.answer(req, abi.StatusCancelled, "")
	o := wait(t, out)
	var remote *rpc.RemoteError
	if o.err != nil || o.res.Status != abi.StatusCancelled || !errors.As(o.res.Err(), &remote) {
		t.Fatalf("result %+v, err %v; want status 499", o.res, o.err)
	}
}

// Duplicate replies, acks after the reply and replies to unknown
// correlation data reach no call: the next call on the same invoker gets
// its own reply.
func TestAskLateRepliesIgnored(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		r := newResponder(t, u)
		inv := newInvoker(t, u, rpc.InvokerConfig{})
		out := invokeAsync(ctxT(t), inv, askCall(5*time.Second))
		first := r.next()
		r.answer(first, abi.StatusAccepted, "")
		r.answer(first, abi.StatusOK, "first")
		r.answer(first, abi.StatusOK, "duplicate")
		r.answer(first, abi.StatusAccepted, "")
		r.answer(first, abi.StatusCancelled, "")
		if o := wait(t, out); o.err != nil || string(o.res.Payload) != "first" {
			t.Fatalf("first call: result %+v, err %v", o.res, o.err)
		}

		out = invokeAsync(ctxT(t), inv, askCall(5*time.Second))
		second := r.next()
		for bytes.Equal(second.Properties.CorrelationData, first.Properties.CorrelationData) {
			second = r.next() // a resend of the first call, sent before its ack arrived
		}
		unknown := bytes.Repeat([]byte{7}, 16)
		r.answerTo(second.Properties.ResponseTopic, unknown, abi.StatusOK, "not yours")
		r.answer(first, abi.StatusOK, "late")
		r.answer(second, abi.StatusOK, "second")
		if o := wait(t, out); o.err != nil || string(o.res.Payload) != "second" {
			t.Fatalf("second call: result %+v, err %v", o.res, o.err)
		}
	})
}

// A plain call is v1.0: no extension property, one send, no cancel at its
// timeout.
func TestPlainCallHasNoExtension(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		r := newResponder(t, u)
		inv := newInvoker(t, u, rpc.InvokerConfig{AckInterval: time.Millisecond})
		plain := rpc.Call{Topic: askTopic, Payload: []byte("hi"), Timeout: 200 * time.Millisecond}
		o := wait(t, invokeAsync(ctxT(t), inv, plain))
		if !errors.Is(o.err, rpc.ErrNoResponse) {
			t.Fatalf("err %v; want ErrNoResponse", o.err)
		}
		if strings.Contains(o.err.Error(), "acknowledged") {
			t.Errorf("a plain call's timeout says nothing of acks: %v", o.err)
		}
		req := r.next()
		for _, up := range req.Properties.User {
			if strings.HasPrefix(up.Key, "cmdhost-") {
				t.Fatalf("a plain request carries %s", up.Key)
			}
		}
		// The next message on the topic is the next call's request: the
		// first one was neither sent again nor cancelled.
		plain.Timeout = 5 * time.Second
		out := invokeAsync(ctxT(t), inv, plain)
		next := r.next()
		if bytes.Equal(next.Properties.CorrelationData, req.Properties.CorrelationData) {
			t.Fatalf("a plain call sent a second message: %v", next.Properties.User)
		}
		r.answer(next, abi.StatusOK, "plain")
		if o := wait(t, out); o.err != nil || string(o.res.Payload) != "plain" {
			t.Fatalf("result %+v, err %v", o.res, o.err)
		}
	})
}

// The extensions' properties are not user metadata.
func TestCallMetadataReservedPrefix(t *testing.T) {
	u := brokertest.StartEmbedded(t)
	inv := newInvoker(t, u, rpc.InvokerConfig{})
	c := askCall(time.Second)
	c.Metadata = map[string]string{"cmdhost-cancel": "1"}
	if _, err := inv.Invoke(ctxT(t), c); err == nil || !strings.Contains(err.Error(), "protocol extension") {
		t.Fatalf("err %v; want the key refused", err)
	}
}

// Both halves of the ask extensions, the invoker's and the executor's,
// through a real broker: an ask is answered; a call that ends early, by
// ctx or by its own timeout, closes the handler's context with the
// invoker's cancel as its cause, well before the request's expiry.
func TestAskThroughExecutor(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		started := make(chan struct{}, 4)
		causes := make(chan error, 4)
		block := func(ctx context.Context, _ *abi.Request) (*abi.Response, error) {
			started <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return nil, ctx.Err()
		}
		echo := func(_ context.Context, req *abi.Request) (*abi.Response, error) {
			return &abi.Response{Payload: req.Payload}, nil
		}
		startExecutor(t, u, rpc.Config{ExecutorID: "ask-host"},
			rpc.Command{Name: "echo", Topic: rpc.DefaultTopic, Handler: echo}, rpc.Command{Name: "block", Topic: rpc.DefaultTopic, Handler: block})
		inv := newInvoker(t, u, rpc.InvokerConfig{})
		call := func(cmd string, timeout time.Duration) rpc.Call {
			return rpc.Call{Topic: "rpc/ask-host/" + cmd, Payload: []byte("hi"), Timeout: timeout, Ack: true}
		}
		cancelledByInvoker := func(what string) {
			t.Helper()
			select {
			case cause := <-causes:
				if cause == nil || !strings.Contains(cause.Error(), "cancelled by the invoker") {
					t.Fatalf("%s: the handler's context ended with %v; want the invoker's cancel", what, cause)
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("%s: the handler's context is still open", what)
			}
		}

		res, err := inv.Invoke(ctxT(t), call("echo", 5*time.Second))
		if err != nil || res.Status != abi.StatusOK || string(res.Payload) != "hi" {
			t.Fatalf("echo: %+v, %v", res, err)
		}

		ctx, cancel := context.WithCancel(ctxT(t))
		out := invokeAsync(ctx, inv, call("block", 30*time.Second))
		<-started
		cancel()
		if o := wait(t, out); !errors.Is(o.err, context.Canceled) {
			t.Fatalf("block, ctx cancelled: err %v", o.err)
		}
		cancelledByInvoker("ctx cancelled")

		// Own timeout at 500 ms; the request's expiry (whole seconds) is 1 s
		// and would cut the handler with DeadlineExceeded as its cause.
		if o := wait(t, invokeAsync(ctxT(t), inv, call("block", 500*time.Millisecond))); !errors.Is(o.err, rpc.ErrNoResponse) ||
			!errors.Is(o.err, rpc.ErrAcked) {
			t.Fatalf("block, own timeout: err %v", o.err)
		}
		<-started
		cancelledByInvoker("own timeout")
	})
}

// An executor that acknowledged a request and then died: the invoker,
// sending the request again every AliveInterval, gets no ack for it and
// gives up with ErrExecutorGone, long before the call's timeout (issue 36
// item 9: it waited the whole timeout and said the command ran long).
func TestAskExecutorGone(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		r := newResponder(t, u)
		inv := newInvoker(t, u, rpc.InvokerConfig{AckAttempts: 3, AckInterval: 50 * time.Millisecond, AliveInterval: 300 * time.Millisecond})
		out := invokeAsync(ctxT(t), inv, askCall(60*time.Second))
		r.answer(r.next(), abi.StatusAccepted, "") // acked, then gone
		o := wait(t, out)
		if !errors.Is(o.err, rpc.ErrExecutorGone) || !strings.Contains(o.err.Error(), "the outcome is unknown") {
			t.Fatalf("err %v; want ErrExecutorGone", o.err)
		}
		if o.took >= 30*time.Second {
			t.Fatalf("gone after %v: not before the call's timeout", o.took)
		}
		requests, _ := r.untilCancel()
		checkSame(t, requests)
		if len(requests) != 3 { // the probe and two resends
			t.Fatalf("%d sends after the ack; want 3", len(requests))
		}
		t.Logf("executor gone found after %v", o.took.Round(time.Millisecond))
	})
}

// A live executor acknowledges each send after the first ack: the call
// waits for its reply, however long the command runs.
func TestAskAliveExecutorKeepsTheCall(t *testing.T) {
	u := brokertest.StartEmbedded(t)
	r := newResponder(t, u)
	inv := newInvoker(t, u, rpc.InvokerConfig{AckAttempts: 3, AckInterval: 50 * time.Millisecond, AliveInterval: 100 * time.Millisecond})
	out := invokeAsync(ctxT(t), inv, askCall(60*time.Second))
	var sends []*paho.Publish
	for range 5 { // the first send and four probes, each acked
		p := r.next()
		sends = append(sends, p)
		r.answer(p, abi.StatusAccepted, "")
	}
	checkSame(t, sends)
	r.answer(sends[0], abi.StatusOK, "done")
	if o := wait(t, out); o.err != nil || string(o.res.Payload) != "done" || o.res.Sends < 5 {
		t.Fatalf("result %+v, err %v", o.res, o.err)
	}
}
