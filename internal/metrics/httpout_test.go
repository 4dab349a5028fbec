package metrics

import (
	"testing"

	"github.com/cmdhost/cmdhost/internal/httpout"
)

func TestHTTPSeries(t *testing.T) {
	buckets := make([]uint64, len(httpout.DurationBuckets))
	for i := range buckets {
		buckets[i] = 3
	}
	buckets[0] = 1
	c := New(Sources{HTTP: func() map[string]httpout.Snapshot {
		return map[string]httpout.Snapshot{"api": {Requests: map[string]int64{"2xx": 2, "denied": 1}, Count: 3, Sum: 0.5, Buckets: buckets}}
	}})
	expect(t, scrape(t, c.Handler()),
		`cmdhost_http_requests_total{outcome="2xx",plugin="api"} 2`,
		`cmdhost_http_requests_total{outcome="denied",plugin="api"} 1`,
		`cmdhost_http_request_duration_seconds_bucket{plugin="api",le="0.005"} 1`,
		`cmdhost_http_request_duration_seconds_bucket{plugin="api",le="+Inf"} 3`,
		`cmdhost_http_request_duration_seconds_count{plugin="api"} 3`,
	)
	absent(t, scrape(t, New(Sources{}).Handler()), "cmdhost_http_")
}
