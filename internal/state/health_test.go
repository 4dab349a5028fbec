package state

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Every commit's latency is counted, refused ones too, in the buckets
// of CommitBuckets.
func TestCommitLatency(t *testing.T) {
	d := open(t, nil, Limits{})
	commit(t, d, set("a", "k", "v"))
	commit(t, d, set("a", "k2", "v"))
	if _, err := d.Commit(ctx, &Commit{Ops: []Op{{Kind: OpSet, NS: "a", Key: []byte("k"), Value: []byte("w"), If: Cond{Absent: true}}}}); !errors.Is(err, ErrConflict) {
		t.Fatalf("a set if absent of a key that exists: %v", err)
	}
	h := d.Stats().CommitLatency
	var inBuckets uint64
	for _, n := range h.Counts {
		inBuckets += n
	}
	if h.Count != 3 || h.Sum <= 0 || inBuckets == 0 || inBuckets > h.Count || len(h.Counts) != len(CommitBuckets) {
		t.Fatalf("latency after 3 commits: %+v", h)
	}
}

// Health is nil while the store writes; after a failed write it tries a
// write of its own, which clears it when the store writes again; a
// closed store is unhealthy, saying so, with the failure before it.
func TestHealth(t *testing.T) {
	d := open(t, nil, Limits{})
	if err := d.Health(); err != nil {
		t.Fatalf("a store just opened: %v", err)
	}
	d.stats.health.wrote(errors.New("no space left on device"))
	if err := d.Health(); err != nil {
		t.Fatalf("after a failed write, on a disk that writes again: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	err := d.Health()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("a closed store: %v", err)
	}
	d.stats.health.wrote(errors.New("no space left on device"))
	if err := d.Health(); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("a write failed within a second of the last probe: %v, want that failure", err)
	}
	d.stats.health.probed = time.Time{} // a second later
	err = d.Health()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("a store that cannot write: %v, want the failed write and why the probe failed", err)
	}
	if again := d.Health(); again != err {
		t.Fatalf("a second Health within a second probed again: %v", again)
	}
}
