package host

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/rpc"
)

// Tracing: the executor and the invokers make the spans of requests and
// calls (internal/rpc, tracing.go); the host adds what only it knows, the
// plugin and module version serving a command, and the spans of nested
// calls to local commands, which never cross the broker.

// tracerName names the tracer of cmdhost's spans.
const tracerName = "github.com/cmdhost/cmdhost"

// Span attributes the host adds.
const (
	attrPlugin = attribute.Key("cmdhost.plugin")
	attrDigest = attribute.Key("cmdhost.plugin.digest")
)

// tracer returns the server's tracer; nil when tracing is off.
func (s *Server) tracer() trace.Tracer {
	if s.cfg.Tracing == nil {
		return nil
	}
	return s.cfg.Tracing.Tracer(tracerName)
}

// origin names the plugin and the module digest serving a command.
type origin func(command string) (plugin, digest string, ok bool)

// namePlugin sets, on the span ctx carries when it records, the plugin
// and module digest serving command.
func namePlugin(ctx context.Context, o origin, command string) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	if plugin, digest, ok := o(command); ok {
		span.SetAttributes(attrPlugin.String(plugin), attrDigest.String(digest))
	}
}

// tracedHandler is h naming the plugin serving each call on the call's
// execute span.
func tracedHandler(o origin, h rpc.Handler) rpc.Handler {
	return func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
		namePlugin(ctx, o, req.Command)
		return h(ctx, req)
	}
}

// traceLocal starts the span of a nested call to a local command; end
// ends it with the branch's result.
func (n *nestedCalls) traceLocal(ctx context.Context, command string) (context.Context, func(abi.BranchResult)) {
	if n.cfg.Tracer == nil {
		return ctx, func(abi.BranchResult) {}
	}
	ctx, span := n.cfg.Tracer.Start(ctx, "cmdhost.nested "+command, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("cmdhost.command", command)))
	if n.cfg.Origin != nil {
		namePlugin(ctx, n.cfg.Origin, command)
	}
	return ctx, func(res abi.BranchResult) {
		span.SetAttributes(attribute.Int("cmdhost.status", int(res.Status)))
		if res.Outcome != abi.OutcomeDone || res.Status >= 400 {
			span.SetStatus(codes.Error, res.Outcome.String()+": "+res.Message)
		}
		span.End()
	}
}
