package host_test

import (
	"fmt"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
)

// BenchmarkReuseVsExecution is the end-to-end latency of an idempotent
// command whose handler takes 5 ms (probe-idem), through the embedded
// broker: "execute" sends a new payload each time (the handler runs),
// "hit" repeats one (the reply comes from the reuse cache). It reports
// the p50 of each.
func BenchmarkReuseVsExecution(b *testing.B) {
	u := brokertest.StartEmbedded(b)
	e := newEnv(b, u, "probe")
	for _, mode := range []string{"execute", "hit"} {
		b.Run(mode, func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				payload := "5:hot"
				if mode == "execute" {
					i++
					payload = "5:" + strconv.Itoa(i) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
				}
				start := time.Now()
				r, err := e.call("probe-idem", payload, 10*time.Second, nil)
				lat = append(lat, time.Since(start))
				if err != nil || string(r.Payload) != payload {
					b.Fatalf("%v %+v", err, r)
				}
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		})
	}
}

// benchCorrelations numbers the benchmarks' requests: correlation data
// must differ across runs (-count) too, or the dedup store answers.
var benchCorrelations atomic.Int64

// p50p99 reports the median and the 99th percentile of lat, in ms.
func p50p99(b *testing.B, lat []time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkCancel is the time from publishing a cancel of a running call
// (spin, a tight loop) to receiving its 499, through the embedded broker:
// two broker hops plus closing the guest's module.
func BenchmarkCancel(b *testing.B) {
	u := brokertest.StartEmbedded(b)
	newEnv(b, u, "spin")
	c := newRawClient(b, u)
	var lat []time.Duration
	for b.Loop() {
		corr := []byte(fmt.Sprintf("cancel-%09d", benchCorrelations.Add(1)))
		c.send(b, "rpc/it-host/spin", corr, "", "cmdhost-ack", "1")
		if got := userProp(c.next(b), "__stat"); got != "202" {
			b.Fatalf("got %s, want 202", got)
		}
		start := time.Now()
		c.send(b, "rpc/it-host/spin", corr, "", "cmdhost-cancel", "1")
		if got := userProp(c.next(b), "__stat"); got != "499" {
			b.Fatalf("got %s, want 499", got)
		}
		lat = append(lat, time.Since(start))
	}
	p50p99(b, lat)
}

// BenchmarkAskVsPlain is the round trip of echo through the embedded
// broker as a plain v1.0 request and as an ask request (whose 202 comes
// before the reply): the extension's cost to the invoker.
func BenchmarkAskVsPlain(b *testing.B) {
	u := brokertest.StartEmbedded(b)
	newEnv(b, u, "echo")
	c := newRawClient(b, u)
	for _, mode := range []string{"plain", "ask"} {
		b.Run(mode, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				corr := []byte(fmt.Sprintf("%s-%013d", mode[:2], benchCorrelations.Add(1)))
				start := time.Now()
				if mode == "ask" {
					c.send(b, "rpc/it-host/echo", corr, "x", "cmdhost-ack", "1")
					if got := userProp(c.next(b), "__stat"); got != "202" {
						b.Fatalf("got %s, want 202", got)
					}
				} else {
					c.send(b, "rpc/it-host/echo", corr, "x")
				}
				if got := userProp(c.next(b), "__stat"); got != "200" {
					b.Fatalf("got %s, want 200", got)
				}
				lat = append(lat, time.Since(start))
			}
			p50p99(b, lat)
		})
	}
}
