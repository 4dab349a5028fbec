package plugins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// Check applies the load's clash rule to a module not installed yet and
// changes nothing: what plugin install and dev refuse before copying.
func TestCheckAppliesTheClashRule(t *testing.T) {
	dir := t.TempDir()
	watEcho := readPlugin(t, "wat-echo")
	testkit.Install(t, dir, "a.wasm", watEcho)
	m, _ := newManager(t, dir, 0)
	ctx := context.Background()
	if errs := m.LoadAll(ctx); len(errs) != 0 {
		t.Fatal(errs)
	}

	err := m.Check(ctx, "b", variant(watEcho, "b"))
	var clash *ClashError
	if !errors.As(err, &clash) || clash.Plugin != "b" || clash.Command != "wat-echo" || clash.Other != "a" {
		t.Fatalf("Check(b declaring a's command) = %v (%+v); want a clash naming a", err, clash)
	}
	if _, ok := status(m, "b"); ok {
		t.Errorf("Check left b in the status")
	}
	// A new version of the plugin serving the command is no clash, and a
	// plugin with commands of its own neither.
	for name, bin := range map[string][]byte{"a": variant(watEcho, "a2"), "c": readPlugin(t, "counter")} {
		if err := m.Check(ctx, name, bin); err != nil {
			t.Errorf("Check(%s) = %v; want nil", name, err)
		}
	}
	if p, _ := m.Lookup("wat-echo"); p == nil || p.Name() != "a" || len(m.Commands()) != 1 {
		t.Errorf("Check changed what is served: %v", served(m))
	}
	// Its operator file applies: disabled, the module would not be served.
	if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(`{"enabled": false}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.Check(ctx, "c", readPlugin(t, "counter")); err == nil || !strings.Contains(err.Error(), `disabled by `+filepath.Join(dir, "c.json")) {
		t.Errorf("Check(c, disabled by c.json) = %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "c.json")); err != nil {
		t.Fatal(err)
	}
	if err := m.Check(ctx, "c", []byte("not wasm")); err == nil {
		t.Errorf("Check(not wasm) = nil")
	}
}
