//go:build unix

package wasm

import "syscall"

// The open flags a mount passes to the host as they are (oDirectory, and
// oNonblock when the guest asks), or adds to every open (oNonblock, then
// cleared; oNoctty: a terminal never becomes the host's).
const (
	oDirectory = syscall.O_DIRECTORY
	oNonblock  = syscall.O_NONBLOCK
	oNoctty    = syscall.O_NOCTTY
)
