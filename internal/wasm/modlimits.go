package wasm

import (
	"bytes"
	"fmt"

	"github.com/cmdhost/cmdhost/internal/wasmbin"
)

// Bounds on a module's shape, checked at load before wazero decodes the
// module (and, below, on what its functions cost to compile:
// maxFuncWeight). wazero accepts up to 2^27 of most items and spends
// memory on each when it compiles the module, and for imports, tables,
// globals, element and data segments again in every instance, so a module of a few
// megabytes could claim gigabytes (measured: a 3 MB module of 10^6 empty
// tables costs 107 MB per instance; a module of 300 bytes declaring 10^7
// locals, 218 MB to compile). Real guests stay far below these bounds: a Go
// guest of 3.7 MB has 17 types, 30 imports, 2,385 functions, one table, 8
// globals, 5 exports, one element segment, 41,017 data segments and at
// most 20 locals in a function, 9,739 in all.
const (
	maxTypes        = 10_000
	maxImports      = 1_000
	maxFunctions    = 200_000
	maxTables       = 100
	maxGlobals      = 10_000
	maxExports      = 10_000
	maxElemSegments = 10_000
	maxDataSegments = 500_000
	// maxFuncLocals bounds the locals of one function, maxLocals those of
	// all the module's functions together.
	maxFuncLocals = 50_000
	maxLocals     = 1_000_000
)

// Section ids of the WebAssembly binary format.
const (
	secType     = 1
	secImport   = 2
	secFunction = 3
	secTable    = 4
	secGlobal   = 6
	secExport   = 7
	secElement  = 9
	secCode     = 10
	secData     = 11
)

// sectionBound is the most items a section may hold, and what they are
// called in a message.
type sectionBound struct {
	items string
	max   uint32
}

var sectionBounds = map[byte]sectionBound{
	secType:     {"function types", maxTypes},
	secImport:   {"imports", maxImports},
	secFunction: {"functions", maxFunctions},
	secTable:    {"tables", maxTables},
	secGlobal:   {"globals", maxGlobals},
	secExport:   {"exports", maxExports},
	secElement:  {"element segments", maxElemSegments},
	secCode:     {"function bodies", maxFunctions},
	secData:     {"data segments", maxDataSegments},
}

// wasmMagic is the first 8 bytes of a module: "\0asm" and version 1.
var wasmMagic = []byte("\x00asm\x01\x00\x00\x00")

// boundModule checks a module against the bounds above and the plugin's
// table limit (tableEntries: the entries of all of an instance's tables
// together) before it is compiled, and returns it with each table's
// maximum lowered to what the limit leaves it (tablelimit.go), so that a
// table.grow beyond the limit returns -1 instead of allocating. A module
// that needs no change is returned as is. A module that does not start as
// a WebAssembly module is returned as is too, for wazero to explain.
func boundModule(wasm []byte, tableEntries uint32) ([]byte, error) {
	if !bytes.HasPrefix(wasm, wasmMagic) {
		return wasm, nil
	}
	r := &wasmbin.Reader{B: wasm, Off: len(wasmMagic)}
	var tables *tableSection // the table section, when it must be rewritten
	for !r.Done() {
		start := r.Off
		id, _ := r.Byte()
		size, err := r.U32()
		if err != nil {
			return nil, fmt.Errorf("not a valid WebAssembly module: section %d at byte %d: size: %w", id, start, err)
		}
		body, err := r.Bytes(size)
		if err != nil {
			return nil, fmt.Errorf("not a valid WebAssembly module: section %d at byte %d declares %d bytes, past the module's end", id, start, size)
		}
		sec := &wasmbin.Reader{B: body}
		if bound, ok := sectionBounds[id]; ok {
			n, err := sec.U32()
			if err != nil {
				return nil, fmt.Errorf("not a valid WebAssembly module: %s section: count: %w", bound.items, err)
			}
			if n > bound.max {
				return nil, fmt.Errorf("the module has %d %s, more than this host accepts (%d)", n, bound.items, bound.max)
			}
			sec.Off = 0
		}
		switch id {
		case secImport:
			err = checkImportSection(sec)
		case secTable:
			tables, err = boundTableSection(sec, tableEntries)
			if tables != nil {
				tables.start, tables.end = start, r.Off
			}
		case secElement:
			err = checkElementSection(sec, tableEntries)
		case secCode:
			err = checkCodeSection(sec)
		}
		if err != nil {
			return nil, err
		}
	}
	if tables == nil || !tables.changed {
		return wasm, nil
	}
	return tables.splice(wasm), nil
}

