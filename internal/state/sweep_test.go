package state

import (
	"fmt"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// hasOutcome reports whether the database still holds id's outcome
// record, kept or not (Outcome hides one past its keep-until).
func hasOutcome(t *testing.T, d *Disk, id OutcomeID) bool {
	t.Helper()
	_, closer, err := d.db.Get(outcomeKey(outcomeHash(id)))
	if err != nil {
		return false
	}
	_ = closer.Close()
	return true
}

func recordOutcome(t *testing.T, d *Disk, id OutcomeID, value string, until time.Time) {
	t.Helper()
	if _, err := d.Commit(ctx, &Commit{Outcome: &Outcome{ID: id, Value: []byte(value), KeepUntil: until}}); err != nil {
		t.Fatal(err)
	}
}

// TestSweepKeepsOutcomeRecordedAgain: an outcome recorded again for
// longer (by this process, or by one before it) outlives the first
// keep-until's sweep, and goes at its own.
func TestSweepKeepsOutcomeRecordedAgain(t *testing.T) {
	clk := testkit.NewClock(time.Unix(1_700_000_000, 0))
	dir := t.TempDir()
	d, err := OpenDisk(DiskConfig{Dir: dir, Clock: clk, SweepEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	here, before := OutcomeID{Correlation: "here", ResponseTopic: "r"}, OutcomeID{Correlation: "before", ResponseTopic: "r"}
	recordOutcome(t, d, before, "first", clk.Now().Add(time.Second))
	_ = d.Close()
	if d, err = OpenDisk(DiskConfig{Dir: dir, Clock: clk, SweepEvery: time.Hour}); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	recordOutcome(t, d, before, "second", clk.Now().Add(3*time.Second))
	recordOutcome(t, d, here, "first", clk.Now().Add(time.Second))
	recordOutcome(t, d, here, "second", clk.Now().Add(3*time.Second))
	clk.Add(2 * time.Second)
	if err := d.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []OutcomeID{here, before} {
		if v, found, err := d.Outcome(ctx, id); err != nil || !found || string(v) != "second" {
			t.Fatalf("%s after the first keep-until's sweep: %q %v %v, want the second outcome", id.Correlation, v, found, err)
		}
	}
	clk.Add(2 * time.Second)
	if err := d.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []OutcomeID{here, before} {
		if hasOutcome(t, d, id) {
			t.Fatalf("%s: the sweep past the second keep-until left it", id.Correlation)
		}
	}
}

// TestSweepCatchesUp: more outcomes expired than one sweep removes
// (sweepMax) are removed by the sweeps that follow at once, not one
// sweep a SweepEvery.
func TestSweepCatchesUp(t *testing.T) {
	clk := testkit.NewClock(time.Unix(1_700_000_000, 0))
	d := open(t, clk, Limits{})
	swept := make(chan bool, 16)
	d.afterSweep = func(behind bool) { swept <- behind }
	const n = 2*sweepMax + 10
	var ids []OutcomeID
	for i := range n {
		id := OutcomeID{Correlation: fmt.Sprint(i), ResponseTopic: "r"}
		ids = append(ids, id)
		recordOutcome(t, d, id, "v", clk.Now().Add(time.Second))
	}
	clk.Add(time.Second)
	if err := d.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	sweeps := 0
	for behind := true; behind; sweeps++ {
		behind = <-swept
	}
	if sweeps != 3 {
		t.Fatalf("%d sweeps, want 3 for %d outcomes", sweeps, n)
	}
	for _, id := range ids {
		if hasOutcome(t, d, id) {
			t.Fatalf("outcome %s left after the sweeps", id.Correlation)
		}
	}
}

// TestSweepFindsOutcomeBehindIt: the sweep reads the outcome index from
// where the last one stopped, and from the start again once an outcome
// is recorded with a keep-until behind that (already past).
func TestSweepFindsOutcomeBehindIt(t *testing.T) {
	clk := testkit.NewClock(time.Unix(1_700_000_000, 0))
	d := open(t, clk, Limits{})
	start := clk.Now()
	a, late := OutcomeID{Correlation: "a", ResponseTopic: "r"}, OutcomeID{Correlation: "late", ResponseTopic: "r"}
	recordOutcome(t, d, a, "v", start.Add(time.Second))
	clk.Add(2 * time.Second)
	if err := d.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if hasOutcome(t, d, a) {
		t.Fatal("the sweep left an outcome past its keep-until")
	}
	recordOutcome(t, d, late, "v", start.Add(time.Second/2))
	if err := d.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if hasOutcome(t, d, late) {
		t.Fatal("the sweep left an outcome recorded behind where the last sweep stopped")
	}
}
