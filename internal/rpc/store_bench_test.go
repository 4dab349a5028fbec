package rpc_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// BenchmarkDedupStore is the executor's throughput with the in-memory
// dedup store and with the shared store in Redis (serve --store), at 1, 16
// and 128 requests in flight: a non-idempotent echo (every request is
// claimed and its outcome stored), through mosquitto on loopback, with
// one invoker per request in flight. Reports requests per second and the
// round trip's p50 and p99.
func BenchmarkDedupStore(b *testing.B) {
	broker := brokertest.StartMosquitto(b)
	redis := testkit.StartRedis(b)
	for _, store := range []struct{ name, url string }{{"memory", ""}, {"redis", redis.URL}} {
		for _, inFlight := range []int{1, 16, 128} {
			b.Run(fmt.Sprintf("%s/%d", store.name, inFlight), func(b *testing.B) {
				id := fmt.Sprintf("bench-%s-%d", store.name, inFlight)
				stores := rpc.MemoryStores()
				if store.url != "" {
					stores = rpc.RedisStores(rpc.RedisConfig{URL: store.url})
				}
				exec, err := rpc.NewExecutor(rpc.Config{ExecutorID: id, Session: session.Config{ClientID: id, Broker: broker}, Stores: stores,
					ReuseMaxBytes: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
					[]rpc.Command{{Name: "echo", Topic: rpc.DefaultTopic, Concurrency: 256,
						Handler: func(_ context.Context, r *abi.Request) (*abi.Response, error) {
							return &abi.Response{Payload: r.Payload, ContentType: r.ContentType}, nil
						}}})
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := exec.Start(ctx); err != nil {
					b.Fatal(err)
				}
				defer exec.Stop(context.Background())
				invs := make([]*rpc.Invoker, inFlight)
				for i := range invs {
					if invs[i], err = rpc.NewInvoker(ctx, rpc.InvokerConfig{Session: session.Config{Broker: broker}}); err != nil {
						b.Fatal(err)
					}
					defer invs[i].Close()
				}
				var (
					mu   sync.Mutex
					lat  []time.Duration
					next = make(chan struct{})
					wg   sync.WaitGroup
				)
				for _, inv := range invs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var mine []time.Duration
						for range next {
							start := time.Now()
							res, err := inv.Invoke(ctx, rpc.Call{Topic: "rpc/" + id + "/echo", Payload: []byte("x"),
								ContentType: "text/plain", Timeout: 30 * time.Second})
							if err != nil || res.Status != 200 {
								b.Errorf("%+v %v", res, err)
								return
							}
							mine = append(mine, time.Since(start))
						}
						mu.Lock()
						lat = append(lat, mine...)
						mu.Unlock()
					}()
				}
				b.ResetTimer()
				start := time.Now()
				for b.Loop() {
					next <- struct{}{}
				}
				close(next)
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				if len(lat) > 0 {
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				}
			})
		}
	}
}
