package base

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/internal/wasm"
)

// NewEngine makes the engine from the global flags; guest logs go to
// stderr.
func NewEngine(c *cli.Context) (*wasm.Engine, error) {
	return newEngineLogged(c, slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelInfo})))
}

// newEngineLogged makes the engine from the global flags with a logger.
func newEngineLogged(c *cli.Context, log *slog.Logger) (*wasm.Engine, error) {
	dir, err := CacheDir(c)
	if err != nil {
		return nil, err
	}
	return wasm.NewEngine(wasm.Config{CacheDir: dir, Logger: log})
}

// CacheDir is the compilation cache's folder (--cache-dir, else one in the
// user's cache folder), made if missing.
func CacheDir(c *cli.Context) (string, error) {
	dir := c.String("cache-dir")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		dir = filepath.Join(base, "cmdhost", "wazero")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cache directory: %w (set --cache-dir)", err)
	}
	return dir, nil
}

// LoadFile loads a module file as a plugin named after the file.
func LoadFile(c *cli.Context, e *wasm.Engine, path string, cfg wasm.PluginConfig) (*wasm.Plugin, []byte, error) {
	bin, err := wasm.ReadModule(path, cfg.MaxModuleBytes)
	if err != nil {
		return nil, nil, err
	}
	name := PluginName(path)
	p, err := e.Load(c.Context, name, bin, cfg)
	return p, bin, err
}

// PluginName is a module file's base name without its extension.
func PluginName(path string) string {
	base := filepath.Base(path)
	return base[:len(base)-len(filepath.Ext(base))]
}
