package cache

import (
	"context"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/state/statetest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// openRedisState is the state store of a dedup store on url, bounded by
// limits, with the statetest harness: Redis's own clock (a sleep moves
// it), a list to give back what expired keys held.
func openRedisState(t *testing.T, url string, limits state.Limits) (*statetest.Store, *RedisDedup[string]) {
	t.Helper()
	d := newRedisDedup(t, url, "state")
	t.Cleanup(d.Close)
	rs := d.State(limits)
	return &statetest.Store{Backend: rs, Now: time.Now, Advance: time.Sleep, ClockSlack: time.Second,
		Reap: func(ns string) {
			if _, _, err := rs.List(context.Background(), ns, nil, nil, 1); err != nil {
				t.Fatal(err)
			}
		}}, d
}

// The Redis store runs the table every state store runs (statetest; the
// embedded store runs it in internal/state), each case on an emptied
// Redis.
func TestRedisStateConformance(t *testing.T) {
	r := testkit.StartRedis(t)
	statetest.Run(t, func(t *testing.T, limits state.Limits) *statetest.Store {
		if _, err := testkit.RedisCLI(r.Addr, "FLUSHALL"); err != nil {
			t.Fatal(err)
		}
		s, _ := openRedisState(t, r.URL, limits)
		return s
	})
}
