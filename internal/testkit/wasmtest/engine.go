// Package wasmtest builds the engines tests load their plugins with.
package wasmtest

import (
	"fmt"

	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// NewEngine returns an engine of cfg that uses the tests' shared
// compilation cache (testkit.CacheDir) unless cfg names another. The
// caller closes it.
func NewEngine(cfg wasm.Config) (*wasm.Engine, error) {
	if cfg.CacheDir == "" {
		cfg.CacheDir = testkit.CacheDir()
	}
	e, err := wasm.NewEngine(cfg)
	if err != nil {
		return nil, fmt.Errorf("test engine on cache %s: %w", cfg.CacheDir, err)
	}
	return e, nil
}
