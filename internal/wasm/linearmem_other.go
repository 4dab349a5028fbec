//go:build !linux

package wasm

import "github.com/tetratelabs/wazero/experimental"

// newLinearMemory is a Go slice (linearmem_slice.go) on systems without
// the mmap allocator (linearmem_linux.go).
func newLinearMemory(max uint64) experimental.LinearMemory { return newSliceMemory(max) }
