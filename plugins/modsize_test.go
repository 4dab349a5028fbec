package plugins

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// A module file over the module size limit is refused without being read
// into memory, and the other plugins are served.
func TestLoadAllRefusesHugeModule(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "huge.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	_ = f.Close()
	testkit.Install(t, dir, "wat-echo.wasm", readPlugin(t, "wat-echo"))
	m, _ := newManager(t, dir, 0)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	errs := m.LoadAll(context.Background())
	runtime.ReadMemStats(&after)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "the module is 1024 MiB, more than the module size limit of 32 MiB") {
		t.Fatalf("LoadAll: %v; want one error about huge.wasm's size", errs)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Errorf("loading the folder allocated %d MiB: the huge module was read", alloc>>20)
	}
	mustEcho(t, m, "wat-echo")
}
