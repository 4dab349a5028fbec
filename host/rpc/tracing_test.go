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
	"github.com/cmdhost/cmdhost/host/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// attr returns the value of the span attribute key, "" when absent.
func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// childOf fails unless child's parent is parent.
func childOf(t *testing.T, child, parent sdktrace.ReadOnlySpan) {
	t.Helper()
	if child.Parent().SpanID() != parent.SpanContext().SpanID() || child.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Errorf("span %s: parent %v, want %s %v", child.Name(), child.Parent().SpanID(), parent.Name(), parent.SpanContext().SpanID())
	}
}

// An invoker with a tracer writes its span's trace context into the
// request; the executor's spans of the request (request, queue, execute,
// reply) continue that trace, each process with its own tracer provider.
// Without a tracer the invoker writes none, and the request starts a
// trace of its own.
func TestTraceAcrossInvokerAndExecutor(t *testing.T) {
	forEachBroker(t, func(t *testing.T, u *url.URL) {
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
		exec, err := rpc.NewExecutor(rpc.Config{ExecutorID: "trace-host", ClientID: "trace-host-" + strings.ReplaceAll(t.Name(), "/", "-"),
			Broker: u, Tracer: hostSpans.Tracer("test")}, []rpc.Command{{Name: "echo", Topic: rpc.DefaultTopic, Handler: echo}})
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
		childOf(t, request, invoke)
		if invoke.SpanKind() != trace.SpanKindClient || request.SpanKind() != trace.SpanKindServer {
			t.Errorf("kinds: invoke %v, request %v", invoke.SpanKind(), request.SpanKind())
		}
		for _, name := range []string{"cmdhost.queue", "cmdhost.execute", "cmdhost.reply"} {
			childOf(t, hostSpans.Until(t, name), request)
		}
		execute := hostSpans.Until(t, "cmdhost.execute")
		if attr(execute, "cmdhost.attempt") != "1" || attr(request, "cmdhost.status") != "200" || attr(invoke, "cmdhost.status") != "200" ||
			attr(request, "messaging.message.conversation_id") != attr(invoke, "messaging.message.conversation_id") {
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
