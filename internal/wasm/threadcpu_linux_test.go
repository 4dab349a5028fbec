package wasm

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU is the CPU time of the calling OS thread, and the thread's id:
// what it ran, not the time it waited for a core.
func threadCPU() (time.Duration, int) {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		panic(errno)
	}
	return time.Duration(ts.Nano()), syscall.Gettid()
}

// otherThreadCPU is the CPU time of the thread tid of this process, read
// from another thread: Linux's clock of a thread's CPU time,
// MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED).
func otherThreadCPU(tid int) time.Duration {
	var ts syscall.Timespec
	clock := int32(^uint32(tid)<<3 | 6)
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		panic(errno)
	}
	return time.Duration(ts.Nano())
}
