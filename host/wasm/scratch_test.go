package wasm

import (
	"context"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
)

func BenchmarkScratchVersion(b *testing.B) {
	for _, n := range []string{"echo", "wat-echo"} {
		b.Run(n, func(b *testing.B) {
			p := load(b, n, PluginConfig{PoolSize: 1})
			inst, _ := p.pool.acquire(context.Background())
			fn := inst.mod.ExportedFunction(abi.ExportABIVersion)
			ctx := context.Background()
			for b.Loop() {
				fn.Call(ctx)
			}
			p.pool.release(inst, true)
		})
	}
}
