package rpc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/rpc/rpctest"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// openState opens a state store in dir on the harness's frozen time.
func openState(t *testing.T, dir string) *state.Disk {
	t.Helper()
	d, err := state.OpenDisk(state.DiskConfig{Dir: dir, Clock: testkit.NewClock(time.Unix(1_800_000_000, 0))})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var counterSpace = state.Space{NS: "plugin/test"}

// adder adds 1 to the counter n in the call's writes and replies with
// the sum; runs counts its runs.
func adder(runs *atomic.Int64) Handler {
	return func(ctx context.Context, _ *abi.Request) (*abi.Response, error) {
		runs.Add(1)
		n, err := state.TxnFrom(ctx).Add(ctx, counterSpace, []byte("n"), 1)
		if err != nil {
			return nil, err
		}
		return &abi.Response{Payload: []byte(strconv.FormatInt(n, 10))}, nil
	}
}

func counterValue(t *testing.T, d state.Backend) string {
	t.Helper()
	it, err := d.Get(context.Background(), counterSpace.NS, []byte("n"))
	if errors.Is(err, state.ErrNotFound) {
		return "absent"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(it.Value)
}

// TestStateWritesCommitWithTheOutcome: a non-idempotent command's writes
// and outcome commit together, so a duplicate, and the same request
// delivered to a host restarted on the same store, get the outcome and
// write nothing more.
func TestStateWritesCommitWithTheOutcome(t *testing.T) {
	dir := t.TempDir()
	d := openState(t, dir)
	var runs atomic.Int64
	h := start(t, Config{Stores: StateStores(d)}, Command{Name: "add", Handler: adder(&runs)})
	first := h.roundTrip(req("rpc/exec-1/add", 1), 1)
	dup := h.roundTrip(req("rpc/exec-1/add", 1), 2)
	second := h.roundTrip(req("rpc/exec-1/add", 2), 3)
	if string(first.Payload) != "1" || string(dup.Payload) != "1" || string(second.Payload) != "2" {
		t.Fatalf("replies %q %q %q, want 1 1 2", first.Payload, dup.Payload, second.Payload)
	}
	if err := h.exec.Stop(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	d = openState(t, dir) // the host restarted
	defer d.Close()
	h = startOn(t, rpctest.NewBroker(), Config{Stores: StateStores(d)}, Command{Name: "add", Handler: adder(&runs)})
	again := h.roundTrip(req("rpc/exec-1/add", 1), 1)
	if string(again.Payload) != "1" {
		t.Fatalf("the first request delivered again after the restart: %q, want its outcome 1", again.Payload)
	}
	if got := counterValue(t, d); got != "2" || runs.Load() != 2 {
		t.Fatalf("counter %s after %d runs, want 2 after 2", got, runs.Load())
	}
	if third := h.roundTrip(req("rpc/exec-1/add", 3), 2); string(third.Payload) != "3" {
		t.Fatalf("a new request after the restart: %q", third.Payload)
	}
}

// begunStore is a state store whose outcomes say that the commit of
// every request began and its fate is unknown (a store without
// transactions whose host stopped while it applied a commit: stateaio).
type begunStore struct{ *state.Disk }

func (begunStore) Outcome(context.Context, state.OutcomeID) ([]byte, bool, error) {
	return nil, false, fmt.Errorf("%w: the commit began before the host stopped", state.ErrUnknown)
}

// MayHaveOutcome: the outcome of every request may have been recorded
// before this process (the embedded Disk knows of none).
func (begunStore) MayHaveOutcome(state.OutcomeID) bool { return true }

// TestStateCommitBegunIsNotRunAgain: a request whose commit began and
// whose fate the store does not know is answered 500 outcome unknown,
// not run (its writes may have applied), and not refused as a store
// that cannot be read (503 "send it again" would be answered again and
// again).
func TestStateCommitBegunIsNotRunAgain(t *testing.T) {
	d := openState(t, t.TempDir())
	defer d.Close()
	var runs atomic.Int64
	h := start(t, Config{Stores: StateStores(begunStore{d})}, Command{Name: "add", Handler: adder(&runs)})
	r := h.roundTrip(req("rpc/exec-1/add", 1), 1)
	if statusOf(r) != "500" || !strings.HasPrefix(msgOf(r), "outcome unknown") || runs.Load() != 0 {
		t.Fatalf("status %s %q after %d runs, want 500 outcome unknown and no run", statusOf(r), msgOf(r), runs.Load())
	}
	if got := counterValue(t, d); got != "absent" {
		t.Fatalf("the counter is %s", got)
	}
}

// TestStateErrorsCommitNothing: a call that answers an error writes
// nothing, unless its command commits errors.
func TestStateErrorsCommitNothing(t *testing.T) {
	d := openState(t, t.TempDir())
	defer d.Close()
	failing := func(ctx context.Context, _ *abi.Request) (*abi.Response, error) {
		if _, err := state.TxnFrom(ctx).Add(ctx, counterSpace, []byte("n"), 1); err != nil {
			return nil, err
		}
		return &abi.Response{Status: abi.StatusInternalError, AppError: true, Message: "failed after a write"}, nil
	}
	h := start(t, Config{Stores: StateStores(d)}, Command{Name: "fail", Handler: failing},
		Command{Name: "failkeep", Handler: failing, CommitErrors: true})
	if r := h.roundTrip(req("rpc/exec-1/fail", 1), 1); statusOf(r) != "500" {
		t.Fatalf("status %s", statusOf(r))
	}
	if got := counterValue(t, d); got != "absent" {
		t.Fatalf("an error's write committed: %s", got)
	}
	h.roundTrip(req("rpc/exec-1/failkeep", 2), 2)
	if got := counterValue(t, d); got != "1" {
		t.Fatalf("CommitErrors: the write is %s", got)
	}
}

// TestStateConflictRunsAgain: a commit refused because another call wrote
// a key this one read runs the call again on the new value; one that
// keeps conflicting is answered 503 with nothing written.
func TestStateConflictRunsAgain(t *testing.T) {
	d := openState(t, t.TempDir())
	defer d.Close()
	var runs atomic.Int64
	var spoil atomic.Int64 // how many runs another writer spoils
	spoiled := func(ctx context.Context, r *abi.Request) (*abi.Response, error) {
		resp, err := adder(&runs)(ctx, r)
		if err == nil && spoil.Add(-1) >= 0 { // another call commits between this one's read and its commit
			_, err = d.Commit(ctx, &state.Commit{Ops: []state.Op{{Kind: state.OpSet, NS: counterSpace.NS, Key: []byte("n"), Value: []byte("10")}}})
		}
		return resp, err
	}
	h := start(t, Config{Stores: StateStores(d)}, Command{Name: "add", Handler: spoiled})
	spoil.Store(1)
	if r := h.roundTrip(req("rpc/exec-1/add", 1), 1); string(r.Payload) != "11" || runs.Load() != 2 {
		t.Fatalf("after one conflict: %q in %d runs, want 11 in 2", r.Payload, runs.Load())
	}
	spoil.Store(maxStateRuns)
	r := h.roundTrip(req("rpc/exec-1/add", 2), 2)
	if statusOf(r) != "503" || !strings.Contains(msgOf(r), "conflict, not applied") {
		t.Fatalf("a call that always conflicts: %s %q", statusOf(r), msgOf(r))
	}
	if got := counterValue(t, d); got != "10" || runs.Load() != 2+maxStateRuns {
		t.Fatalf("counter %s after %d runs, want 10 after %d", got, runs.Load(), 2+maxStateRuns)
	}
}

func statusOf(p *packets.Publish) string { s, _ := user(p, "__stat"); return s }

func msgOf(p *packets.Publish) string { s, _ := user(p, "__stMsg"); return s }

// TestStateConflictRerunsAlone: calls of one command that all read a key
// before any commits conflict; each runs again alone (its command's lane
// to itself), so each commits at its second run: no third run, no 503.
func TestStateConflictRerunsAlone(t *testing.T) {
	const n = 4
	d := openState(t, t.TempDir())
	defer d.Close()
	var runs atomic.Int64
	read := make(chan struct{})
	var first sync.WaitGroup
	first.Add(n)
	go func() { first.Wait(); close(read) }()
	h := start(t, Config{Stores: StateStores(d)}, Command{Name: "add", Concurrency: n,
		Handler: func(ctx context.Context, r *abi.Request) (*abi.Response, error) {
			resp, err := adder(&runs)(ctx, r)
			if runs.Load() <= n { // the first n runs have all read before any commits
				first.Done()
				<-read
			}
			return resp, err
		}})
	for i := range n {
		if _, err := h.broker.Deliver(req("rpc/exec-1/add", byte(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	pubs, err := h.broker.WaitPublished(ctx(t), n)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range pubs {
		if statusOf(p) != "200" || seen[string(p.Payload)] {
			t.Fatalf("reply %s %q (seen %v)", statusOf(p), p.Payload, seen)
		}
		seen[string(p.Payload)] = true
	}
	if got := counterValue(t, d); got != strconv.Itoa(n) || runs.Load() != 2*n-1 {
		t.Fatalf("counter %s after %d runs, want %d after %d (one commit, %d runs again once each)", got, runs.Load(), n, 2*n-1, n-1)
	}
}
