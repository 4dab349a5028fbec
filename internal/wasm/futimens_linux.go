package wasm

import (
	"os"
	"syscall"
	"unsafe"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// utimeOmit is Linux's UTIME_OMIT: utimensat leaves that time.
const utimeOmit = (1 << 30) - 2

// futimens sets f's access and modification times (ns since the epoch,
// UTIME_OMIT to leave one) by its descriptor: utimensat(fd, NULL, ...).
func futimens(f *os.File, atim, mtim int64) error {
	ts := func(ns int64) syscall.Timespec {
		if ns == experimentalsys.UTIME_OMIT {
			return syscall.Timespec{Nsec: utimeOmit}
		}
		return syscall.NsecToTimespec(ns)
	}
	times := [2]syscall.Timespec{ts(atim), ts(mtim)}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall6(syscall.SYS_UTIMENSAT, fd, 0, uintptr(unsafe.Pointer(&times)), 0, 0, 0)
	}); err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}
