package host_test

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmdhost/cmdhost/internal/commands"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/rpc/rpctest"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/wasm"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// BenchmarkHostCost is the host's cost per request with the broker taken
// out: the packet-level fake broker (rpctest), in the same process,
// delivers requests over an in-memory pipe, hostCostInFlight at a time,
// and acks the replies. ns/op is wall time per request on every core the
// machine has: the executor (paho's decode and encode, the protocol's
// checks, the dedup store, the WASM call, the ack) and the fake broker's
// encoding of requests and decoding of replies. allocs/op counts both
// sides too. "traced" runs with an OpenTelemetry tracer provider that
// records every span (exporting none): the cost of tracing. "disk" keeps
// the outcomes of the (non-idempotent) echo in a state store on disk, as
// serve does by default: what the outcome written, and synced, before
// each reply costs beside the same echo with its outcomes in memory.
func BenchmarkHostCost(b *testing.B) {
	for _, c := range []struct {
		name         string
		traced, disk bool
	}{{"wat-echo", false, false}, {"echo", false, false}, {"echo", false, true}, {"wat-echo", true, false}} {
		name := c.name
		label := name
		var stores rpc.Stores
		var backend state.Backend
		if c.disk {
			label += "/disk"
			d, err := state.OpenDisk(state.DiskConfig{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			stores, backend = rpc.StateStores(d), d
		}
		var tracer trace.Tracer
		if c.traced {
			label += "/traced"
			tp := sdktrace.NewTracerProvider()
			defer tp.Shutdown(context.Background())
			tracer = tp.Tracer("bench")
		}
		b.Run(label, func(b *testing.B) {
			bin, err := os.ReadFile(filepath.Join(pluginDir, name+".wasm"))
			if err != nil {
				b.Fatalf("%v (run `make plugins`)", err)
			}
			p, err := sharedEngine(b).Load(context.Background(), "cost-"+name, bin, wasm.PluginConfig{PoolSize: 4})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close(context.Background())
			broker := rpctest.NewBroker()
			defer broker.Close()
			exec, err := rpc.NewExecutor(rpc.Config{ExecutorID: "cost",
				Session:            session.Config{ClientID: "cost", Broker: &url.URL{Scheme: "mqtt", Host: "fake:1883"}, Dial: broker.Dial},
				MaxDedupPerInvoker: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Tracer: tracer,
				Stores: stores, State: backend},
				commands.Fixed([]*wasm.Plugin{p}, pluginmgr.Defaults{ExecTimeout: 10 * time.Second, Concurrency: 4}))
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // hang guard
			defer cancel()
			if err := exec.Start(ctx); err != nil {
				b.Fatal(err)
			}
			defer exec.Stop(context.Background())
			expiry := uint32(60)
			payload := make([]byte, 64)
			req := func() *packets.Publish {
				corr := make([]byte, 16)
				binary.BigEndian.PutUint64(corr[8:], uint64(benchCorrelations.Add(1)))
				return &packets.Publish{Topic: "rpc/cost/" + name, QoS: 1, Payload: payload, Properties: &packets.Properties{
					ResponseTopic: "bench/resp", CorrelationData: corr, ContentType: "text/plain", MessageExpiry: &expiry}}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for sent := 0; sent < b.N; {
				n := min(hostCostInFlight, b.N-sent)
				for range n {
					if _, err := broker.Deliver(req()); err != nil {
						b.Fatal(err)
					}
				}
				sent += n
				if err := broker.WaitPublishedCount(ctx, sent); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			for _, r := range broker.Published() {
				for _, u := range r.Properties.User {
					if u.Key == "__stat" && u.Value != "200" {
						b.Fatalf("a reply with __stat %q: %v", u.Value, r.Properties.User)
					}
				}
			}
		})
	}
}

// hostCostInFlight is how many requests BenchmarkHostCost delivers before
// it waits for their replies.
const hostCostInFlight = 64
