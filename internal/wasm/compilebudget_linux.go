package wasm

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPUClock returns a reader of the calling thread's CPU time that
// any thread of the process may call: Linux's clock of a thread's CPU
// time, MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED). The caller keeps its
// goroutine on the thread (runtime.LockOSThread).
func threadCPUClock() (func() time.Duration, bool) {
	clock := uintptr(int32(^uint32(syscall.Gettid())<<3 | 6))
	read := func() (time.Duration, bool) {
		var ts syscall.Timespec
		if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clock, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
			return 0, false
		}
		return time.Duration(ts.Nano()), true
	}
	if _, ok := read(); !ok {
		return nil, false
	}
	return func() time.Duration { d, _ := read(); return d }, true
}
