package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/commands"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/plugins"
)

// TestFuelBudgetFromOperatorFile: a command's "fuel" in the operator file
// bounds each of its calls: the same input uses the same fuel, a budget
// below it is answered 500 "fuel exhausted" with what the call used, and
// the plugin goes on serving, its other commands unbounded. A plugin with
// no budget counts no fuel.
func TestFuelBudgetFromOperatorFile(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	dir := t.TempDir()
	wasmFile, err := os.ReadFile("../testdata/plugins-kit/kit-c.wasm")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kit-c.wasm"), wasmFile, 0o644); err != nil {
		t.Fatal(err)
	}
	m := plugins.NewManager(plugins.Config{Dir: dir, Engine: sharedEngine(t), Defaults: plugins.Defaults{ExecTimeout: 10 * time.Second}})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = m.Close(ctx)
	}()
	if err := m.Reload(context.Background(), "kit-c"); err != nil {
		t.Fatal(err)
	}
	handler := func(command string) rpc.Handler {
		for _, c := range commands.Served(m, false) {
			if c.Name == command {
				return c.Handler
			}
		}
		t.Fatalf("%s not served", command)
		return nil
	}
	lastFuel := func() int64 {
		p, ok := m.Lookup("kit-echo")
		if !ok {
			t.Fatal("kit-echo not served")
		}
		return p.Stats().Fuel.Last
	}
	echo := func() (*abi.Response, error) {
		return handler("kit-echo")(context.Background(), &abi.Request{Command: "kit-echo", Payload: []byte("same input")})
	}
	// With no budget, the plugin counts nothing; a budget for the
	// plugin makes it count every command's calls.
	if _, err := echo(); err != nil || lastFuel() != 0 {
		t.Fatalf("a plugin with no fuel budget counted %d units (%v)", lastFuel(), err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kit-c.json"), []byte(`{"fuel": 5000000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.Reload(context.Background(), "kit-c"); err != nil {
		t.Fatal(err)
	}
	if _, err := echo(); err != nil {
		t.Fatal(err)
	}
	used := lastFuel()
	if used <= 0 {
		t.Fatalf("with a budget, the call counted %d units", used)
	}
	if _, err := echo(); err != nil || lastFuel() != used {
		t.Fatalf("the same call used %d units, then %d (%v)", used, lastFuel(), err)
	}

	op := `{"commands": {"kit-echo": {"fuel": ` + itoa(used-1) + `}, "kit-deadline": {"fuel": 0}}, "fuel": 5000000}`
	if err := os.WriteFile(filepath.Join(dir, "kit-c.json"), []byte(op), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.Reload(context.Background(), "kit-c"); err != nil {
		t.Fatal(err)
	}
	_, err = echo()
	var se *rpc.StatusError
	if !errors.As(err, &se) || se.Status != abi.StatusInternalError || !strings.Contains(se.Message, "fuel exhausted") ||
		!strings.Contains(se.Message, "budget is "+itoa(used-1)) {
		t.Fatalf("a budget one below the call's fuel: want 500 fuel exhausted, got %v", err)
	}
	// The plugin-level budget bounds the other commands; kit-status is far
	// below it.
	if _, err := handler("kit-status")(context.Background(), &abi.Request{Command: "kit-status", Payload: []byte("204")}); err != nil {
		t.Fatalf("the plugin goes on serving: %v", err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
