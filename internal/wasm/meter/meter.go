// Package meter rewrites a WebAssembly module so that it counts its own
// work and calls the host at regular intervals: the host's deadline check
// and fuel budget, at the cost of a few instructions at each function entry
// and loop header instead of wazero's exit to Go at every one of them.
//
// Instrument adds to the module:
//   - a mutable i64 global, the counter of units left, exported as
//     CounterExport so that the host can set it before a call and read
//     what is left after;
//   - an import ImportModule.ImportName of type (i64) -> i64, the tick:
//     called with the counter when it falls below 0, it returns the new
//     counter (the next batch, ≥ 0) or ends the call;
//   - at each function entry and each loop header, code that subtracts the
//     weight of what runs before the next such point, and calls the tick
//     when the counter is below 0 (what runs next is not paid for) — but
//     for a loop that calls a function of the module on every round
//     before anything could branch, which relies on that function's
//     check; before each memory.fill, memory.copy and
//     memory.init, code that subtracts one unit per 64 bytes moved, and
//     before each table.fill, table.copy and table.init one unit per
//     entry;
//   - to each function, an i64 local that holds the counter just computed,
//     which the check reads instead of the global (an i32 one too where
//     a bulk memory operation's size must be kept).
//
// A small function reached only by direct calls is charged its entry
// region's weight at its call sites instead, with the caller's region:
// its entry then only checks the counter, or, for a leaf (no call of the
// module), has no code at all (see rewriteCode).
//
// A unit is one instruction (a direct call of a host function
// HostCallWeight). A function's body outside its loops is a region, and
// so is each loop's body outside its inner loops; a region's weight, paid
// at its entry (the function's or the loop header), is the length of the
// longest path through it (paths.go): the instructions of one arm of each
// if or br_table, not of all, plus, for each direct call of a function
// charged at its call sites, that function's entry weight. Each
// instruction that runs belongs to exactly one region and runs at most
// once per entry into it (a region has no backward branch but its loop's),
// along one path, so the units charged bound the instructions run from
// above, and the same input charges the same units: the counting is
// deterministic.
//
// The new import renumbers every defined function (imports come first), so
// every function index is rewritten: call, return_call, ref.func in code,
// element segments, global and element initialisers, exports, the start
// section and the name section. The name section names each defined
// function the original did not name "$" and its original index, as
// wazero names a function with no name in a trap's stack trace, so that a
// metered module's traces name the functions as the original's do (a
// module without a name section is given one). An index that the original module could
// not use (a global, function, type or local past its own) is refused,
// since after rewriting it would reach what was added. Instructions whose
// immediates the rewriter does not know (exceptions, GC, function
// references) are refused with an error that names them.
package meter

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cmdhost/cmdhost/internal/wasmbin"
)

// What Instrument adds, by name.
const (
	ImportModule  = "cmdhost_meter"
	ImportName    = "tick"
	CounterExport = "cmdhost_meter.counter"
)

// BulkShift is the bulk memory operations' weight: one unit per
// 1<<BulkShift bytes moved or filled.
const BulkShift = 6

// A table.fill, table.copy or table.init weighs one unit per entry: wazero
// moves a table's entries one by one in Go (a table.copy of 65,535 entries
// charged one unit ran ~65 µs: a budget that stopped a loop of
// memory.copy in 0.03–0.08 s let a loop of table.copy run 18–44 s).

// HostCallWeight is the weight of a direct call of an imported function
// (a host function), the call instruction included: a host call costs
// about as much as that many instructions of the guest (~0.1 µs). A host
// function that works longer (a sleep, a nested call) honours the call's
// context itself.
const HostCallWeight = 100

// Section ids.
const (
	secCustom   = 0
	secType     = 1
	secImport   = 2
	secFunction = 3
	secTable    = 4
	secMemory   = 5
	secGlobal   = 6
	secExport   = 7
	secStart    = 8
	secElement  = 9
	secCode     = 10
	secData     = 11
	secDataCnt  = 12
	secTag      = 13
)

