package wasm

// sliceMemory is a linear memory in a Go slice, as wazero's default, for
// systems without the mmap allocator (linearmem_linux.go), and where its
// reservation fails: its capacity is
// the whole maximum at once, so a grow never copies; the memory budget
// still bounds the sum of maxima, but the Go heap's goal and scavenger
// decide when freed memory goes back to the OS.
type sliceMemory struct{ buf []byte }

func newSliceMemory(max uint64) *sliceMemory { return &sliceMemory{buf: make([]byte, 0, max)} }

func (m *sliceMemory) Reallocate(size uint64) []byte {
	if size > uint64(cap(m.buf)) {
		return nil
	}
	m.buf = m.buf[:size]
	return m.buf[:size:size]
}

func (m *sliceMemory) Free() { m.buf = nil }
