package nested_test

import (
	"context"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/nested"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// The cost of a local nested call: the echo plugin called directly; the
// same with the request the dispatcher sends (the chain metadata costs a
// Go guest a map, correlation and ids); the call through the dispatcher
// (Nested.Nest: plan, chain, deadline, fan-in); and a guest's call through
// the host function (nest, which also decodes and encodes JSON;
// "guest, no child" is the same handler with a branch the dispatcher
// refuses before running anything).
func BenchmarkNestedLocal(b *testing.B) {
	h := newNestHost(b, "h1", "nest", "echo")
	echo := h.plugins["echo"]
	ctx := context.Background()
	req := &abi.Request{Command: "echo", Payload: []byte("hello")}
	asNested := &abi.Request{Command: "echo", Payload: []byte("hello"), Metadata: map[string]string{abi.ChainKey: "h1/bench"},
		CorrelationID: parentCorrelation, InvokerID: "h1", ExecutorID: "h1"}
	for _, c := range []struct {
		name string
		req  *abi.Request
	}{{"direct", req}, {"direct, nested request", asNested}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := echo.Invoke(ctx, c.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	n := h.configure(nested.Config{})
	caller := wasm.Caller{Plugin: "bench", Request: &abi.Request{Command: "bench", CorrelationID: parentCorrelation}}
	inv := &abi.Invocation{Branches: []abi.Branch{{Name: "e", Command: "echo", Payload: []byte("hello")}}}
	b.Run("dispatcher", func(b *testing.B) {
		for b.Loop() {
			if r := n.Nest(ctx, caller, inv); r.Branches[0].Status != abi.StatusOK {
				b.Fatalf("%+v", r)
			}
		}
	})
	fan := &abi.Invocation{}
	for _, name := range []string{"a", "b", "c", "d"} {
		fan.Branches = append(fan.Branches, abi.Branch{Name: name, Command: "echo", Payload: []byte("hello")})
	}
	b.Run("dispatcher, fan-out of 4", func(b *testing.B) {
		for b.Loop() {
			if r := n.Nest(ctx, caller, fan); len(r.Branches) != 4 || r.Branches[3].Status != abi.StatusOK {
				b.Fatalf("%+v", r)
			}
		}
	})
	for _, c := range []struct{ name, command string }{{"guest", "echo"}, {"guest, no child", "nope"}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := h.invoke(ctx, "nest", callSpec{Command: c.command, Payload: "hello"}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
