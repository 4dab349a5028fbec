package wasm

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// counter's tags count 1, 2, 3 … across all instances of the plugin: many
// concurrent calls on a pool of several instances get each tag once. On a
// busy machine the workers may take turns on one instance; the hammer goes
// on, round after round, until the pool has had several (hang guard: 100
// rounds).
func TestCounterSharedAcrossInstances(t *testing.T) {
	const calls, workers = 200, 8
	p := loadAs(t, "counter", testkit.RunName(t, "counter-shared-"), PluginConfig{PoolSize: 4})
	for round := 0; ; round++ {
		if round == 100 {
			t.Fatalf("100 rounds of %d concurrent calls never used two instances: %+v", calls, p.Stats())
		}
		hammerCounter(t, p, round*calls, calls, workers)
		if p.Stats().Instances >= 2 {
			return
		}
	}
}

// hammerCounter makes calls counter calls from workers goroutines and
// checks that their tags are from+1 … from+calls, each once.
func hammerCounter(t *testing.T, p *Plugin, from, calls, workers int) {
	t.Helper()
	var mu sync.Mutex
	var tags []int
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls / workers {
				payload := fmt.Sprintf("w%d-%d", w, i)
				resp, err := p.Invoke(context.Background(), &abi.Request{Command: "counter", Payload: []byte(payload)})
				if err != nil {
					t.Error(err)
					return
				}
				prefix, n, ok := strings.Cut(string(resp.Payload), ":")
				tag, err := strconv.Atoi(n)
				if !ok || prefix != payload || err != nil {
					t.Errorf("counter(%s) = %q", payload, resp.Payload)
					return
				}
				mu.Lock()
				tags = append(tags, tag)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Ints(tags)
	for i, tag := range tags {
		if tag != from+i+1 {
			t.Fatalf("tags must be %d..%d each once; position %d holds %d", from+1, from+calls, i, tag)
		}
	}
}

// Variables outlive instances and plugin versions.
func TestVarsSurviveReplacement(t *testing.T) {
	name := testkit.RunName(t, "probe-vars-")
	p := loadAs(t, "probe", name, PluginConfig{})
	mustCall(t, p, "probe-vars", "set colour blue")
	mustCall(t, p, "probe-vars", "add hits 41")
	if n := p.ReleaseIdle(); n != 1 {
		t.Fatalf("released %d idle instances, want 1", n)
	}
	if got := string(mustCall(t, p, "probe-vars", "get colour").Payload); got != "blue" {
		t.Errorf("after instance replacement: colour = %q", got)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	v2 := loadAs(t, "probe", name, PluginConfig{})
	if got := string(mustCall(t, v2, "probe-vars", "add hits 1").Payload); got != "42" {
		t.Errorf("a new version of the plugin: hits = %q, want 42", got)
	}
	other := loadAs(t, "probe", name+"-other", PluginConfig{})
	if got := string(mustCall(t, other, "probe-vars", "get colour").Payload); got != "<unset>" {
		t.Errorf("another plugin must not see these variables, saw %q", got)
	}
}

func TestVarsErrorsReachGuest(t *testing.T) {
	p := loadAs(t, "probe", testkit.RunName(t, "probe-varerr-"), PluginConfig{})
	mustCall(t, p, "probe-vars", "set word hello")
	if resp := mustCall(t, p, "probe-vars", "add word 1"); !resp.AppError || !strings.Contains(resp.Message, "not a decimal integer") {
		t.Errorf("add on a non-integer: %+v", resp)
	}
	big := "set big " + strings.Repeat("x", 65<<10)
	if resp := mustCall(t, p, "probe-vars", big); !resp.AppError || !strings.Contains(resp.Message, "too large") {
		t.Errorf("a value over the bound: %+v", resp.Message)
	}
}

func TestVarsLimits(t *testing.T) {
	v := newVars(VarLimits{MaxKeys: 2, MaxKeyBytes: 4, MaxValueBytes: 8, MaxTotalBytes: 16})
	cases := []struct {
		name string
		op   func() abi.Result
		want abi.Result
	}{
		{"empty key", func() abi.Result { return v.Set("", nil) }, abi.ResultInvalid},
		{"key too long", func() abi.Result { return v.Set("abcde", nil) }, abi.ResultTooLarge},
		{"value too long", func() abi.Result { return v.Set("a", make([]byte, 9)) }, abi.ResultTooLarge},
		{"first key", func() abi.Result { return v.Set("a", make([]byte, 8)) }, abi.ResultOK},
		{"total bound", func() abi.Result { return v.Set("b", make([]byte, 8)) }, abi.ResultLimit},
		{"second key", func() abi.Result { return v.Set("b", []byte("1")) }, abi.ResultOK},
		{"key count bound", func() abi.Result { return v.Set("c", nil) }, abi.ResultLimit},
		{"overwrite frees space", func() abi.Result { return v.Set("a", nil) }, abi.ResultOK},
		{"add", func() abi.Result { _, r := v.Add("b", 41); return r }, abi.ResultOK},
		{"add overflow", func() abi.Result { _, r := v.Add("b", 1<<63-1); return r }, abi.ResultTooLarge},
		{"add non-integer", func() abi.Result { v.Set("a", []byte("x")); _, r := v.Add("a", 1); return r }, abi.ResultNotInteger},
	}
	for _, c := range cases {
		if got := c.op(); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
	if got, _ := v.Get("b"); string(got) != "42" {
		t.Errorf("b = %q after the failed overflow, want 42", got)
	}
	if keys, bytes := v.Len(); keys != 2 || bytes != 5 {
		t.Errorf("Len = %d keys, %d bytes; want 2, 5", keys, bytes)
	}
}
