package plugins

import (
	"context"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// "tableEntries" sets the plugin's table limit, from 1 to MaxTableEntries.
func TestOperatorTableEntries(t *testing.T) {
	op, err := ParseOperator("/p/echo.json", []byte(`{"tableEntries": 100000}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg := op.pluginConfig(wasm.PluginConfig{TableEntries: 7}); cfg.TableEntries != 100000 {
		t.Fatalf("pluginConfig: TableEntries %d; want 100000", cfg.TableEntries)
	}
	if cfg := (&Operator{}).pluginConfig(wasm.PluginConfig{TableEntries: 7}); cfg.TableEntries != 7 {
		t.Fatalf("a file without tableEntries changed the host's table limit to %d", cfg.TableEntries)
	}
	for _, bad := range []string{`{"tableEntries": 0}`, `{"tableEntries": 134217729}`} {
		_, err := ParseOperator("/p/echo.json", []byte(bad))
		want := `echo.json: "tableEntries": `
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "write a whole number from 1 to 134217728") {
			t.Errorf("%s: %v; want an error naming the field and its range", bad, err)
		}
	}
}

// The operator file's table limit reaches the engine: a Go guest's table
// does not fit in 1,000 entries.
func TestOperatorTableEntriesApplies(t *testing.T) {
	dir := t.TempDir()
	testkit.Install(t, dir, "echo.wasm", readPlugin(t, "echo"))
	testkit.Install(t, dir, "echo.json", []byte(`{"tableEntries": 1000}`))
	m, _ := newManager(t, dir, 0)
	errs := m.LoadAll(context.Background())
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "more than the plugin's table limit of 1000 entries") {
		t.Fatalf("LoadAll: %v; want echo refused for its table", errs)
	}
}

// "maxResponseBytes" sets the plugin's reply bound, from 1 to
// wasm.MaxResponseBytesLimit.
func TestOperatorMaxResponseBytes(t *testing.T) {
	op, err := ParseOperator("/p/echo.json", []byte(`{"maxResponseBytes": 16777216}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg := op.pluginConfig(wasm.PluginConfig{MaxResponseBytes: 7}); cfg.MaxResponseBytes != 16<<20 {
		t.Fatalf("pluginConfig: MaxResponseBytes %d; want 16 MiB", cfg.MaxResponseBytes)
	}
	if cfg := (&Operator{}).pluginConfig(wasm.PluginConfig{MaxResponseBytes: 7}); cfg.MaxResponseBytes != 7 {
		t.Fatalf("a file without maxResponseBytes changed the host's bound to %d", cfg.MaxResponseBytes)
	}
	for _, bad := range []string{`{"maxResponseBytes": 0}`, `{"maxResponseBytes": 267386881}`, `{"maxResponseBytes": "256MiB"}`} {
		_, err := ParseOperator("/p/echo.json", []byte(bad))
		if err == nil || !strings.Contains(err.Error(), `echo.json: "maxResponseBytes": `) || !strings.Contains(err.Error(), "from 1 to 2") {
			t.Errorf("%s: %v; want an error naming the field and its range", bad, err)
		}
	}
}

// An operator file's sizes take units, as serve's flags do: "4MiB",
// "64KiB", "2MB"; a bad one names the forms a size takes.
func TestOperatorSizesTakeUnits(t *testing.T) {
	op, err := ParseOperator("/p/echo.json", []byte(`{"maxResponseBytes": "4MiB", "state": {"maxBytes": "64KiB"},
		"publish": {"topics": ["t/#"], "maxBytes": "2MB"}, "http": {"hosts": ["example.com"], "maxRequestBytes": "1KiB", "maxResponseBytes": 1000}}`))
	if err != nil {
		t.Fatal(err)
	}
	if op.MaxResponseBytes != 4<<20 || op.State.Own.MaxBytes != 64<<10 || op.Publish.MaxBytes != 2e6 ||
		op.HTTP.MaxRequestBytes != 1<<10 || op.HTTP.MaxResponseBytes != 1000 {
		t.Errorf("sizes read: response %d, state %d, publish %d, http %d/%d", op.MaxResponseBytes, op.State.Own.MaxBytes,
			op.Publish.MaxBytes, op.HTTP.MaxRequestBytes, op.HTTP.MaxResponseBytes)
	}
	for _, bad := range []string{`{"maxResponseBytes": "4 megs"}`, `{"maxResponseBytes": true}`, `{"state": {"maxBytes": "0.3KiB"}}`} {
		_, err := ParseOperator("/p/echo.json", []byte(bad))
		if err == nil || !strings.Contains(err.Error(), "echo.json: ") || !strings.Contains(err.Error(), "bytes") {
			t.Errorf("%s: %v; want an error naming the field and the forms of a size", bad, err)
		}
	}
}
