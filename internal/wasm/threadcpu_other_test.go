//go:build !linux

package wasm

import "time"

var processStart = time.Now()

// threadCPU stands in for the thread's CPU time where there is none: wall
// time, which counts the waits for a core too.
func threadCPU() (time.Duration, int) { return time.Since(processStart), 0 }

// otherThreadCPU stands in for another thread's CPU time: wall time.
func otherThreadCPU(int) time.Duration { return time.Since(processStart) }
