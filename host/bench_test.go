package host_test

import (
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host/broker/brokertest"
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
