// Package otlp exports cmdhost's OpenTelemetry spans to a collector over
// OTLP/HTTP (serve --otlp-endpoint). It only builds the tracer provider:
// the spans themselves are made where the work is (internal/rpc for requests
// and calls, host for nested calls), from whatever provider host.Config
// is given, so that tests hand in an in-memory one instead.
package otlp

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
)

// Config names the collector and the process whose spans go to it.
type Config struct {
	// Endpoint is the collector's OTLP/HTTP base URL, e.g.
	// http://127.0.0.1:4318; spans go to its /v1/traces.
	Endpoint string
	// Instance identifies this process among the service's (the
	// executor id, and the client id of a replica).
	Instance string
	// Version is cmdhost's version.
	Version string
}

// Provider returns a tracer provider that batches spans to the collector.
// Its Shutdown sends what is left; call it when the host stops. Nothing
// is sent until the first span: a collector that is down costs dropped
// spans and log lines from the exporter, never requests.
func Provider(cfg Config) (*sdktrace.TracerProvider, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--otlp-endpoint %q: want the collector's OTLP/HTTP URL, e.g. http://127.0.0.1:4318", cfg.Endpoint)
	}
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(u.JoinPath("v1", "traces").String()))
	if err != nil {
		return nil, fmt.Errorf("the OTLP exporter: %w", err)
	}
	res := resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName("cmdhost"), semconv.ServiceInstanceID(cfg.Instance), semconv.ServiceVersion(cfg.Version))
	return sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Second)),
		sdktrace.WithResource(res),
	), nil
}