// order is each known section's place in a module.
var order = map[byte]int{secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5, secTag: 6, secGlobal: 7,
	secExport: 8, secStart: 9, secElement: 10, secDataCnt: 11, secCode: 12, secData: 13}

var magic = "\x00asm\x01\x00\x00\x00"

// module is what the rewriting needs to know of the original module.
type module struct {
	types         uint32   // function types
	params        []uint32 // parameter count of each type
	importedFuncs uint32
	funcs         uint32   // all functions, imported and defined
	funcTypes     []uint32 // type of each defined function
	globals       uint32   // all globals, imported and defined
	// escaped: functions that may be called other than by a direct call
	// (exported, the start, in a table, ref.func); own: the weight of each
	// defined function's entry region when it is charged at its direct
	// call sites instead of its entry, 0 when it is not; leaf: no check at
	// its entry (it calls no function of the module).
	escaped map[uint32]bool
	own     []uint32
	leaf    []bool
	// nameSection: the module has a name section (custom), which names
	// its functions as before; without one, one is added.
	nameSection bool
}

// tickType, tickFunc and counter are the indices of what is added.
func (m *module) tickType() uint32 { return m.types }
func (m *module) tickFunc() uint32 { return m.importedFuncs }
func (m *module) counter() uint32  { return m.globals }

// remap is a function's index after the tick import is inserted.
func (m *module) remap(f uint32) (uint32, error) {
	if f >= m.funcs {
		return 0, fmt.Errorf("function index %d out of range (%d functions)", f, m.funcs)
	}
	if f >= m.importedFuncs {
		return f + 1, nil
	}
	return f, nil
}

// escape notes that f may be called other than by a direct call and
// returns its index remapped.
func (m *module) escape(f uint32) (uint32, error) {
	if m.escaped == nil {
		m.escaped = map[uint32]bool{}
	}
	m.escaped[f] = true
	return m.remap(f)
}

type section struct {
	id   byte
	body []byte
}

// Instrument returns the module rewritten to count its work (see the
// package comment), or an error that says why it cannot be.
func Instrument(wasm []byte) ([]byte, error) {
	if !strings.HasPrefix(string(wasm), magic) {
		return nil, errors.New("not a WebAssembly module (no \\0asm version 1 header)")
	}
	r := &wasmbin.Reader{B: wasm, Off: len(magic)}
	var secs []section
	for !r.Done() {
		id, _ := r.Byte()
		size, err := r.U32()
		if err != nil {
			return nil, fmt.Errorf("section %d: size: %w", id, err)
		}
		body, err := r.Bytes(size)
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", id, err)
		}
		if _, ok := order[id]; !ok && id != secCustom {
			return nil, fmt.Errorf("unknown section id %d", id)
		}
		secs = append(secs, section{id, body})
	}
	m := &module{}
	for _, s := range secs {
		if err := m.scan(s); err != nil {
			return nil, err
		}
	}
	if uint32(len(m.funcTypes)) > m.funcs-m.importedFuncs {
		return nil, errors.New("function section: more entries than its count")
	}
	out := make([]byte, 0, len(wasm)+len(wasm)/4+64)
	out = append(out, magic...)
	added := map[byte]bool{}
	// addMissing writes the sections that get an entry and the module
	// lacks, before the first section that must follow them.
	addMissing := func(before int) error {
		for _, id := range []byte{secType, secImport, secGlobal, secExport} {
			if order[id] < before && !added[id] {
				body, err := m.rewrite(id, []byte{0})
				if err != nil {
					return err
				}
				out = appendSection(out, id, body)
				added[id] = true
			}
		}
		return nil
	}
	for _, s := range secs {
		if s.id == secCustom {
			body, keep := m.custom(s.body)
			if keep {
				out = appendSection(out, secCustom, body)
			}
			continue
		}
		if err := addMissing(order[s.id]); err != nil {
			return nil, err
		}
		body, err := m.rewrite(s.id, s.body)
		if err != nil {
			return nil, err
		}
		out = appendSection(out, s.id, body)
		added[s.id] = true
	}
	if err := addMissing(len(order) + 1); err != nil {
		return nil, err
	}
	if !m.nameSection && m.funcs > m.importedFuncs {
		out = appendSection(out, secCustom, m.appendFuncNames(appendName(nil, "name"), nil))
	}
	return out, nil
}

