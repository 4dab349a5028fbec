package wasm

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A module larger than the module size limit is refused at load, naming
// its size, the limit and the fix.
func TestModuleSizeLimit(t *testing.T) {
	echo := readPlugin(t, "echo") // 2.8 MiB
	p, err := sharedEngine.Load(context.Background(), "echo", echo, PluginConfig{MaxModuleBytes: 1 << 20})
	if err == nil {
		_ = p.Close(context.Background())
		t.Fatal("a 2.8 MiB module loaded under a 1 MiB limit")
	}
	for _, want := range []string{"loading plugin echo: the module is 2.8 MiB, more than the module size limit of 1 MiB",
		"serve --max-module-size"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	load(t, "echo", PluginConfig{MaxModuleBytes: len(echo)})
}

// ReadModule refuses a file over the limit without reading it into
// memory, and reads one within it whole.
func TestReadModuleBoundsTheRead(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.wasm")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	_ = f.Close()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = ReadModule(huge, 0)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "huge.wasm: the module is 1024 MiB, more than the module size limit of 32 MiB") {
		t.Fatalf("ReadModule of a 1 GiB file: %v; want a refusal naming the file, its size and the limit", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("refusing the file allocated %d MiB", alloc>>20)
	}

	small := filepath.Join(dir, "small.wasm")
	if err := os.WriteFile(small, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadModule(small, 10); err != nil || string(b) != "0123456789" {
		t.Fatalf("ReadModule at the limit: %q, %v", b, err)
	}
	if _, err := ReadModule(small, 9); err == nil || !strings.Contains(err.Error(), "the module is 10 bytes, more than the module size limit of 9 bytes") {
		t.Fatalf("ReadModule one byte over the limit: %v", err)
	}
	if _, err := ReadModule(filepath.Join(dir, "none.wasm"), 0); !os.IsNotExist(err) {
		t.Fatalf("ReadModule of a missing file: %v; want a not-exist error", err)
	}
}
