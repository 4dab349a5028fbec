package wasm

import (
	"bytes"
	"context"
	"sort"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

// echoes are the echo commands of the guests, by plugin: the Go SDK's
// echo, the hand-written WAT one, and kit-echo of the guest kit's plugin
// in each SDK's language (testdata/kit).
var echoes = []struct{ plugin, command string }{
	{"echo", "echo"}, {"wat-echo", "wat-echo"},
	{"kit-go", "kit-echo"}, {"kit-rust", "kit-echo"}, {"kit-c", "kit-echo"}, {"kit-as", "kit-echo"},
}

// BenchmarkEchoCall is one call of 100 B in and out on a warm instance:
// pool, request encoding, the guest's decode/handle/encode, response
// decoding.
func BenchmarkEchoCall(b *testing.B) {
	for _, e := range echoes {
		b.Run(e.plugin, func(b *testing.B) {
			p := load(b, e.plugin, PluginConfig{PoolSize: 1})
			req := &abi.Request{Command: e.command, Payload: bytes.Repeat([]byte("x"), 100), ContentType: "text/plain"}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Invoke(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEchoCallWithDeadline adds what every real call has: a context
// deadline, which makes wazero watch the context for the call.
func BenchmarkEchoCallWithDeadline(b *testing.B) {
	p := load(b, "echo", PluginConfig{PoolSize: 1})
	req := &abi.Request{Command: "echo", Payload: bytes.Repeat([]byte("x"), 100)}
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if _, err := p.Invoke(ctx, req); err != nil {
			b.Fatal(err)
		}
		cancel()
	}
}

// BenchmarkInstantiate is the cost of a fresh instance of each guest: what
// a call pays after its instance was discarded. With -benchmem, B/op is
// what an instance allocates: its memory, for the most part.
func BenchmarkInstantiate(b *testing.B) {
	for _, e := range echoes {
		b.Run(e.plugin, func(b *testing.B) {
			p := load(b, e.plugin, PluginConfig{PoolSize: 1})
			b.ReportAllocs()
			for b.Loop() {
				p.ReleaseIdle()
				if _, err := p.Invoke(context.Background(), &abi.Request{Command: e.command}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDeadlineOvershoot measures how long after a 100 ms deadline a
// call to a guest that would never finish returns, and reports the p50,
// p99 and max overshoot. Run it with -benchtime 60x: each iteration is one
// 100 ms call on a fresh instance.
func BenchmarkDeadlineOvershoot(b *testing.B) {
	cases := []struct{ plugin, payload string }{{"spin", ""}, {"sleep", "10000"}}
	for _, c := range cases {
		b.Run(c.plugin, func(b *testing.B) {
			p := load(b, c.plugin, PluginConfig{PoolSize: 1})
			var late []time.Duration
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				deadline, _ := ctx.Deadline()
				_, err := p.Invoke(ctx, &abi.Request{Command: c.plugin, Payload: []byte(c.payload)})
				late = append(late, time.Since(deadline))
				cancel()
				if KindOf(err) != KindDeadline {
					b.Fatalf("want a deadline error, got %v", err)
				}
			}
			sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
			pct := func(q float64) float64 {
				return float64(late[int(q*float64(len(late)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.5), "p50-ms-late")
			b.ReportMetric(pct(0.99), "p99-ms-late")
			b.ReportMetric(pct(1), "max-ms-late")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkLoad is what loading a Go guest costs: "cold" compiles it (a
// fresh in-memory compilation cache each time), "cached" finds it in the
// shared on-disk cache. Both include instantiating the warm instance and
// reading the description.
func BenchmarkLoad(b *testing.B) {
	for _, plugin := range []string{"echo", "kit-rust", "kit-c", "kit-as"} {
		bin := readPlugin(b, plugin)
		run := func(b *testing.B, e *Engine) {
			p, err := e.Load(context.Background(), plugin+"-bench", bin, PluginConfig{PoolSize: 1})
			if err != nil {
				b.Fatal(err)
			}
			_ = p.Close(context.Background())
		}
		b.Run(plugin+"/cold", func(b *testing.B) {
			for b.Loop() {
				e, err := NewEngine(Config{})
				if err != nil {
					b.Fatal(err)
				}
				run(b, e)
				_ = e.Close(context.Background())
			}
		})
		b.Run(plugin+"/cached", func(b *testing.B) {
			for b.Loop() {
				run(b, sharedEngine)
			}
		})
	}
}