func appendSection(out []byte, id byte, body []byte) []byte {
	out = append(out, id)
	out = wasmbin.AppendU32(out, uint32(len(body)))
	return append(out, body...)
}

// scan reads what the rewriting needs from a section.
func (m *module) scan(s section) error {
	r := &wasmbin.Reader{B: s.body}
	switch s.id {
	case secType:
		n, err := r.U32()
		if err != nil {
			return fmt.Errorf("type section: %w", err)
		}
		for i := uint32(0); i < n; i++ {
			form, err := r.Byte()
			if err != nil {
				return fmt.Errorf("type %d: %w", i, err)
			}
			if form != 0x60 {
				return fmt.Errorf("type %d: form %#x: only function types can be metered", i, form)
			}
			var counts [2]uint32
			for j := range counts {
				if counts[j], err = r.U32(); err != nil {
					return fmt.Errorf("type %d: %w", i, err)
				}
				for k := uint32(0); k < counts[j]; k++ {
					if err := r.ValType(); err != nil {
						return fmt.Errorf("type %d: %w", i, err)
					}
				}
			}
			m.params = append(m.params, counts[0])
		}
		m.types = n
	case secImport:
		n, err := r.U32()
		if err != nil {
			return fmt.Errorf("import section: %w", err)
		}
		for i := uint32(0); i < n; i++ {
			mod, err := r.Name()
			if err != nil {
				return fmt.Errorf("import %d: %w", i, err)
			}
			if mod == ImportModule {
				return fmt.Errorf("import %d: imports from module %q, which is the host's own", i, ImportModule)
			}
			if _, err := r.Name(); err != nil {
				return fmt.Errorf("import %d: %w", i, err)
			}
			kind, err := r.Byte()
			if err != nil {
				return fmt.Errorf("import %d: %w", i, err)
			}
			switch kind {
			case 0: // function: type index
				err = r.SkipLEB(5)
				m.importedFuncs++
				m.funcs++
			case 1: // table: reference type, limits
				if err = r.ValType(); err == nil {
					err = skipLimits(r)
				}
			case 2: // memory: limits
				err = skipLimits(r)
			case 3: // global: value type, mutability
				if err = r.ValType(); err == nil {
					_, err = r.Byte()
				}
				m.globals++
			default:
				return fmt.Errorf("import %d: kind %#x cannot be metered", i, kind)
			}
			if err != nil {
				return fmt.Errorf("import %d: %w", i, err)
			}
		}
	case secFunction:
		n, err := r.U32()
		if err != nil {
			return fmt.Errorf("function section: %w", err)
		}
		m.funcs += n
		for i := uint32(0); i < n && !r.Done(); i++ {
			t, err := r.U32()
			if err != nil {
				return fmt.Errorf("function %d: %w", i, err)
			}
			m.funcTypes = append(m.funcTypes, t)
		}
	case secGlobal:
		n, err := r.U32()
		if err != nil {
			return fmt.Errorf("global section: %w", err)
		}
		m.globals += n
	case secExport:
		n, err := r.U32()
		if err != nil {
			return fmt.Errorf("export section: %w", err)
		}
		for i := uint32(0); i < n; i++ {
			name, err := r.Name()
			if err != nil {
				return fmt.Errorf("export %d: %w", i, err)
			}
			if name == CounterExport {
				return fmt.Errorf("export %q: the name is the host's own", name)
			}
			if _, err := r.Byte(); err != nil {
				return fmt.Errorf("export %d: %w", i, err)
			}
			if err := r.SkipLEB(5); err != nil {
				return fmt.Errorf("export %d: %w", i, err)
			}
		}
	}
	return nil
}

func skipLimits(r *wasmbin.Reader) error {
	flags, err := r.Byte()
	if err != nil {
		return err
	}
	if err := r.SkipLEB(10); err != nil {
		return err
	}
	if flags&1 != 0 {
		return r.SkipLEB(10)
	}
	return nil
}
