package cache

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// ClaimIdle decides when a reader's unsent messages are taken over: a
// replica whose ClaimIdle is Off never takes them, however long they
// have waited; one whose ClaimIdle they have waited takes them all.
func TestRedisOutboxTakeoverSetting(t *testing.T) {
	url := testkit.StartRedis(t).URL
	ctx := context.Background()
	dead := newRedisDedup(t, url, "dead")
	ob := dead.Outbox(RedisOutboxConfig{Group: "host", Consumer: "dead"})
	if _, err := dead.State(state.Limits{}).Commit(ctx, &state.Commit{Messages: msgs(tallyNS, "m", 2)}); err != nil {
		t.Fatal(err)
	}
	if q, err := ob.Queued(ctx, 10); err != nil || len(q) != 2 {
		t.Fatalf("the reader to kill read %q %v", queuedIDs(q), err)
	}
	stream, _ := ob.streamOf(tallyNS)
	testkit.WaitFor(t, "the messages pending 5 ms", func() bool {
		p, err := dead.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: redisOutboxGroup, Start: "-", End: "+", Count: 10}).Result()
		return err == nil && len(p) == 2 && p[0].Idle >= 5*time.Millisecond && p[1].Idle >= 5*time.Millisecond
	})
	dead.Close()

	never := newRedisDedup(t, url, "never")
	defer never.Close()
	off := never.Outbox(RedisOutboxConfig{Group: "host", Consumer: "never", ClaimIdle: -1})
	if q, err := off.Queued(ctx, 10); err != nil || len(q) != 0 || off.TakenOver() != 0 {
		t.Fatalf("a reader whose takeover is off got %q %v, took over %d", queuedIDs(q), err, off.TakenOver())
	}
	soon := newRedisDedup(t, url, "soon")
	defer soon.Close()
	on := soon.Outbox(RedisOutboxConfig{Group: "host", Consumer: "soon", ClaimIdle: 5 * time.Millisecond})
	if q, err := on.Queued(ctx, 10); err != nil || queuedIDs(q) != "m-0 m-1" || on.TakenOver() != 2 {
		t.Fatalf("a reader whose takeover is 5 ms got %q %v, took over %d", queuedIDs(q), err, on.TakenOver())
	}
}
