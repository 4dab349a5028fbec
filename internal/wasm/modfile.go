package wasm

import (
	"errors"
	"fmt"

	"github.com/cmdhost/cmdhost/internal/regfile"
)

// DefaultMaxModuleBytes is the default bound on a module's size: 32 MiB, ten
// times a Go guest with fmt, encoding/json and time (~3.5 MB). Compiling a
// module costs several times its size in memory, and a module's size bounds
// what its sections can claim (modlimits.go).
const DefaultMaxModuleBytes = 32 << 20

// ReadModule reads the module file at path, refusing one larger than
// maxBytes (<= 0: DefaultMaxModuleBytes) before reading it whole, and
// anything but a regular file (or a symlink to one): a FIFO would block
// the read, a device read forever (internal/regfile).
func ReadModule(path string, maxBytes int) ([]byte, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxModuleBytes
	}
	b, err := regfile.Read(path, int64(maxBytes))
	if tooLarge := (*regfile.TooLargeError)(nil); errors.As(err, &tooLarge) {
		return nil, fmt.Errorf("%s: %w", path, checkModuleSize(tooLarge.Size, maxBytes))
	}
	return b, err
}

// checkModuleSize refuses a module of size bytes over maxBytes.
func checkModuleSize(size int64, maxBytes int) error {
	if size <= int64(maxBytes) {
		return nil
	}
	return fmt.Errorf("the module is %s, more than the module size limit of %s: raise the limit (serve --max-module-size) or make the module smaller (e.g. strip its debug sections)",
		mib(size), mib(int64(maxBytes)))
}

func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
