package wasm

import (
	"context"
	"testing"
	"time"
)

// BenchmarkDeadlinePassed is the clock read in each tick (metering.go,
// stopCode): time.Until on a deadline with a monotonic reading, which
// reads that clock alone, against time.Now().Before, which reads the wall
// clock too (BENCHMARKS.md, "Longest paths and a cheaper tick").
func BenchmarkDeadlinePassed(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	d, _ := ctx.Deadline()
	b.Run("until", func(b *testing.B) {
		for range b.N {
			if time.Until(d) <= 0 {
				b.Fatal("passed")
			}
		}
	})
	b.Run("now", func(b *testing.B) {
		for range b.N {
			if !time.Now().Before(d) {
				b.Fatal("passed")
			}
		}
	})
}
