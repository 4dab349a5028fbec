package adminops_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/adminops"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/wasmtest"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

const pluginDir = "../../testdata/plugins"

// newOps returns the admin ops of m, with cfg's other settings.
func newOps(t *testing.T, cfg adminops.Config) *adminops.Ops {
	t.Helper()
	a, err := adminops.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// newManager returns a plugins manager of an empty temporary folder, and
// the folder.
func newManager(t *testing.T) (*plugins.Manager, string) {
	t.Helper()
	e, err := wasmtest.NewEngine(wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	dir := t.TempDir()
	m := plugins.NewManager(plugins.Config{Dir: dir, Engine: e})
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m, dir
}

// adminOp returns the handler of the admin op named.
func adminOp(t *testing.T, a *adminops.Ops, op string) rpc.Handler {
	t.Helper()
	for _, c := range a.Commands() {
		if c.Name == "admin-"+op {
			return c.Handler
		}
	}
	t.Fatalf("no admin op %s", op)
	return nil
}

// TestAdminInspectTimeouts: inspect shows each command's execution
// timeout as served, where it comes from and its on_timeout policy; the
// host's default only when the manager knows it.
func TestAdminInspectTimeouts(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	dir := t.TempDir()
	for _, name := range []string{"probe", "counter-idem"} {
		bin, err := os.ReadFile(filepath.Join(pluginDir, name+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".wasm"), bin, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	op := `{"timeout": "2s", "commands": {"probe-idem": {"timeout": "500ms", "onTimeout": "retry", "retries": 2}}}`
	if err := os.WriteFile(filepath.Join(dir, "probe.json"), []byte(op), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := wasmtest.NewEngine(wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	m := plugins.NewManager(plugins.Config{Dir: dir, Engine: e, Plugin: wasm.PluginConfig{PoolSize: 1},
		Defaults: plugins.Defaults{ExecTimeout: 10 * time.Second}})
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatal(errs)
	}
	inspect := func(a *adminops.Ops, name string) admin.PluginView {
		t.Helper()
		payload, _ := json.Marshal(admin.Request{Name: name})
		resp, err := adminOp(t, a, "inspect")(context.Background(), &abi.Request{Payload: payload})
		if err != nil || resp.Status != 0 {
			t.Fatalf("inspect %s: %v, %+v", name, err, resp)
		}
		var v admin.PluginView
		if err := json.Unmarshal(resp.Payload, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	timeouts := func(v admin.PluginView) map[string]admin.TimeoutView {
		out := map[string]admin.TimeoutView{}
		for _, c := range v.Timeouts {
			out[c.Command] = c.TimeoutView
		}
		return out
	}

	a := newOps(t, adminops.Config{Manager: m, Dir: dir})
	probe := timeouts(inspect(a, "probe"))
	want := map[string]admin.TimeoutView{
		"probe-idem":    {EffectiveTimeout: "500ms", TimeoutSource: plugins.TimeoutFromOperatorCommand, OnTimeout: "retry", Retries: 2},
		"probe-request": {EffectiveTimeout: "2s", TimeoutSource: plugins.TimeoutFromOperatorPlugin, OnTimeout: "fail"},
		"probe-status":  {EffectiveTimeout: "2s", TimeoutSource: plugins.TimeoutFromOperatorPlugin, OnTimeout: "fail"},
	}
	for name, w := range want {
		if probe[name] != w {
			t.Errorf("%s: %+v, want %+v", name, probe[name], w)
		}
	}
	if len(probe) != 12 {
		t.Errorf("%d commands with timeouts, want probe's 12", len(probe))
	}
	hostDefault := admin.TimeoutView{EffectiveTimeout: "10s", TimeoutSource: plugins.TimeoutFromHost, OnTimeout: "fail"}
	if got := timeouts(inspect(a, "counter-idem"))["counter-idem"]; got != hostDefault {
		t.Errorf("counter-idem: %+v, want %+v", got, hostDefault)
	}
	// list shows no per-command settings.
	resp, err := adminOp(t, a, "list")(context.Background(), &abi.Request{})
	if err != nil {
		t.Fatal(err)
	}
	var views []admin.PluginView
	if err := json.Unmarshal(resp.Payload, &views); err != nil || len(views) != 2 || views[0].Timeouts != nil {
		t.Errorf("list: %v, %+v", err, views)
	}
	// The paths are the folder's, not the machine's: the folder is named
	// by its FolderID alone.
	if strings.Contains(string(resp.Payload), dir) {
		t.Errorf("list shows the folder's absolute path %s: %s", dir, resp.Payload)
	}
	for _, v := range views {
		if v.File != v.Name+".wasm" || v.Folder != admin.FolderID(dir) || v.Folder == "" {
			t.Errorf("list: %s: file %q, folder %q", v.Name, v.File, v.Folder)
		}
	}
	if v := inspect(a, "probe"); v.Operator != "probe.json" || v.File != "probe.wasm" {
		t.Errorf("inspect probe: file %q, operator %q; want them relative to the folder", v.File, v.Operator)
	}
}
