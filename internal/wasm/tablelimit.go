package wasm

import (
	"fmt"

	"github.com/cmdhost/cmdhost/internal/wasmbin"
)

// The table limit. wazero bounds linear memory (WithMemoryLimitPages) but
// not tables: it accepts a declared table of 2^27 entries (1 GiB of
// references, made for every instance) and grows one by up to 2^32 entries
// on a table.grow, unless the table declares a maximum. So the host checks
// the tables a module declares against the plugin's table limit, and gives
// every table a maximum that keeps all of an instance's tables within it:
// wazero's table.grow (compiler and interpreter alike) returns -1 past a
// table's maximum, as the spec says. Tables cannot be imported: the host
// provides only functions (checkImportSection).

// DefaultTableEntries is the default table limit: the entries of all of an
// instance's tables together. wazero spends 8 bytes on an entry, so 65,536
// entries are 512 KiB. A Go guest's table holds 4,096 entries plus one per
// function (6,481 for the probe test plugin); a C or Rust guest's, one per
// function taken by address.
const DefaultTableEntries = 65536

// tableRefBytes is what wazero spends on a table entry: a reference.
const tableRefBytes = 8

// tableSection is a module's table section with the maxima the table limit
// allows, re-encoded.
type tableSection struct {
	start, end int    // the old section in the module, header included
	body       []byte // the new section's content
	changed    bool   // whether any maximum was lowered or added
}

// table is one table of a table section: its encoding around its limits,
// which boundTableSection rewrites.
type table struct {
	typ     []byte // the optional 0x40 0x00 prefix and the reference type
	min     uint32
	max     uint32
	hasMax  bool
	trailer []byte // the initializer expression of a table that has one
}

// boundTableSection reads a table section and re-encodes it so that the
// tables, all grown to their maxima, fit in limit entries. The declared
// minima must fit (or the module is refused); what the limit leaves
// beyond them goes to the tables in their order, each taking what it can
// grow by: all of it for a table without a maximum, so later tables keep
// their minimum. A table whose declared maximum fits keeps it.
func boundTableSection(r *wasmbin.Reader, limit uint32) (*tableSection, error) {
	n, _ := r.U32()
	tables := make([]table, n)
	var sum uint64
	for i := range tables {
		t, err := readTable(r)
		if err != nil {
			return nil, fmt.Errorf("not a valid WebAssembly module: table %d: %w", i, err)
		}
		if t.min > limit {
			return nil, fmt.Errorf("table %d declares %d entries, more than the plugin's table limit of %d entries (%s per instance): %s",
				i, t.min, limit, sizeOf(limit), raiseTableLimit)
		}
		sum += uint64(t.min)
		tables[i] = t
	}
	if sum > uint64(limit) {
		return nil, fmt.Errorf("the module's %d tables declare %d entries together, more than the plugin's table limit of %d entries (%s per instance): %s",
			n, sum, limit, sizeOf(limit), raiseTableLimit)
	}
	spare := limit - uint32(sum)
	out := &tableSection{body: wasmbin.AppendU32(nil, n)}
	for _, t := range tables {
		room := spare
		if t.hasMax && t.max-t.min < room {
			room = t.max - t.min
		}
		spare -= room
		if !t.hasMax || t.max != t.min+room {
			out.changed = true
		}
		out.body = append(out.body, t.typ...)
		out.body = append(out.body, 0x01) // limits with a maximum
		out.body = wasmbin.AppendU32(out.body, t.min)
		out.body = wasmbin.AppendU32(out.body, t.min+room)
		out.body = append(out.body, t.trailer...)
	}
	out.body = append(out.body, r.B[r.Off:]...) // whatever follows, for wazero to judge
	return out, nil
}

const raiseTableLimit = `raise the table limit ("tableEntries" in the plugin's operator file) or declare a smaller table`

// table reads one table type: [0x40 0x00] reftype limits [init expr].
func readTable(r *wasmbin.Reader) (table, error) {
	var t table
	start := r.Off
	withInit := r.Off+1 < len(r.B) && r.B[r.Off] == 0x40 && r.B[r.Off+1] == 0x00
	if withInit {
		r.Off += 2
	}
	if err := r.ValType(); err != nil {
		return t, err
	}
	t.typ = r.B[start:r.Off]
	flag, err := r.Byte()
	if err != nil {
		return t, err
	}
	if flag != 0x00 && flag != 0x01 {
		return t, fmt.Errorf("limits flag %#x: a table's limits are 0x00 (a minimum) or 0x01 (a minimum and a maximum)", flag)
	}
	if t.min, err = r.U32(); err != nil {
		return t, err
	}
	if t.hasMax = flag == 0x01; t.hasMax {
		if t.max, err = r.U32(); err != nil {
			return t, err
		}
		if t.max < t.min {
			return t, fmt.Errorf("minimum %d above maximum %d", t.min, t.max)
		}
	}
	if withInit {
		initStart := r.Off
		if err := r.SkipConstExpr(); err != nil {
			return t, err
		}
		t.trailer = r.B[initStart:r.Off]
	}
	return t, nil
}

// splice returns the module with the table section replaced.
func (s *tableSection) splice(wasm []byte) []byte {
	out := make([]byte, 0, len(wasm)+16)
	out = append(out, wasm[:s.start]...)
	out = append(out, secTable)
	out = wasmbin.AppendU32(out, uint32(len(s.body)))
	out = append(out, s.body...)
	return append(out, wasm[s.end:]...)
}

// sizeOf says how much memory n table entries take.
func sizeOf(n uint32) string {
	b := uint64(n) * tableRefBytes
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", b>>10)
}
