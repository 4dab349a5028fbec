package nested

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/commands"
)

// Tracing: a nested call to a local command never crosses the broker, so
// no executor makes its span; traceLocal does, named after the plugin
// serving the command. A call to another executor is the invoker's span
// (Config.Remote: an invoker with a tracer).

// traceLocal starts the span of a nested call to a local command; end
// ends it with the branch's result.
func (n *Calls) traceLocal(ctx context.Context, command string) (context.Context, func(abi.BranchResult)) {
	if n.cfg.Tracer == nil {
		return ctx, func(abi.BranchResult) {}
	}
	ctx, span := n.cfg.Tracer.Start(ctx, "cmdhost.nested "+command, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("cmdhost.command", command)))
	if n.cfg.Origin != nil {
		commands.NamePlugin(ctx, n.cfg.Origin, command)
	}
	return ctx, func(res abi.BranchResult) {
		span.SetAttributes(attribute.Int("cmdhost.status", int(res.Status)))
		if res.Outcome != abi.OutcomeDone || res.Status >= 400 {
			span.SetStatus(codes.Error, res.Outcome.String()+": "+res.Message)
		}
		span.End()
	}
}
