package trigger_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/trigger"
)

// lostAnswer is a state store whose first commit applies and then
// answers state.ErrUnknown, as Redis does when its answer is lost and
// cannot be settled.
type lostAnswer struct {
	*state.Disk
	lost atomic.Bool
}

func (l *lostAnswer) Commit(ctx context.Context, c *state.Commit) ([]state.Result, error) {
	res, err := l.Disk.Commit(ctx, c)
	if err == nil && l.lost.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("%w: the answer was lost", state.ErrUnknown)
	}
	return res, err
}

// A message with an id whose commit applied but answered "unknown" is
// handled: the attempt after finds its outcome, and neither runs the
// handler again nor applies its writes twice.
func TestTriggerCommitUnknownNotRunAgain(t *testing.T) {
	u := brokertest.StartEmbedded(t)
	disk, err := state.OpenDisk(state.DiskConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = disk.Close() })
	store := &lostAnswer{Disk: disk}
	var runs atomic.Int64
	done := make(chan *abi.Request, 10)
	space := state.Space{NS: "p"}
	count := trigger.Trigger{Name: "count", Filter: filter(t, "count"), Topic: filter(t, "count"),
		Handler: func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
			runs.Add(1)
			if _, err := state.TxnFrom(ctx).Add(ctx, space, []byte("n"), 1); err != nil {
				return nil, err
			}
			done <- req
			return nil, nil
		}}
	r := start(t, u, trigger.Config{State: store}, count)
	pub := testkit.Dial(t, u, "source")
	pub.Publish(t, &paho.Publish{QoS: 1, Topic: "count", Properties: &paho.PublishProperties{
		User: paho.UserProperties{{Key: abi.MessageIDProperty, Value: "m-1"}}}})
	testkit.WaitFor(t, "the message done", func() bool { c := r.Counters("count"); return c.Handled+c.Dropped == 1 })
	it, err := disk.Get(context.Background(), "p", []byte("n"))
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Counters("count"); string(it.Value) != "1" || runs.Load() != 1 || c.Handled != 1 || c.Failures != 0 {
		t.Errorf("counter %s after %d runs, %+v; want 1 after one run, handled", it.Value, runs.Load(), c)
	}
}
