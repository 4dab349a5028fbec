//go:build linux

package wasm

import (
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// mmapMemory is a guest's linear memory in an address range of its own,
// outside the Go heap: the whole maximum is reserved at once (PROT_NONE,
// no memory behind it), and each memory.grow opens more of it for reading
// and writing. Why not wazero's default (a Go slice grown by append):
//
//   - growth copies: each memory.grow past the slice's capacity allocates
//     a new, larger array and copies the old one, which stays on the heap
//     as garbage until the next collection;
//   - the Go heap's goal is twice its live size (GOGC=100), so pool ×
//     limit of live guest memory let the heap, hence the RSS, grow to
//     several times that before a collection (measured: 805 MiB peak for
//     4 × 64 MiB of guests filling their memory), and the runtime gives
//     freed pages back to the OS only over minutes.
//
// Here a grow never moves or copies the memory, only the pages the guest
// touches are resident, and Free (when wazero closes the instance) unmaps
// them: the RSS drops at once.
type mmapMemory struct {
	buf       []byte // the whole reservation, len = cap = max rounded up to OS pages
	committed int    // bytes open for reading and writing, a prefix of buf
}

// newLinearMemory reserves max bytes of address space for one linear
// memory. When the reservation fails (a low vm.max_map_count or
// RLIMIT_AS), the memory is a Go slice instead (linearmem_slice.go):
// wazero's allocator interface has no error, and a panic here would take
// the host down; the memory budget still bounds the sum.
func newLinearMemory(max uint64) experimental.LinearMemory {
	size := roundUpToOSPage(max)
	if size == 0 {
		return &mmapMemory{}
	}
	buf, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_NONE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		return newSliceMemory(max)
	}
	return &mmapMemory{buf: buf}
}

// Reallocate opens the reservation up to size bytes and returns the
// memory, at the same address as before; nil (the guest's memory.grow
// fails) when size is past the reservation or the kernel refuses.
func (m *mmapMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	if want := int(roundUpToOSPage(size)); want > m.committed {
		if err := syscall.Mprotect(m.buf[m.committed:want], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil
		}
		m.committed = want
	}
	return m.buf[:size:size]
}

// Free unmaps the memory; the instance that used it is closed. Calling it
// again does nothing.
func (m *mmapMemory) Free() {
	if m.buf != nil {
		_ = syscall.Munmap(m.buf)
		m.buf, m.committed = nil, 0
	}
}

// osPageSize is the size the kernel maps and protects memory in.
var osPageSize = uint64(syscall.Getpagesize())

func roundUpToOSPage(n uint64) uint64 { return (n + osPageSize - 1) &^ (osPageSize - 1) }
