package state_test

import (
	"context"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/state/statetest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The embedded store runs the table every state store runs
// (statetest; the Redis store runs it in package cache), on a test clock.
func TestDiskConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T, limits state.Limits) *statetest.Store {
		clk := testkit.NewClock(time.Unix(1_700_000_000, 0))
		d, err := state.OpenDisk(state.DiskConfig{Dir: t.TempDir(), Limits: limits, Clock: clk, SweepEvery: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		return &statetest.Store{Backend: d, Now: clk.Now, Advance: clk.Add,
			Reap: func(string) {
				if err := d.Sweep(context.Background()); err != nil {
					t.Fatal(err)
				}
			}}
	})
}
