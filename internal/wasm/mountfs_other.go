//go:build !unix

package wasm

// Hosts without these open flags: a mount checks O_DIRECTORY after the
// open instead, and opens blocking.
const (
	oDirectory = 0
	oNonblock  = 0
	oNoctty    = 0
)
