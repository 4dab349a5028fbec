//go:build !linux

package wasm

import (
	"os"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// futimens is refused where the host has no utimensat on a descriptor
// (setting times by path stays possible: mountFS.Utimens).
func futimens(*os.File, int64, int64) error { return experimentalsys.ENOSYS }