// checkImportSection refuses imports of anything but functions: the host
// provides only functions, so a table, memory or global import could never
// be satisfied, and wazero would say only that a module is missing.
func checkImportSection(r *wasmbin.Reader) error {
	n, _ := r.U32()
	for i := uint32(0); i < n; i++ {
		mod, err := readName(r)
		if err != nil {
			return fmt.Errorf("not a valid WebAssembly module: import %d: %w", i, err)
		}
		field, err := readName(r)
		if err != nil {
			return fmt.Errorf("not a valid WebAssembly module: import %d: %w", i, err)
		}
		kind, err := r.Byte()
		if err != nil {
			return fmt.Errorf("not a valid WebAssembly module: import %s.%s: %w", mod, field, err)
		}
		if kind != 0 {
			return fmt.Errorf("imports %s %s.%s: the host provides only functions: define the %s in the module instead",
				importKind(kind), mod, field, importKind(kind))
		}
		if _, err := r.U32(); err != nil {
			return fmt.Errorf("not a valid WebAssembly module: import %s.%s: type: %w", mod, field, err)
		}
	}
	return nil
}

func importKind(kind byte) string {
	switch kind {
	case 1:
		return "table"
	case 2:
		return "memory"
	case 3:
		return "global"
	case 4:
		return "tag"
	}
	return fmt.Sprintf("kind %#x", kind)
}

// checkElementSection bounds the entries of all element segments together
// by the table limit: they can only fill tables, and wazero keeps a copy of
// every passive segment's entries in each instance.
func checkElementSection(r *wasmbin.Reader, tableEntries uint32) error {
	n, _ := r.U32()
	var total uint64
	for i := uint32(0); i < n; i++ {
		entries, exprs, err := elementHeader(r)
		if err != nil {
			return fmt.Errorf("not a valid WebAssembly module: element segment %d: %w", i, err)
		}
		if total += uint64(entries); total > uint64(tableEntries) {
			return fmt.Errorf("the module's element segments hold more than %d entries, the plugin's table limit: "+
				"raise the table limit (\"tableEntries\" in the plugin's operator file)", tableEntries)
		}
		for j := uint32(0); j < entries; j++ {
			if exprs {
				err = r.SkipConstExpr()
			} else {
				err = r.SkipLEB(5)
			}
			if err != nil {
				return fmt.Errorf("not a valid WebAssembly module: element segment %d, entry %d: %w", i, j, err)
			}
		}
	}
	return nil
}

// elementHeader reads an element segment up to its entries and returns
// their count and whether they are expressions (or function indices).
func elementHeader(r *wasmbin.Reader) (entries uint32, exprs bool, err error) {
	flags, err := r.U32()
	if err != nil {
		return 0, false, err
	}
	if flags > 7 {
		return 0, false, fmt.Errorf("flags %#x not in 0..7", flags)
	}
	// Bit 0: passive or declarative (no offset); bit 1: with it, declarative,
	// without it, an explicit table index; bit 2: expressions, not indices.
	if flags&1 == 0 {
		if flags&2 != 0 {
			if _, err := r.U32(); err != nil { // table index
				return 0, false, err
			}
		}
		if err := r.SkipConstExpr(); err != nil { // offset
			return 0, false, err
		}
	}
	exprs = flags&4 != 0
	if flags&3 != 0 { // an element kind (a byte) or a reference type
		if exprs {
			err = r.ValType()
		} else {
			_, err = r.Byte()
		}
		if err != nil {
			return 0, false, err
		}
	}
	entries, err = r.U32()
	return entries, exprs, err
}

// checkCodeSection bounds the locals of each function and of all of them:
// wazero allocates for each declared local when it decodes a function,
// and a declaration of 2^32 locals takes 6 bytes.
func checkCodeSection(r *wasmbin.Reader) error {
	n, _ := r.U32()
	var total, weight uint64
	for i := uint32(0); i < n; i++ {
		size, err := r.U32()
		if err != nil {
			return fmt.Errorf("not a valid WebAssembly module: function body %d: size: %w", i, err)
		}
		body, err := r.Bytes(size)
		if err != nil {
			return fmt.Errorf("not a valid WebAssembly module: function body %d declares %d bytes, past its section's end", i, size)
		}
		br := &wasmbin.Reader{B: body}
		locals, err := countLocals(br)
		if err != nil {
			return fmt.Errorf("not a valid WebAssembly module: function body %d: locals: %w", i, err)
		}
		if locals > maxFuncLocals {
			return fmt.Errorf("function body %d declares %d locals, more than this host accepts in a function (%d)", i, locals, maxFuncLocals)
		}
		if total += locals; total > maxLocals {
			return fmt.Errorf("the module's functions declare more than %d locals together, more than this host accepts", uint64(maxLocals))
		}
		w, err := checkCompileWeight(br, i)
		if err != nil {
			return err
		}
		if weight += w; weight > maxModuleWeight {
			return fmt.Errorf("the module's functions are too large to compile here together: their instructions weigh more than %d (see a function's bound): split the module",
				uint64(maxModuleWeight))
		}
	}
	return nil
}

