package wasm

import (
	"context"
	"testing"
	"time"
)

func TestEchoRoundTrip(t *testing.T) {
	p := load(t, "echo", PluginConfig{})
	resp := mustCall(t, p, "echo", "hello")
	if string(resp.Payload) != "hello" || resp.ContentType != "text/plain" || resp.Code() != 200 {
		t.Fatalf("echo: got %+v", resp)
	}
	d := p.Description()
	if len(d.Commands) != 1 || d.Commands[0].Name != "echo" || d.Commands[0].Idempotent {
		t.Fatalf("description: %+v", d)
	}
}

func TestSpinStopsAtDeadline(t *testing.T) {
	p := load(t, "spin", PluginConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := call(t, p, ctx, "spin", "")
	late := time.Since(start) - 100*time.Millisecond
	if KindOf(err) != KindDeadline || !errorsIsDeadline(err) {
		t.Fatalf("spin: want deadline error, got %v", err)
	}
	t.Logf("spin stopped %v after its deadline", late)
}
