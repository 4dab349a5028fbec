package state

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

func TestOutbox(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDisk(DiskConfig{Dir: dir, Limits: Limits{MaxOutboxBytes: 100}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{{ID: "a", Body: []byte("one")}, {ID: "b", Body: []byte("two")}}
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{set("n", "k", "v")}, Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.OutboxReady():
	default:
		t.Fatal("no signal for messages that joined the outbox")
	}
	// A refused commit queues nothing.
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{{Kind: OpSet, NS: "n", Key: []byte("k"), If: Cond{Absent: true}}},
		Messages: []Message{{ID: "c", Body: []byte("never")}}}); !errors.Is(err, ErrConflict) {
		t.Fatal(err)
	}
	// Nor does one that would pass the bound.
	var qe *QuotaError
	if _, err := d.Commit(ctx, &Commit{Messages: []Message{{ID: "big", Body: make([]byte, 100)}}}); !errors.As(err, &qe) {
		t.Fatalf("a commit over the outbox's bytes: %v", err)
	}
	if got := d.OutboxBytes(); got != 8 {
		t.Fatalf("outbox bytes %d, want 8", got)
	}
	_ = d.Close()

	d, err = OpenDisk(DiskConfig{Dir: dir, Limits: Limits{MaxOutboxBytes: 100}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	q, err := d.Queued(ctx, 10)
	if err != nil || len(q) != 2 || q[0].ID != "a" || string(q[1].Body) != "two" {
		t.Fatalf("queued after reopening: %+v %v", q, err)
	}
	if err := d.Dequeue(ctx, [][]byte{q[0].Key}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Commit(ctx, &Commit{Messages: []Message{{ID: "c", Body: []byte("three")}}}); err != nil {
		t.Fatal(err)
	}
	q, _ = d.Queued(ctx, 10)
	if fmt.Sprint(ids(q)) != "[b c]" || d.OutboxBytes() != 4+6 {
		t.Fatalf("queued %v, %d bytes", ids(q), d.OutboxBytes())
	}
}

func ids(q []Queued) []string {
	var out []string
	for _, m := range q {
		out = append(out, m.ID)
	}
	return out
}

func TestTxnPublish(t *testing.T) {
	d := open(t, nil, Limits{})
	tx := newTxn(d)
	child := tx.Child()
	if err := tx.Publish("ns", []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := child.Publish("ns", []byte("nested")); err != nil {
		t.Fatal(err)
	}
	if err := child.Merge(); err != nil {
		t.Fatal(err)
	}
	dropped := tx.Child()
	_ = dropped.Publish("ns", []byte("a failed nested call's"))
	tx.NameMessages(func(i int) string { return fmt.Sprint("m", i) })
	if _, err := tx.Commit(ctx, nil, 0); err != nil {
		t.Fatal(err)
	}
	q, _ := d.Queued(ctx, 10)
	if fmt.Sprint(ids(q)) != "[m0 m1]" || string(q[1].Body) != "nested" {
		t.Fatalf("queued %v", q)
	}
}

// TestMayHaveOutcome: the outcomes found at Open are told apart from
// those never recorded, in memory; those recorded since are not counted
// (their process remembers them), and none after the last keep-until.
func TestMayHaveOutcome(t *testing.T) {
	dir := t.TempDir()
	clk := testkit.NewClock(time.Unix(1_800_000_000, 0))
	d, err := OpenDisk(DiskConfig{Dir: dir, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	var ids []OutcomeID
	for i := range 1000 {
		id := OutcomeID{Correlation: fmt.Sprint(i), ResponseTopic: "r"}
		ids = append(ids, id)
		if _, err := d.Commit(ctx, &Commit{Outcome: &Outcome{ID: id, Value: []byte("v"), KeepUntil: clk.Now().Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
	}
	if d.MayHaveOutcome(ids[0]) {
		t.Fatal("an outcome of this process's counted as a prior one")
	}
	_ = d.Close()
	if d, err = OpenDisk(DiskConfig{Dir: dir, Clock: clk}); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, id := range ids {
		if !d.MayHaveOutcome(id) {
			t.Fatalf("%v: recorded before Open, said surely not", id)
		}
	}
	false_ := 0
	for i := range 10000 {
		if d.MayHaveOutcome(OutcomeID{Correlation: fmt.Sprint("new-", i), ResponseTopic: "r"}) {
			false_++
		}
	}
	if false_ > 300 { // about 1% expected
		t.Fatalf("%d of 10,000 new ids may have an outcome", false_)
	}
	clk.Add(time.Hour)
	if d.MayHaveOutcome(ids[0]) {
		t.Fatal("an outcome past its keep-until")
	}
}
