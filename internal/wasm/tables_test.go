package wasm

import (
	"context"
	"encoding/binary"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/internal/wasmbin"
)

// The hostile modules are testdata/hostile/NAME.wat, built by `make
// plugins` into testdata/plugins-hostile/hostile-NAME.wasm. Each file's
// first lines say what it tries.

// callI32 calls a hostile plugin's command, which answers an i32 as a
// 4-byte little-endian payload.
func callI32(t *testing.T, p *Plugin, command string) int32 {
	t.Helper()
	resp := mustCall(t, p, command, "")
	if len(resp.Payload) != 4 {
		t.Fatalf("%s: payload %x; want 4 bytes", command, resp.Payload)
	}
	return int32(binary.LittleEndian.Uint32(resp.Payload))
}

// A table declared larger than the table limit is refused at load, with a
// message naming the table, its size, the limit and the fix.
func TestTableDeclaredOverLimitRefused(t *testing.T) {
	p, err := sharedEngine.Load(context.Background(), "hostile-table-huge", readPlugin(t, "hostile-table-huge"), PluginConfig{})
	if err == nil {
		_ = p.Close(context.Background())
		t.Fatal("a table of 2^27 entries loaded; want a refusal")
	}
	for _, want := range []string{"loading plugin hostile-table-huge: ", "table 0", "134217728 entries",
		"table limit of 65536 entries", `"tableEntries"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

// An imported table is refused at load: the host provides only functions.
func TestTableImportRefused(t *testing.T) {
	p, err := sharedEngine.Load(context.Background(), "hostile-table-import", readPlugin(t, "hostile-table-import"), PluginConfig{})
	if err == nil {
		_ = p.Close(context.Background())
		t.Fatal("a module importing a table loaded; want a refusal")
	}
	for _, want := range []string{"imports table env.table", "the host provides only functions"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

// One table.grow of 0xFFFFFFFD entries on a table whose declared maximum
// allows it returns -1: the host lowered the maximum to its table limit.
// The process lives and the plugin and another one serve afterwards.
func TestTableGrowPastLimitReturnsMinusOne(t *testing.T) {
	p := load(t, "hostile-table-grow", PluginConfig{PoolSize: 1})
	for i := range 2 {
		if got := callI32(t, p, "table-grow"); got != -1 {
			t.Fatalf("call %d: table.grow(0xFFFFFFFD) returned %d; want -1", i, got)
		}
	}
	other := load(t, "wat-echo", PluginConfig{})
	if resp := mustCall(t, other, "wat-echo", "still here"); string(resp.Payload) != "still here" {
		t.Fatalf("wat-echo after the hostile calls: %q", resp.Payload)
	}
}

// A loop of table.grow with a fill stops at the table limit, and the
// instance's tables cost what the limit allows, not more.
func TestTableGrowAndFillStopsAtLimit(t *testing.T) {
	const limit = 65536 // the default
	p := load(t, "hostile-table-fill", PluginConfig{PoolSize: 1})
	before := heapAlloc()
	size := callI32(t, p, "table-fill")
	grown := heapAlloc() - before // the instance, and its table, are alive
	// The table starts at 1 entry and grows 4096 at a time.
	if size > limit || size <= limit-4096 {
		t.Fatalf("the table grew to %d entries; want the most that fits in the limit of %d", size, limit)
	}
	// 8 bytes a reference: 512 KiB of table. The margin is for the heap's
	// own noise, far below the 128 MiB the guest reaches without a limit.
	const bound = 16 << 20
	if grown > bound {
		t.Fatalf("the heap grew by %d MiB during the call; want under %d MiB", grown>>20, bound>>20)
	}
	t.Logf("table grew to %d entries; heap +%d KiB", size, grown>>10)
}

// heapAlloc returns the bytes of live heap objects after a collection.
func heapAlloc() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// The table limit holds for all of an instance's tables together: their
// minima must fit, and the room beyond goes to the tables in order.
func TestTablesShareTheLimit(t *testing.T) {
	const limit = 1 << 21
	p := load(t, "hostile-tables", PluginConfig{PoolSize: 1, TableEntries: limit})
	// Table a grows by 2^20 within the limit; b and c cannot: a took the
	// room that was left.
	if sum, want := callI32(t, p, "tables"), int32(1<<20+3); sum != want {
		t.Fatalf("the three tables hold %d entries after growing; want %d", sum, want)
	}

	_, err := sharedEngine.Load(context.Background(), "hostile-tables", readPlugin(t, "hostile-tables"), PluginConfig{TableEntries: 2})
	want := "the module's 3 tables declare 3 entries together, more than the plugin's table limit of 2 entries"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("three tables of 1 entry under a limit of 2: %v; want an error containing %q", err, want)
	}
}

// The table limit is the plugin's: a larger one lets a table grow further,
// and a Go guest's table (4,096 entries plus one per function) does not
// fit in 1,000.
func TestTableLimitIsConfigurable(t *testing.T) {
	const limit = 200_000
	p := load(t, "hostile-table-fill", PluginConfig{PoolSize: 1, TableEntries: limit})
	if size := callI32(t, p, "table-fill"); size > limit || size <= limit-4096 {
		t.Fatalf("the table grew to %d entries; want the most that fits in the limit of %d", size, limit)
	}

	_, err := sharedEngine.Load(context.Background(), "echo", readPlugin(t, "echo"), PluginConfig{TableEntries: 1000})
	if err == nil {
		t.Fatal("echo loaded with a table limit of 1,000 entries")
	}
	for _, want := range []string{"table 0 declares", "more than the plugin's table limit of 1000 entries (7 KiB per instance)", raiseTableLimit} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

// boundModule gives each table the maximum the limit leaves it, keeps a
// declared maximum that fits, and keeps the rest of a table's encoding.
func TestBoundModuleTableMaxima(t *testing.T) {
	type lim struct {
		min, max uint32
		hasMax   bool
	}
	noMax := func(min uint32) lim { return lim{min: min} }
	withMax := func(min, max uint32) lim { return lim{min, max, true} }
	for _, tc := range []struct {
		name   string
		tables []lim
		want   []uint32 // the maxima after
		same   bool     // the module is returned unchanged
	}{
		{"no maximum", []lim{noMax(1)}, []uint32{100}, false},
		{"maximum that fits", []lim{withMax(1, 50)}, []uint32{50}, true},
		{"maximum over the limit", []lim{withMax(1, 0xffffffff)}, []uint32{100}, false},
		{"minimum at the limit", []lim{noMax(100)}, []uint32{100}, false},
		{"room in order", []lim{noMax(10), withMax(5, 20), noMax(1)}, []uint32{94, 5, 1}, false},
		{"a fitting maximum leaves room", []lim{withMax(10, 12), noMax(5)}, []uint32{12, 88}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := wasmbin.AppendU32(nil, uint32(len(tc.tables)))
			for i, l := range tc.tables {
				if i == 0 { // a table with an initializer: 0x40 0x00 funcref limits (ref.null func)
					body = append(body, 0x40, 0x00)
				}
				body = append(body, 0x70)
				if l.hasMax {
					body = wasmbin.AppendU32(wasmbin.AppendU32(append(body, 0x01), l.min), l.max)
				} else {
					body = wasmbin.AppendU32(append(body, 0x00), l.min)
				}
				if i == 0 {
					body = append(body, 0xd0, 0x70, 0x0b)
				}
			}
			mod := append(append(append([]byte(nil), wasmMagic...), secTable), wasmbin.AppendU32(nil, uint32(len(body)))...)
			mod = append(append(mod, body...), 0x00, 0x03, 0x01, 'x', 0x00) // and a custom section after
			out, err := boundModule(mod, 100)
			if err != nil {
				t.Fatal(err)
			}
			if same := &out[0] == &mod[0]; same != tc.same {
				t.Fatalf("returned the module unchanged: %v; want %v", same, tc.same)
			}
			if !strings.HasSuffix(string(out), "\x00\x03\x01x\x00") {
				t.Fatalf("the custom section after the tables was lost: % x", out)
			}
			r := &wasmbin.Reader{B: out, Off: len(wasmMagic)}
			if id, _ := r.Byte(); id != secTable {
				t.Fatalf("section %d first; want the table section", id)
			}
			if _, err := r.U32(); err != nil {
				t.Fatal(err)
			}
			if n, _ := r.U32(); int(n) != len(tc.tables) {
				t.Fatalf("%d tables after; want %d", n, len(tc.tables))
			}
			for i, l := range tc.tables {
				got, err := readTable(r)
				if err != nil {
					t.Fatalf("table %d: %v", i, err)
				}
				if got.min != l.min || !got.hasMax || got.max != tc.want[i] {
					t.Errorf("table %d: min %d max %d (%v); want min %d max %d", i, got.min, got.max, got.hasMax, l.min, tc.want[i])
				}
				if i == 0 && (string(got.typ) != "\x40\x00\x70" || string(got.trailer) != "\xd0\x70\x0b") {
					t.Errorf("table 0: prefix % x, initializer % x; want them kept", got.typ, got.trailer)
				}
			}
		})
	}
}

// Closing a plugin hands the memory of its instances back to the operating
// system at once, not when the Go runtime's scavenger gets to it.
func TestCloseReturnsMemory(t *testing.T) {
	const entries = 1 << 22 // 32 MiB of table
	p, err := sharedEngine.Load(context.Background(), "hostile-table-fill", readPlugin(t, "hostile-table-fill"),
		PluginConfig{PoolSize: 1, TableEntries: entries})
	if err != nil {
		t.Fatal(err)
	}
	if size := callI32(t, p, "table-fill"); size <= entries-4096 {
		_ = p.Close(context.Background())
		t.Fatalf("the table grew to %d entries; want about %d", size, entries)
	}
	before := heapReleased()
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := heapReleased() - before; got < 24<<20 {
		t.Fatalf("closing a plugin whose instance held a 32 MiB table returned %d MiB to the OS; want at least 24", got>>20)
	}
}

// heapReleased returns the bytes of heap memory returned to the OS.
func heapReleased() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}
