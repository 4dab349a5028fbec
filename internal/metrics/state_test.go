package metrics

import (
	"context"
	"errors"
	"testing"

	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// The state store's metrics follow its use: commits by result, the
// commit latency histogram, each namespace's keys and bytes, the
// totals, its health; without a store there are none.
func TestStateMetrics(t *testing.T) {
	d, err := state.OpenDisk(state.DiskConfig{Dir: t.TempDir(), Limits: state.Limits{MaxTotalBytes: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var src StateSource = d
	c := New(Sources{State: func() StateSource { return src }})
	expect(t, scrape(t, c.Handler()),
		`cmdhost_state_commits_total{result="applied"} 0`, "cmdhost_state_keys 0", "cmdhost_state_namespaces 0",
		"cmdhost_state_max_bytes 1.048576e+06", "cmdhost_state_healthy 1", "cmdhost_state_commit_duration_seconds_count 0")

	ctx := context.Background()
	set := func(ns, k, v string, cond state.Cond) error {
		_, err := d.Commit(ctx, &state.Commit{Ops: []state.Op{{Kind: state.OpSet, NS: ns, Key: []byte(k), Value: []byte(v), If: cond}}})
		return err
	}
	for _, k := range []string{"a", "b"} {
		if err := set("plugin/one", k, "xyz", state.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := set("shared/jobs", "j", "1", state.Cond{}); err != nil {
		t.Fatal(err)
	}
	if err := set("plugin/one", "a", "again", state.Cond{Absent: true}); !errors.Is(err, state.ErrConflict) {
		t.Fatalf("a set if absent of a key there: %v", err)
	}
	if err := set("plugin/one", "big", string(make([]byte, 2<<20)), state.Cond{}); err == nil {
		t.Fatal("a value over the bound was written")
	}
	if err := set("plugin/one", "c", string(make([]byte, 600<<10)), state.Cond{}); err != nil {
		t.Fatal(err)
	}
	if err := set("plugin/one", "d", string(make([]byte, 600<<10)), state.Cond{}); !errors.Is(err, state.ErrQuota) {
		t.Fatalf("a set past the store's bound: %v", err)
	}
	expect(t, scrape(t, c.Handler()),
		`cmdhost_state_commits_total{result="applied"} 4`, `cmdhost_state_commits_total{result="conflict"} 1`,
		`cmdhost_state_commits_total{result="refused"} 1`, `cmdhost_state_commits_total{result="failed"} 0`,
		"cmdhost_state_commit_duration_seconds_count 6",
		`cmdhost_state_namespace_keys{namespace="plugin/one"} 3`, `cmdhost_state_namespace_bytes{namespace="plugin/one"} 614409`,
		`cmdhost_state_namespace_keys{namespace="shared/jobs"} 1`, `cmdhost_state_namespace_bytes{namespace="shared/jobs"} 2`,
		"cmdhost_state_namespaces 2", "cmdhost_state_keys 4", "cmdhost_state_bytes 614411", "cmdhost_state_healthy 1")

	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	expect(t, scrape(t, c.Handler()), "cmdhost_state_healthy 0")

	src = nil
	for l := range scrape(t, c.Handler()) {
		if len(l) > 13 && l[:13] == "cmdhost_state" {
			t.Errorf("without a store: %q", l)
		}
	}
}

// A plugin's state calls are counted by op and result, the results seen
// only.
func TestPluginStateOpsMetric(t *testing.T) {
	var ops wasm.StateOps
	ops[1][0], ops[0][1] = 3, 2 // set ok, get not_found
	c := New(Sources{Plugins: func() []plugins.PluginStatus { return []plugins.PluginStatus{{Name: "kit", StateOps: ops}} }})
	lines := scrape(t, c.Handler())
	expect(t, lines, `cmdhost_plugin_state_ops_total{op="set",plugin="kit",result="ok"} 3`,
		`cmdhost_plugin_state_ops_total{op="get",plugin="kit",result="not_found"} 2`)
	if lines[`cmdhost_plugin_state_ops_total{op="get",plugin="kit",result="ok"} 0`] {
		t.Error("a result never seen has a series")
	}
}
