package testkit

import (
	"os"
	"path/filepath"
)

// CacheDir is the wazero compilation cache that every package's tests
// share, across runs and processes: compiling a Go guest takes ~1 s, and
// ~14 s under -race, while a cached one loads in tens of milliseconds.
// `make test` warms it with a run without -race.
func CacheDir() string {
	return filepath.Join(os.TempDir(), "cmdhost-test-wazero-cache")
}
