package rpc

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// With the state store in the dedup store's Redis (RedisConfig.State),
// two executors share it: a call's writes commit in its outcome's script,
// a duplicate on the other executor gets the outcome and writes nothing,
// a new request there sees the first one's write; a call that answers an
// error writes nothing; a commit refused for a condition runs the call
// again, on the other executor's write.
func TestStateWritesCommitWithTheOutcomeOnRedis(t *testing.T) {
	stores := RedisStores(RedisConfig{URL: testkit.StartRedis(t).URL, State: true})
	var runs atomic.Int64
	var spoil atomic.Int64
	var other state.Backend // exec-b's state store, written between a run's read and its commit
	spoiled := func(ctx context.Context, r *abi.Request) (*abi.Response, error) {
		resp, err := adder(&runs)(ctx, r)
		if err == nil && spoil.Add(-1) >= 0 {
			_, err = other.Commit(ctx, &state.Commit{Ops: []state.Op{{Kind: state.OpSet, NS: counterSpace.NS, Key: []byte("n"), Value: []byte("10")}}})
		}
		return resp, err
	}
	failing := func(ctx context.Context, _ *abi.Request) (*abi.Response, error) {
		if _, err := state.TxnFrom(ctx).Add(ctx, counterSpace, []byte("n"), 1); err != nil {
			return nil, err
		}
		return &abi.Response{Status: abi.StatusInternalError, AppError: true, Message: "failed after a write"}, nil
	}
	cmds := func() []Command {
		return []Command{{Name: "add", Topic: "svc/{commandName}", Handler: adder(&runs)},
			{Name: "spoiled", Topic: "svc/{commandName}", Handler: spoiled},
			{Name: "fail", Topic: "svc/{commandName}", Handler: failing}}
	}
	a := start(t, Config{ExecutorID: "exec-a", Stores: stores}, cmds()...)
	b := start(t, Config{ExecutorID: "exec-b", Stores: stores}, cmds()...)
	if a.exec.effects == nil || a.exec.cfg.State == nil {
		t.Fatal("the state store is not in the dedup store's Redis")
	}
	other = b.exec.cfg.State

	first := a.roundTrip(req("svc/add", 1), 1)
	dup := b.roundTrip(req("svc/add", 1), 1)
	second := b.roundTrip(req("svc/add", 2), 2)
	if string(first.Payload) != "1" || string(dup.Payload) != "1" || string(second.Payload) != "2" {
		t.Fatalf("replies %q %q %q, want 1 1 2", first.Payload, dup.Payload, second.Payload)
	}
	if got := counterValue(t, a.exec.cfg.State); got != "2" || runs.Load() != 2 {
		t.Fatalf("counter %s after %d runs, want 2 after 2", got, runs.Load())
	}
	if r := a.roundTrip(req("svc/fail", 3), 2); statusOf(r) != "500" {
		t.Fatalf("fail: status %s", statusOf(r))
	}
	if got := counterValue(t, b.exec.cfg.State); got != "2" {
		t.Fatalf("an error's write committed: %s", got)
	}

	spoil.Store(1)
	if r := a.roundTrip(req("svc/spoiled", 4), 3); string(r.Payload) != "11" || runs.Load() != 4 {
		t.Fatalf("after one conflict: %q in %d runs, want 11 in 4", r.Payload, runs.Load())
	}
	spoil.Store(maxStateRuns)
	r := a.roundTrip(req("svc/spoiled", 5), 4)
	if statusOf(r) != "503" || !strings.Contains(msgOf(r), "conflict, not applied") {
		t.Fatalf("a call that always conflicts: %s %q", statusOf(r), msgOf(r))
	}
	if dup := b.roundTrip(req("svc/spoiled", 5), 3); statusOf(dup) != "503" {
		t.Fatalf("its duplicate on the other executor: %s %q", statusOf(dup), msgOf(dup))
	}
	if got := counterValue(t, a.exec.cfg.State); got != "10" {
		t.Fatalf("counter %s, want 10 (the other writer's)", got)
	}
}
