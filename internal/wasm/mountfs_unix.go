//go:build unix

package wasm

import "syscall"

// The open flags a mount passes to the host as they are.
const (
	oDirectory = syscall.O_DIRECTORY
	oNonblock  = syscall.O_NONBLOCK
)
