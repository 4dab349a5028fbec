package wasm

import (
	"fmt"

	"github.com/cmdhost/cmdhost/internal/wasmbin"
)

// shapeModule builds a complete plugin serving the command "shape" (it
// answers an empty payload) with as many extra items of each kind as
// asked: modules too large to write as text, for the tests of the limits
// on a module's shape.
type shapeModule struct {
	types       int    // extra function types () -> ()
	imports     int    // extra imports of cmdhost.describe
	funcs       int    // extra empty functions
	locals      uint32 // locals of each of localFuncs more functions
	localFuncs  int
	tables      int // tables of 0 entries
	globals     int // i32 globals
	exports     int // extra exports of cmdhost_abi_version
	elemSegs    int // empty passive element segments
	elemEntries int // entries of one more passive element segment
	dataSegs    int // empty passive data segments
	// code, when set, is the instructions of codeFuncs more functions
	// () -> () with one i32 local (their end added); the module has a
	// table of 1,024 funcref then (for call_indirect and table operations).
	code      string
	codeFuncs int
}

// shapeDescription is abi.AppendDescription of Description{Version: 1,
// Commands: {{Name: "shape"}}}, written to memory at 16.
const shapeDescription = "\x01\x04\x00\x00\x00\x01\x00\x00\x00" + "\x02\x0a\x00\x00\x00" + "\x01\x05\x00\x00\x00shape"

// shapeResponse is a response with an empty payload record, at 64.
const shapeResponse = "\x06\x00\x00\x00\x00"

func (m shapeModule) bytes() []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	section := func(id byte, count int, items ...[]byte) {
		body := wasmbin.AppendU32(nil, uint32(count))
		for _, it := range items {
			body = append(body, it...)
		}
		out = append(out, id)
		out = wasmbin.AppendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	repeat := func(item []byte, n int) []byte {
		b := make([]byte, 0, len(item)*n)
		for range n {
			b = append(b, item...)
		}
		return b
	}
	name := func(s string) []byte { return append(wasmbin.AppendU32(nil, uint32(len(s))), s...) }

	// Types: 0 (i32 i32) -> i32, 1 () -> i32, 2 () -> ().
	section(1, 3+m.types, []byte{0x60, 2, 0x7f, 0x7f, 1, 0x7f, 0x60, 0, 1, 0x7f, 0x60, 0, 0},
		repeat([]byte{0x60, 0, 0}, m.types))

	// Imports: describe and response_write, then the extra ones.
	imp := func(field string) []byte {
		return append(append(name("cmdhost"), name(field)...), 0x00, 0x00)
	}
	nImports := 2 + m.imports
	section(2, nImports, imp("describe"), imp("response_write"), repeat(imp("describe"), m.imports))

	// Functions: abi_version, describe, handle; the extra ones; the one
	// with many locals.
	nFuncs := 3 + m.funcs + m.localFuncs + m.codeFuncs
	section(3, nFuncs, []byte{1, 1, 1}, repeat([]byte{2}, nFuncs-3))

	switch {
	case m.tables > 0:
		section(4, m.tables, repeat([]byte{0x70, 0x00, 0x00}, m.tables))
	case m.codeFuncs > 0:
		section(4, 1, []byte{0x70, 0x00, 0x80, 0x08})
	}
	section(5, 1, []byte{0x00, 0x01}) // one page
	if m.globals > 0 {
		section(6, m.globals, repeat([]byte{0x7f, 0x00, 0x41, 0x00, 0x0b}, m.globals))
	}

	abiVersion := wasmbin.AppendU32(nil, uint32(nImports))
	exp := func(field string, kind byte, idx []byte) []byte {
		return append(append(name(field), kind), idx...)
	}
	var extra []byte
	for i := range m.exports {
		extra = append(extra, exp(fmt.Sprintf("x%d", i), 0, abiVersion)...)
	}
	section(7, 4+m.exports,
		exp("memory", 2, []byte{0}),
		exp("cmdhost_abi_version", 0, abiVersion),
		exp("cmdhost_describe", 0, wasmbin.AppendU32(nil, uint32(nImports+1))),
		exp("cmdhost_handle", 0, wasmbin.AppendU32(nil, uint32(nImports+2))),
		extra)

	nElems := m.elemSegs
	var entries []byte
	if m.elemEntries > 0 {
		nElems++
		entries = append([]byte{0x01, 0x00}, wasmbin.AppendU32(nil, uint32(m.elemEntries))...)
		entries = append(entries, repeat([]byte{0x00}, m.elemEntries)...)
	}
	if nElems > 0 {
		section(9, nElems, repeat([]byte{0x01, 0x00, 0x00}, m.elemSegs), entries)
	}

	body := func(code ...byte) []byte { return append(wasmbin.AppendU32(nil, uint32(len(code))), code...) }
	localsFunc := body(append(append([]byte{0x01}, wasmbin.AppendU32(nil, m.locals)...), 0x7f, 0x0b)...)
	section(10, nFuncs,
		body(0x00, 0x41, 0x01, 0x0b), // cmdhost_abi_version: 1
		// cmdhost_describe: describe(16, len) != 0
		body(0x00, 0x41, 0x10, 0x41, byte(len(shapeDescription)), 0x10, 0x00, 0x41, 0x00, 0x47, 0x0b),
		// cmdhost_handle: response_write(64, len) != 0
		body(0x00, 0x41, 0xc0, 0x00, 0x41, byte(len(shapeResponse)), 0x10, 0x01, 0x41, 0x00, 0x47, 0x0b),
		repeat(body(0x00, 0x0b), m.funcs),
		repeat(localsFunc, m.localFuncs),
		repeat(body(append(append([]byte{0x01, 0x01, 0x7f}, m.code...), 0x0b)...), m.codeFuncs))

	// Active segments at 16 and 64 (an s32: 0xc0 0x00).
	active := func(offset []byte, data string) []byte {
		seg := append(append([]byte{0x00, 0x41}, offset...), 0x0b)
		return append(seg, name(data)...)
	}
	section(11, 2+m.dataSegs, active([]byte{0x10}, shapeDescription), active([]byte{0xc0, 0x00}, shapeResponse),
		repeat([]byte{0x01, 0x00}, m.dataSegs))
	return out
}