// maxFuncWeight and maxModuleWeight bound the compile weight
// (compileWeight) of one function and of all of a module's. wazero
// compiles one function at a time, reusing its memory for the next, and
// some of its passes cost more than linear time in a function's blocks
// (before cmdhost's copy made two of them linear, one function of 180 KB,
// 20,000 memory.fill, took a minute and 0.8 GB). At maxFuncWeight, a
// function of the worst shapes measured compiles in at most ~0.5 s of a
// core and ~70 MB (TestCompileAtTheBound); the compiled code of a module
// is ~10–22 bytes a unit, so that a module at maxModuleWeight peaked at
// 250 MB (docs/plugins.md), and the compile timeout
// (PluginConfig.CompileTimeout) bounds its time whatever its shape. The project's guests stay well below: the largest function
// of a Go guest weighs 27,473 (29 KB), the whole guest 1.9 million (3 MB).
const (
	maxFuncWeight   = 1 << 16
	maxModuleWeight = 1 << 23
)

// compileWeight is what an instruction costs wazero's compiler, in units
// of about 1 KiB of the memory it allocates for it (measured, by shape,
// with 20,000 of them in a function): a bulk memory or table operation
// compiles to a loop or a call with bounds checks and the termination
// check's exit (40), a loop or an indirect call to several blocks (13),
// an if to two (8); a block, a branch, a call, a memory or table access
// to a block or a bounds check (4); anything else to an instruction or
// two (1).
func compileWeight(in wasmbin.Instr) uint32 {
	switch {
	case in.Op == 0xfc && in.Sub >= 8 && in.Sub <= 17 && in.Sub != 9 && in.Sub != 13 && in.Sub != 16:
		return 40 // memory.init, copy, fill; table.init, copy, grow, fill
	case in.Op == 0x03, in.Op == 0x11, in.Op == 0x13: // loop, call_indirect, return_call_indirect
		return 13
	case in.Op == 0x04: // if
		return 8
	case in.Op == 0x0e: // br_table: a block a target
		return 4 * in.Targets
	case in.Op == 0x02, in.Op == 0x05, in.Op == 0x0c, in.Op == 0x0d, // block, else, br, br_if
		in.Op == 0x10, in.Op == 0x12, in.Op == 0x25, in.Op == 0x26, // call, return_call, table.get, set
		in.Op >= 0x28 && in.Op <= 0x40, // loads, stores, memory.size, grow
		in.Op == 0xfe:                  // atomics
		return 4
	}
	return 1
}

// checkCompileWeight reads the instructions of function body i (r past
// its locals) and returns their compile weight, or an error when it is
// over maxFuncWeight.
func checkCompileWeight(r *wasmbin.Reader, i uint32) (uint64, error) {
	var w uint64
	for !r.Done() {
		start := r.Off
		in, err := r.Instr()
		if err != nil {
			return 0, fmt.Errorf("not a valid WebAssembly module for this host: function body %d at byte %d: %w", i, start, err)
		}
		if w += uint64(compileWeight(in)); w > maxFuncWeight {
			return 0, fmt.Errorf("function body %d is too large to compile here: its instructions weigh more than %d (about 1 KiB of the compiler's memory each; a bulk memory operation 40, a loop 13, a block, branch, call or memory access 4): split the function",
				i, maxFuncWeight)
		}
	}
	return w, nil
}

// countLocals reads a function body's local declarations and returns how
// many locals they declare.
func countLocals(r *wasmbin.Reader) (uint64, error) {
	groups, err := r.U32()
	if err != nil {
		return 0, err
	}
	var n uint64
	for g := uint32(0); g < groups; g++ {
		count, err := r.U32()
		if err != nil {
			return 0, err
		}
		if n += uint64(count); n > maxFuncLocals {
			return n, nil // over the bound already: no need to read on
		}
		if err := r.ValType(); err != nil { // a value type, or a reference type
			return 0, err
		}
	}
	return n, nil
}
