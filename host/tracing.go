package host

import "go.opentelemetry.io/otel/trace"

// Tracing: the executor and the invokers make the spans of requests and
// calls (internal/rpc, tracing.go); the plugin serving each call is named
// on its span by its handler (internal/commands), and the nested calls to
// local commands, which never cross the broker, make spans of their own
// (internal/nested). All of them come from one tracer.

// tracerName names the tracer of cmdhost's spans.
const tracerName = "github.com/cmdhost/cmdhost"

// tracer returns the server's tracer; nil when tracing is off.
func (s *Server) tracer() trace.Tracer {
	if s.cfg.Observe.Tracing == nil {
		return nil
	}
	return s.cfg.Observe.Tracing.Tracer(tracerName)
}
