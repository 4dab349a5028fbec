package rpc_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// An invoker with a tracer writes its span's trace context into the
// request; the executor's spans of the request (request, queue, execute,
// reply) continue that trace, each process with its own tracer provider.
// Without a tracer the invoker writes none, and the request starts a
// trace of its own.
func TestTraceAcrossInvokerAndExecutor(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		hostSpans, invokerSpans := testkit.NewSpans(t), testkit.NewSpans(t)
		type seen struct {
			traced      bool
			traceparent string
		}
		handled := make(chan seen, 10)
		echo := func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
			handled <- seen{trace.SpanContextFromContext(ctx).IsValid(), req.Metadata["traceparent"]}
			return &abi.Response{Payload: req.Payload}, nil
		}
		startExecutor(t, u, rpc.Config{ExecutorID: "trace-host", Tracer: hostSpans.Tracer("test")},
			rpc.Command{Name: "echo", Topic: rpc.DefaultTopic, Handler: echo})
		call := rpc.Call{Topic: "rpc/trace-host/echo", Payload: []byte("hi"), Timeout: 10 * time.Second, Ack: true,
			Metadata: map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}} // replaced

		inv := newInvoker(t, u, rpc.InvokerConfig{Tracer: invokerSpans.Tracer("test")})
		if res, err := inv.Invoke(ctxT(t), call); err != nil || string(res.Payload) != "hi" {
			t.Fatalf("invoke: %v %v", res, err)
		}
		if s := <-handled; !s.traced || s.traceparent == "" || strings.Contains(s.traceparent, "0af7651916cd43dd8448eb211c80319c") {
			t.Fatalf("the handler: traced %v, traceparent %q; want its span in ctx and the invoker's trace context", s.traced, s.traceparent)
		}
		invoke := invokerSpans.Until(t, "cmdhost.invoke rpc/trace-host/echo")
		request := hostSpans.Until(t, "cmdhost.request echo") // ends last, after the reply
		testkit.ChildOf(t, request, invoke)
		if invoke.SpanKind() != trace.SpanKindClient || request.SpanKind() != trace.SpanKindServer {
			t.Errorf("kinds: invoke %v, request %v", invoke.SpanKind(), request.SpanKind())
		}
		for _, name := range []string{"cmdhost.queue", "cmdhost.execute", "cmdhost.reply"} {
			testkit.ChildOf(t, hostSpans.Until(t, name), request)
		}
		execute := hostSpans.Until(t, "cmdhost.execute")
		if testkit.SpanAttr(execute, "cmdhost.attempt") != "1" || testkit.SpanAttr(request, "cmdhost.status") != "200" || testkit.SpanAttr(invoke, "cmdhost.status") != "200" ||
			testkit.SpanAttr(request, "messaging.message.conversation_id") != testkit.SpanAttr(invoke, "messaging.message.conversation_id") {
			t.Errorf("attributes: execute %v, request %v, invoke %v", execute.Attributes(), request.Attributes(), invoke.Attributes())
		}

		// No tracer: no trace context in the request.
		plain := newInvoker(t, u, rpc.InvokerConfig{})
		call.Metadata = nil
		if _, err := plain.Invoke(ctxT(t), call); err != nil {
			t.Fatal(err)
		}
		if s := <-handled; s.traceparent != "" {
			t.Fatalf("an invoker without a tracer sent traceparent %q", s.traceparent)
		}
		hostSpans.UntilFunc(t, "of a request with no trace context (a root)", func(sp sdktrace.ReadOnlySpan) bool {
			return sp.Name() == "cmdhost.request echo" && !sp.Parent().IsValid()
		})
	})
}
