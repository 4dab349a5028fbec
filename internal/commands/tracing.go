package commands

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
)

// Tracing: the executor and the invokers make the spans of requests and
// calls (internal/rpc, tracing.go); what only the host knows, the plugin
// and module version serving a command, is added here, on the span of
// each call.

// The span attributes naming the plugin serving a call, and its verified
// caller (abi.Caller: the user and client id the broker vouches for, cut
// to 128 bytes and cleaned as in the log, since a client id may be 64 KiB
// of anything).
const (
	attrPlugin         = attribute.Key("cmdhost.plugin")
	attrDigest         = attribute.Key("cmdhost.plugin.digest")
	attrCallerUser     = attribute.Key("cmdhost.caller.user")
	attrCallerClientID = attribute.Key("cmdhost.caller.client_id")
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

// NameCaller sets, on the span ctx carries when it records, the call's
// verified caller, when it has one.
func NameCaller(ctx context.Context, c abi.Caller) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	if c.User != "" {
		span.SetAttributes(attrCallerUser.String(session.CleanText(c.User, 128)))
	}
	if c.ClientID != "" {
		span.SetAttributes(attrCallerClientID.String(session.CleanText(c.ClientID, 128)))
	}
}

// Traced is h naming the plugin serving each call, and its caller, on the
// call's execute span.
func Traced(o Origin, h rpc.Handler) rpc.Handler {
	return func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
		NamePlugin(ctx, o, req.Command)
		NameCaller(ctx, req.Caller)
		return h(ctx, req)
	}
}
