package commands_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/commands"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/wasmtest"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

const pluginDir = "../../testdata/plugins"

// swapResolver answers the first lookup with old and later ones with cur,
// like a reload that swaps versions between a lookup and the call.
type swapResolver struct {
	old, cur *wasm.Plugin
	lookups  int
}

func (r *swapResolver) Lookup(string) (*wasm.Plugin, bool) {
	r.lookups++
	if r.lookups == 1 {
		return r.old, true
	}
	return r.cur, r.cur != nil
}

// A call that finds its version closed by a reload runs on the new one: no
// request is lost to a swap. A command no longer served is 503.
func TestResolvingHandlerRetriesAfterSwap(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	engine, err := wasmtest.NewEngine(wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close(context.Background())
	load := func(name string) *wasm.Plugin {
		bin, err := os.ReadFile(pluginDir + "/echo.wasm")
		if err != nil {
			t.Fatal(err)
		}
		p, err := engine.Load(context.Background(), name, bin, wasm.PluginConfig{PoolSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	old, cur := load("echo-v1"), load("echo-v2")
	defer cur.Close(context.Background())
	_ = old.Close(context.Background()) // swapped out and drained
	r := &swapResolver{old: old, cur: cur}
	resp, err := commands.Resolving(r, "echo")(context.Background(), &abi.Request{Command: "echo", Payload: []byte("hi")})
	if err != nil || string(resp.Payload) != "hi" || r.lookups != 2 {
		t.Fatalf("after a swap: %+v %v (lookups %d)", resp, err, r.lookups)
	}
	gone := &swapResolver{old: old}
	_, err = commands.Resolving(gone, "echo")(context.Background(), &abi.Request{Command: "echo"})
	var se *rpc.StatusError
	if !errors.As(err, &se) || se.Status != abi.StatusServiceUnavailable {
		t.Fatalf("a command no longer served: %v", err)
	}
}
