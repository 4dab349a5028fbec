package commands

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/rpc"
)

// Tracing: the executor and the invokers make the spans of requests and
// calls (internal/rpc, tracing.go); what only the host knows, the plugin
// and module version serving a command, is added here, on the span of
// each call.

// The span attributes naming the plugin serving a call.
const (
	attrPlugin = attribute.Key("cmdhost.plugin")
	attrDigest = attribute.Key("cmdhost.plugin.digest")
)

// Origin names the plugin and the module digest serving a command
// (plugins.Manager.Origin).
type Origin func(command string) (plugin, digest string, ok bool)

// NamePlugin sets, on the span ctx carries when it records, the plugin
// and module digest serving command.
func NamePlugin(ctx context.Context, o Origin, command string) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	if plugin, digest, ok := o(command); ok {
		span.SetAttributes(attrPlugin.String(plugin), attrDigest.String(digest))
	}
}

// Traced is h naming the plugin serving each call on the call's execute
// span.
func Traced(o Origin, h rpc.Handler) rpc.Handler {
	return func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
		NamePlugin(ctx, o, req.Command)
		return h(ctx, req)
	}
}
