package nested_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// TestGuestKitState runs the kit's kit-state command in each language
// against a real state store: every call of the API, its typed errors,
// and the commit rule as the executor applies it (a call's writes commit
// when it answers below 400).
func TestGuestKitState(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	for _, lang := range kitLanguages {
		t.Run(lang, func(t *testing.T) {
			store, err := state.OpenDisk(state.DiskConfig{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = store.Close() })
			file := "../plugins-kit/kit-" + lang
			grant := wasm.StateGrant{Own: state.Quota{MaxKeys: 400, MaxBytes: 64 << 10}, Shared: map[string]wasm.StateAccess{"kit": wasm.StateRead}}
			h := newNestHostWith(t, "kit-host", wasm.Config{}, wasm.PluginConfig{PoolSize: 2, Grants: wasm.Grants{State: grant}}, file)
			p := h.plugins[file]
			ns := state.PluginNamespace("kit-" + lang)
			call := func(payload string) (string, int) {
				t.Helper()
				ctx, cancel := context.WithTimeout(ctxT(t), 10*time.Second)
				defer cancel()
				tx := state.NewTxn(store, store.Limits(), time.Now)
				resp, err := p.Invoke(state.WithTxn(ctx, tx), &abi.Request{Command: "kit-state", Payload: []byte(payload),
					ContentType: "text/plain", ExecutorID: "kit-host", CorrelationID: parentCorrelation})
				if err != nil {
					t.Fatalf("kit-state %q: %v", payload, err)
				}
				if resp.Code() < 400 {
					if _, err := tx.Commit(ctx, nil, 0); err != nil {
						t.Fatalf("kit-state %q: commit: %v", payload, err)
					}
				}
				return string(resp.Payload), int(resp.Code())
			}
			want := func(payload, reply string) {
				t.Helper()
				if got, code := call(payload); got != reply || code != 200 {
					t.Fatalf("kit-state %q: %d %q, want %q", payload, code, got, reply)
				}
			}
			version := func(key string) uint64 {
				t.Helper()
				it, err := store.Get(ctxT(t), ns, []byte(key))
				if err != nil {
					t.Fatalf("%s: %v", key, err)
				}
				return it.Version
			}

			t.Run("add", func(t *testing.T) {
				for i := 1; i <= 3; i++ {
					want("add n", strconv.Itoa(i))
				}
				want("set s text", "ok")
				want("add s", "not-integer")
			})
			t.Run("set and get", func(t *testing.T) {
				want("get a", "missing")
				want("set a héllo wörld", "ok")
				want("get a", fmt.Sprintf("héllo wörld@%d", version("a")))
				want("setget b staged", "staged@0") // a call reads its own write, version 0
				if got := string(mustStoreGet(t, store, ns, "b").Value); got != "staged" {
					t.Fatalf("the write committed: %q", got)
				}
			})
			t.Run("conditions", func(t *testing.T) {
				want("absent c 1", "ok")
				want("absent c 2", "conflict")
				v := version("c")
				want(fmt.Sprintf("cas c %d 3", v+1), "conflict")
				want(fmt.Sprintf("cas c %d 3", v), "ok")
				want(fmt.Sprintf("delv c %d", v), "conflict")
				want(fmt.Sprintf("delv c %d", version("c")), "1")
				want("del c", "0")
			})
			t.Run("ttl", func(t *testing.T) {
				before := time.Now()
				want("ttl t 60000 soon gone", "ok")
				it := mustStoreGet(t, store, ns, "t")
				if string(it.Value) != "soon gone" || it.Expires.Before(before.Add(59*time.Second)) || it.Expires.After(time.Now().Add(61*time.Second)) {
					t.Fatalf("ttl: %q expires %v, want a minute after %v", it.Value, it.Expires, before)
				}
			})
			t.Run("an error commits nothing", func(t *testing.T) {
				if _, code := call("fail f"); code != 500 {
					t.Fatalf("fail: status %d", code)
				}
				want("get f", "missing")
			})
			t.Run("list pages", func(t *testing.T) {
				var ops []state.Op
				var keys []string
				for i := range 300 { // more than a page (abi.StateListMax)
					k := fmt.Sprintf("p/%03d", i)
					keys = append(keys, k)
					ops = append(ops, state.Op{Kind: state.OpSet, NS: ns, Key: []byte(k), Value: []byte("v")})
				}
				if _, err := store.Commit(ctxT(t), &state.Commit{Ops: ops}); err != nil {
					t.Fatal(err)
				}
				want("list p/", strings.Join(keys, ","))
				want("list nothing/", "")
			})
			t.Run("shared namespace", func(t *testing.T) {
				if _, err := store.Commit(ctxT(t), &state.Commit{Ops: []state.Op{{Kind: state.OpSet, NS: state.SharedNamespace("kit"),
					Key: []byte("config"), Value: []byte("shared value")}}}); err != nil {
					t.Fatal(err)
				}
				want("shared-get config", "shared value")
				want("shared-set config x", "denied") // granted read-only
			})
			t.Run("bounds", func(t *testing.T) {
				want(fmt.Sprintf("big b %d", state.DefaultMaxValueBytes+1), "too-large")
				want("big b 70000", "quota") // the grant's 64 KiB
				want("big b 1000", "ok")
			})
		})
	}
}

func mustStoreGet(t *testing.T, b state.Backend, ns, key string) state.Item {
	t.Helper()
	it, err := b.Get(context.Background(), ns, []byte(key))
	if err != nil {
		t.Fatalf("%s %s: %v", ns, key, err)
	}
	return it
}
