package gate

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// What the gate costs a call (BENCHMARKS.md "The gate"): a handler alone
// (the baseline), behind an allow list, behind a quota counted in memory,
// and behind one counted in a real Redis on loopback (one round trip).
func BenchmarkGate(b *testing.B) {
	ok := func(context.Context, *abi.Request) (*abi.Response, error) { return nil, nil }
	// 64 callers, so that the quota (the most an operator file may set)
	// is never reached on the real clock.
	var reqs [64]*abi.Request
	for i := range reqs {
		reqs[i] = &abi.Request{Command: "buy", Caller: abi.Caller{User: "alice-" + strconv.Itoa(i), ClientID: "cli"}}
	}
	big := `{"quota": "1000000/s", "allow": ["bob", "carol", "ops-*", "client:sensor-*", "alice-*"]}`
	run := func(b *testing.B, h rpc.Handler, admit func(*abi.Request) *rpc.StatusError) {
		ctx := context.Background()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			req := reqs[i%len(reqs)]
			i++
			if admit != nil {
				if se := admit(req); se != nil {
					b.Fatal(se)
				}
			}
			if _, err := h(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("baseline", func(b *testing.B) { run(b, ok, nil) })
	b.Run("allow", func(b *testing.B) {
		g := New(Config{})
		run(b, ok, g.Admit(command(b, "buy", big)))
	})
	b.Run("quota-memory", func(b *testing.B) {
		g := New(Config{})
		run(b, g.Limit(command(b, "buy", big), ok), nil)
	})
	b.Run("quota-redis", func(b *testing.B) {
		r := testkit.StartRedis(b)
		opt, err := redis.ParseURL(r.URL)
		if err != nil {
			b.Fatal(err)
		}
		rdb := redis.NewClient(opt)
		defer rdb.Close()
		g := New(Config{Quotas: cache.NewRedisQuota(rdb)})
		run(b, g.Limit(command(b, "buy", big), ok), nil)
	})
}
