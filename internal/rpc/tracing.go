package rpc

import (
	"context"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Tracing (OpenTelemetry). A request the executor runs is one span,
// "cmdhost.request COMMAND", whose children are its wait for a slot
// ("cmdhost.queue"), each run of the handler ("cmdhost.execute", with its
// attempt) and the reply ("cmdhost.reply"). Its parent is the trace
// context the request carries in the W3C user properties traceparent and
// tracestate; an invoker with a tracer writes them into its requests, from
// a span of its own ("cmdhost.invoke TOPIC"), so that one trace crosses
// invokers, nested calls and hosts. Without a tracer (Config.Tracer,
// InvokerConfig.Tracer nil) none of this runs.

// The W3C trace context's properties, user properties on MQTT.
const (
	propTraceParent = "traceparent"
	propTraceState  = "tracestate"
)

// traceContext reads and writes the W3C trace context.
var traceContext = propagation.TraceContext{}

// Span attributes.
const (
	attrCommand     = attribute.Key("cmdhost.command")
	attrAttempt     = attribute.Key("cmdhost.attempt")
	attrStatus      = attribute.Key("cmdhost.status")
	attrTopic       = attribute.Key("messaging.destination.name")
	attrCorrelation = attribute.Key("messaging.message.conversation_id")
)

// userProps is a propagation.TextMapCarrier over a message's user
// properties.
type userProps struct{ props *paho.UserProperties }

func (u userProps) Get(key string) string { return u.props.Get(key) }

func (u userProps) Set(key, value string) {
	*u.props = append(*u.props, paho.UserProperty{Key: key, Value: value})
}

func (u userProps) Keys() []string {
	keys := make([]string, 0, len(*u.props))
	for _, p := range *u.props {
		keys = append(keys, p.Key)
	}
	return keys
}

// mapProps is a propagation.TextMapCarrier over a call's metadata.
type mapProps map[string]string

func (m mapProps) Get(key string) string { return m[key] }
func (m mapProps) Set(key, value string) { m[key] = value }
func (m mapProps) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// beginTrace starts a first receipt's request span, a child of the trace
// context the request carries, from the moment it was received.
func (e *Executor) beginTrace(in *incoming) {
	if e.cfg.Tracer == nil {
		return
	}
	ctx := context.Background()
	if in.pub.Properties != nil {
		ctx = traceContext.Extract(ctx, userProps{&in.pub.Properties.User})
	}
	in.traceCtx, in.span = e.cfg.Tracer.Start(ctx, "cmdhost.request "+in.route.cmd.Name,
		trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(in.received),
		trace.WithAttributes(attrCommand.String(in.route.cmd.Name), attrTopic.String(in.pub.Topic),
			attrCorrelation.String(CorrelationString(in.correlation))))
}

// traceQueue records a wait for a slot, from from to now.
func (e *Executor) traceQueue(in *incoming, from time.Time, attempt int, granted bool) {
	if in.span == nil {
		return
	}
	_, s := e.cfg.Tracer.Start(in.traceCtx, "cmdhost.queue", trace.WithTimestamp(from),
		trace.WithAttributes(attrAttempt.Int(attempt)))
	if !granted {
		s.SetStatus(codes.Error, "left the queue without a slot")
	}
	s.End()
}

// traceExecute starts the span of one run of the handler and returns ctx
// carrying it, for the handler's own spans (the host names the plugin
// serving it; a nested call is its child).
func (e *Executor) traceExecute(ctx context.Context, in *incoming, start time.Time, attempt int) (context.Context, trace.Span) {
	if in.span == nil {
		return ctx, nil
	}
	_, s := e.cfg.Tracer.Start(in.traceCtx, "cmdhost.execute", trace.WithTimestamp(start),
		trace.WithAttributes(attrCommand.String(in.route.cmd.Name), attrAttempt.Int(attempt)))
	return trace.ContextWithSpan(ctx, s), s
}

// endSpan ends s with the reply r: its status, an error when it is one.
func endSpan(s trace.Span, r *reply) {
	if s == nil {
		return
	}
	switch {
	case r == nil: // another attempt follows
		s.SetStatus(codes.Error, "cut by the execution timeout: retried")
	case r.none:
		s.SetStatus(codes.Error, "no reply: the request expired")
	default:
		s.SetAttributes(attrStatus.Int(int(r.status)))
		if r.status >= 400 {
			s.SetStatus(codes.Error, r.message)
		}
	}
	s.End()
}

// finishTraced answers a first receipt, in a reply span when it is
// traced, and ends its request span.
func (e *Executor) finishTraced(in *incoming, r *reply) {
	if in.span == nil {
		e.finishFirst(in, r)
		return
	}
	_, s := e.cfg.Tracer.Start(in.traceCtx, "cmdhost.reply")
	e.finishFirst(in, r)
	s.End()
	endSpan(in.span, r)
}

// traceCall starts an invoker's span of call c and writes its trace
// context into the call's metadata (a copy: c's map is the caller's),
// replacing any it had.
func (inv *Invoker) traceCall(ctx context.Context, c *Call) (context.Context, trace.Span) {
	if inv.cfg.Tracer == nil {
		return ctx, nil
	}
	ctx, s := inv.cfg.Tracer.Start(ctx, "cmdhost.invoke "+c.Topic, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrTopic.String(c.Topic)))
	md := make(map[string]string, len(c.Metadata)+2)
	for k, v := range c.Metadata {
		if k != propTraceParent && k != propTraceState {
			md[k] = v
		}
	}
	traceContext.Inject(ctx, mapProps(md))
	c.Metadata = md
	return ctx, s
}

// endCall ends an invoker's span of the call with correlation data corr.
func endCall(s trace.Span, corr []byte, res *Result, err error) {
	if s == nil {
		return
	}
	s.SetAttributes(attrCorrelation.String(CorrelationString(corr)))
	switch {
	case err != nil:
		s.SetStatus(codes.Error, err.Error())
	default:
		s.SetAttributes(attrStatus.Int(int(res.Status)))
		if res.Status >= 400 {
			s.SetStatus(codes.Error, res.Message)
		}
	}
	s.End()
}
