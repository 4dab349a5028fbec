package wasm

import (
	"context"
	"testing"
)

// TestInstanceOverhead measures what one idle instance costs the host's Go
// heap besides its linear memory (outside the heap: linearmem_linux.go)
// for guests in several languages, and checks that what the budget charges
// for it (instanceOverhead) covers it.
func TestInstanceOverhead(t *testing.T) {
	for _, name := range []string{"wat-echo", "echo", "nest", "kit-rust", "kit-c", "kit-as"} {
		t.Run(name, func(t *testing.T) {
			const n = 8
			p := load(t, name, PluginConfig{PoolSize: 1, MemoryPages: 256})
			charged := p.instanceCost - int64(p.cfg.MemoryPages)*pageSize
			insts := make([]*instance, 0, n)
			defer func() {
				for _, inst := range insts {
					inst.close(p)
				}
			}()
			before := heapAlloc()
			for range n {
				inst, err := p.newInstance(context.Background(), false)
				if err != nil {
					t.Fatal(err)
				}
				insts = append(insts, inst)
			}
			per := (heapAlloc() - before) / n
			t.Logf("%s: %d KiB of Go heap per instance; charged %d KiB besides the memory limit", name, per>>10, charged>>10)
			if per > charged {
				t.Fatalf("an instance costs %d KiB of heap, more than the %d KiB the budget charges", per>>10, charged>>10)
			}
		})
	}
}
