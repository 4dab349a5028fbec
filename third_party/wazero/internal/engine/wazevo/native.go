package wazevo

import _ "unsafe" // for go:linkname

// cmdhost: while a call with ensureTermination runs compiled code, its
// goroutine is in a system call for the Go scheduler, as cgo calls are: Go
// cannot preempt compiled code, so a guest that spins on every P would
// otherwise keep the goroutine that closes its module at the context's
// end (and every other goroutine, and the garbage collector's stack scans)
// from running. In a system call, the goroutine's P is handed to another
// thread once the call lasts (sysmon's retake). The Go stack does not move
// meanwhile (compiled code runs on a stack of its own), and compiled code
// reaches the Go runtime only by returning to Go (an exit), where the
// goroutine leaves the system call first, and by calling memmove, which
// needs no P.

//go:linkname entersyscall runtime.entersyscall
func entersyscall()

//go:linkname exitsyscall runtime.exitsyscall
func exitsyscall()

// enterNative is entrypoint, in a system call when releaseP is set.
//
//go:nosplit
func enterNative(releaseP bool, preambleExecutable, functionExecutable *byte, executionContextPtr uintptr, moduleContextPtr *byte, paramResultStackPtr *uint64, goAllocatedStackSlicePtr uintptr) {
	if releaseP {
		entersyscall()
	}
	entrypoint(preambleExecutable, functionExecutable, executionContextPtr, moduleContextPtr, paramResultStackPtr, goAllocatedStackSlicePtr)
	if releaseP {
		exitsyscall()
	}
}

// resumeNative is afterGoFunctionCallEntrypoint, in a system call when
// releaseP is set.
//
//go:nosplit
func resumeNative(releaseP bool, executable *byte, executionContextPtr uintptr, stackPointer, framePointer uintptr) {
	if releaseP {
		entersyscall()
	}
	afterGoFunctionCallEntrypoint(executable, executionContextPtr, stackPointer, framePointer)
	if releaseP {
		exitsyscall()
	}
}
