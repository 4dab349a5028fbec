package testkit

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Spans is an OpenTelemetry tracer provider whose ended spans the test
// reads as they end, to wait on them rather than on time.
type Spans struct {
	*sdktrace.TracerProvider
	ended chan sdktrace.ReadOnlySpan
	seen  []sdktrace.ReadOnlySpan
}

// NewSpans returns a tracer provider that keeps every span it ends.
func NewSpans(tb testing.TB) *Spans {
	s := &Spans{ended: make(chan sdktrace.ReadOnlySpan, 10000)}
	s.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(endedProcessor{s.ended}))
	tb.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

// Until returns the first ended span named name, waiting up to a minute
// (a hang guard) for it to end; spans ended before it are kept for All.
func (s *Spans) Until(tb testing.TB, name string) sdktrace.ReadOnlySpan {
	tb.Helper()
	return s.UntilFunc(tb, name, func(sp sdktrace.ReadOnlySpan) bool { return sp.Name() == name })
}

// UntilFunc is Until for the first span ok accepts; what names it.
func (s *Spans) UntilFunc(tb testing.TB, what string, ok func(sdktrace.ReadOnlySpan) bool) sdktrace.ReadOnlySpan {
	tb.Helper()
	for _, sp := range s.seen {
		if ok(sp) {
			return sp
		}
	}
	guard := time.After(time.Minute)
	for {
		select {
		case sp := <-s.ended:
			s.seen = append(s.seen, sp)
			if ok(sp) {
				return sp
			}
		case <-guard:
			names := make([]string, len(s.seen))
			for i, sp := range s.seen {
				names[i] = sp.Name()
			}
			tb.Fatalf("no span %s ended within a minute; ended: %v", what, names)
			return nil
		}
	}
}

// All returns the spans Until has seen end so far, and those ended since.
func (s *Spans) All() []sdktrace.ReadOnlySpan {
	for {
		select {
		case sp := <-s.ended:
			s.seen = append(s.seen, sp)
		default:
			return s.seen
		}
	}
}

type endedProcessor struct{ ch chan<- sdktrace.ReadOnlySpan }

func (p endedProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (p endedProcessor) OnEnd(s sdktrace.ReadOnlySpan)                   { p.ch <- s }
func (p endedProcessor) Shutdown(context.Context) error                  { return nil }
func (p endedProcessor) ForceFlush(context.Context) error                { return nil }

// SpanAttr returns the value of the span attribute key, "" when absent.
func SpanAttr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

// ChildOf fails the test unless child's parent is parent, in parent's
// trace.
func ChildOf(tb testing.TB, child, parent sdktrace.ReadOnlySpan) {
	tb.Helper()
	if child.Parent().SpanID() != parent.SpanContext().SpanID() || child.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		tb.Errorf("span %q: parent %v of trace %v; want %q (%v of trace %v)", child.Name(), child.Parent().SpanID(),
			child.SpanContext().TraceID(), parent.Name(), parent.SpanContext().SpanID(), parent.SpanContext().TraceID())
	}
}
