package wasm

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzBoundModule: the host parses every module before wazero does, so the
// parser meets hostile bytes first. For any input, boundModule never
// panics, and what it returns is bounded already: bounding it again
// changes nothing.
func FuzzBoundModule(f *testing.F) {
	for _, dir := range []string{pluginDir, "../../testdata/plugins-hostile", badPluginDir} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.wasm"))
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil && len(b) < 64<<10 { // the WAT ones, not Go guests
				f.Add(b, uint32(16))
			}
		}
	}
	f.Add(append(bytes.Clone(wasmMagic), 4, 4, 1, 0x70, 0, 5), uint32(3)) // one table of 5, no max
	f.Fuzz(func(t *testing.T, module []byte, limit uint32) {
		limit = max(limit%(1<<20), 1)
		out, err := boundModule(bytes.Clone(module), limit)
		if err != nil {
			return
		}
		again, err := boundModule(bytes.Clone(out), limit)
		if err != nil {
			t.Fatalf("the bounded module is refused: %v", err)
		}
		if !bytes.Equal(again, out) {
			t.Fatalf("bounding twice changed the module:\n% x\n% x", out, again)
		}
	})
}
