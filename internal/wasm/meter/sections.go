package meter

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cmdhost/cmdhost/internal/wasmbin"
)

// rewrite returns a section's body rewritten: with the added entry (type,
// import, global, export), its function indices renumbered (start, element,
// code, and those of export and global), as is otherwise. A missing
// section is rewritten from an empty one (a count of 0).
func (m *module) rewrite(id byte, body []byte) ([]byte, error) {
	r := &wasmbin.Reader{B: body}
	switch id {
	case secType:
		return m.appendEntry(r, []byte{0x60, 1, 0x7e, 1, 0x7e}) // (i64) -> i64
	case secImport:
		entry := appendName(nil, ImportModule)
		entry = appendName(entry, ImportName)
		entry = append(entry, 0)
		return m.appendEntry(r, wasmbin.AppendU32(entry, m.tickType()))
	case secGlobal:
		return m.rewriteGlobals(r)
	case secExport:
		return m.rewriteExports(r)
	case secStart:
		f, err := r.U32()
		if err != nil {
			return nil, fmt.Errorf("start section: %w", err)
		}
		if f, err = m.escape(f); err != nil {
			return nil, fmt.Errorf("start section: %w", err)
		}
		return wasmbin.AppendU32(nil, f), nil
	case secElement:
		return m.rewriteElements(r)
	case secCode:
		return m.rewriteCode(r)
	}
	return body, nil
}

// appendEntry returns a vector section with entry added at its end.
func (m *module) appendEntry(r *wasmbin.Reader, entry []byte) ([]byte, error) {
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	out := wasmbin.AppendU32(nil, n+1)
	out = append(out, r.B[r.Off:]...)
	return append(out, entry...), nil
}

func (m *module) rewriteGlobals(r *wasmbin.Reader) ([]byte, error) {
	n, err := r.U32()
	if err != nil {
		return nil, fmt.Errorf("global section: %w", err)
	}
	out := wasmbin.AppendU32(nil, n+1)
	for i := uint32(0); i < n; i++ {
		start := r.Off
		if err := r.ValType(); err != nil {
			return nil, fmt.Errorf("global %d: %w", i, err)
		}
		if _, err := r.Byte(); err != nil {
			return nil, fmt.Errorf("global %d: %w", i, err)
		}
		out = append(out, r.B[start:r.Off]...)
		if out, err = m.constExpr(r, out); err != nil {
			return nil, fmt.Errorf("global %d: %w", i, err)
		}
	}
	return append(out, 0x7e, 1, 0x42, 0, 0x0b), nil // mut i64, i64.const 0
}

func (m *module) rewriteExports(r *wasmbin.Reader) ([]byte, error) {
	n, err := r.U32()
	if err != nil {
		return nil, fmt.Errorf("export section: %w", err)
	}
	out := wasmbin.AppendU32(nil, n+1)
	for i := uint32(0); i < n; i++ {
		name, _ := r.Name()
		kind, _ := r.Byte()
		idx, err := r.U32()
		if err != nil {
			return nil, fmt.Errorf("export %d: %w", i, err)
		}
		switch kind {
		case 0:
			idx, err = m.escape(idx)
		case 3:
			if idx >= m.globals {
				err = fmt.Errorf("global index %d out of range", idx)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("export %q: %w", name, err)
		}
		out = append(appendName(out, name), kind)
		out = wasmbin.AppendU32(out, idx)
	}
	out = append(appendName(out, CounterExport), 3)
	return wasmbin.AppendU32(out, m.counter()), nil
}

func (m *module) rewriteElements(r *wasmbin.Reader) ([]byte, error) {
	n, err := r.U32()
	if err != nil {
		return nil, fmt.Errorf("element section: %w", err)
	}
	out := wasmbin.AppendU32(nil, n)
	for i := uint32(0); i < n; i++ {
		if out, err = m.element(r, out); err != nil {
			return nil, fmt.Errorf("element segment %d: %w", i, err)
		}
	}
	return out, nil
}

// element rewrites one element segment. Flags: bit 0, passive or
// declarative (no offset); bit 1, with bit 0 declarative, without it an
// explicit table index; bit 2, expressions instead of function indices.
func (m *module) element(r *wasmbin.Reader, out []byte) ([]byte, error) {
	flags, err := r.U32()
	if err != nil {
		return nil, err
	}
	if flags > 7 {
		return nil, fmt.Errorf("flags %#x not in 0..7", flags)
	}
	out = wasmbin.AppendU32(out, flags)
	if flags&1 == 0 {
		if flags&2 != 0 {
			t, err := r.U32()
			if err != nil {
				return nil, err
			}
			out = wasmbin.AppendU32(out, t)
		}
		if out, err = m.constExpr(r, out); err != nil {
			return nil, err
		}
	}
	exprs := flags&4 != 0
	if flags&3 != 0 {
		start := r.Off
		if exprs {
			err = r.ValType()
		} else {
			_, err = r.Byte()
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r.B[start:r.Off]...)
	}
	count, err := r.U32()
	if err != nil {
		return nil, err
	}
	out = wasmbin.AppendU32(out, count)
	for j := uint32(0); j < count; j++ {
		if exprs {
			out, err = m.constExpr(r, out)
		} else {
			var f uint32
			if f, err = r.U32(); err == nil {
				f, err = m.escape(f)
			}
			out = wasmbin.AppendU32(out, f)
		}
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", j, err)
		}
	}
	return out, nil
}

// constExpr copies a constant expression up to its end, ref.func
// renumbered. It knows the instructions wazero accepts in one.
func (m *module) constExpr(r *wasmbin.Reader, out []byte) ([]byte, error) {
	for {
		start := r.Off
		op, err := r.Byte()
		if err != nil {
			return nil, err
		}
		switch op {
		case 0x0b: // end
			return append(out, op), nil
		case 0x23: // global.get
			var g uint32
			if g, err = r.U32(); err == nil && g >= m.globals {
				err = fmt.Errorf("global index %d out of range", g)
			}
		case 0xd2: // ref.func
			var f uint32
			if f, err = r.U32(); err == nil {
				if f, err = m.escape(f); err == nil {
					out = wasmbin.AppendU32(append(out, op), f)
					continue
				}
			}
		case 0x41, 0xd0: // i32.const, ref.null heap type
			err = r.SkipLEB(5)
		case 0x42: // i64.const
			err = r.SkipLEB(10)
		case 0x43:
			_, err = r.Bytes(4)
		case 0x44:
			_, err = r.Bytes(8)
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended-const add, sub, mul
		case 0xfd: // SIMD: v128.const
			var sub uint32
			if sub, err = r.U32(); err == nil {
				if sub != 12 {
					return nil, fmt.Errorf("opcode 0xfd %d in a constant expression", sub)
				}
				_, err = r.Bytes(16)
			}
		default:
			return nil, fmt.Errorf("opcode %#x in a constant expression", op)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r.B[start:r.Off]...)
	}
}

// custom returns a custom section rewritten, and whether to keep it: the
// name section with its function indices renumbered (dropped if it does not
// parse), DWARF and code metadata dropped (their code offsets no longer
// hold), the others as they are.
func (m *module) custom(body []byte) ([]byte, bool) {
	r := &wasmbin.Reader{B: body}
	name, err := r.Name()
	switch {
	case err != nil:
		return body, true // wazero will say what is wrong
	case strings.HasPrefix(name, ".debug_"), strings.HasPrefix(name, "metadata.code."):
		return nil, false
	case name != "name":
		return body, true
	}
	m.nameSection = true
	out := appendName(nil, name)
	named := false // the function names are written
	for !r.Done() {
		id, err := r.Byte()
		if err != nil {
			return nil, false
		}
		if id > 1 && !named {
			out = m.appendFuncNames(out, nil)
			named = true
		}
		size, err := r.U32()
		if err != nil {
			return nil, false
		}
		sub, err := r.Bytes(size)
		if err != nil {
			return nil, false
		}
		if id == 1 {
			if named {
				return nil, false // out of order: wazero will say so of the original
			}
			out, named = m.appendFuncNames(out, sub), true
			continue
		}
		if id == 2 || id == 3 { // local and label names: by function index
			if sub, err = m.renameFuncs(sub, true); err != nil {
				return nil, false
			}
		}
		out = append(out, id)
		out = wasmbin.AppendU32(out, uint32(len(sub)))
		out = append(out, sub...)
	}
	if !named {
		out = m.appendFuncNames(out, nil)
	}
	return out, true
}

// appendFuncNames appends the function names subsection of the name
// section: the names of names (the original's subsection, nil when it has
// none), renumbered, and for each defined function it does not name,
// "$" and its original index, which is what wazero calls a function with
// no name in a trap's stack trace. Without them, a metered module's trace
// named each function by its index after the tick's import: one more than
// the module's own. A names subsection that does not read is dropped.
func (m *module) appendFuncNames(out, names []byte) []byte {
	var entries []byte
	count := uint32(0)
	next := m.importedFuncs // the next defined function that may lack a name
	fill := func(upTo uint32) {
		for ; next < upTo; next++ {
			entries = wasmbin.AppendU32(entries, next+1)
			entries = appendName(entries, "$"+strconv.FormatUint(uint64(next), 10))
			count++
		}
	}
	r := &wasmbin.Reader{B: names}
	n, err := r.U32()
	if names == nil || err != nil {
		n = 0
	}
	last := int64(-1)
	for i := uint32(0); i < n; i++ {
		f, err := r.U32()
		if err != nil || int64(f) <= last || f >= m.funcs {
			break // out of order or range: what was read stays
		}
		name, err := r.Name()
		if err != nil {
			break
		}
		last = int64(f)
		fill(max(f, next))
		if f >= m.importedFuncs {
			next = f + 1
		}
		g, _ := m.remap(f)
		entries = appendName(wasmbin.AppendU32(entries, g), name)
		count++
	}
	fill(m.funcs)
	sub := append(wasmbin.AppendU32(nil, count), entries...)
	out = append(out, 1)
	out = wasmbin.AppendU32(out, uint32(len(sub)))
	return append(out, sub...)
}

// renameFuncs renumbers the functions of a name map, or an indirect one
// (a name map per function).
func (m *module) renameFuncs(b []byte, indirect bool) ([]byte, error) {
	r := &wasmbin.Reader{B: b}
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	out := wasmbin.AppendU32(nil, n)
	for i := uint32(0); i < n; i++ {
		f, err := r.U32()
		if err != nil {
			return nil, err
		}
		if f, err = m.remap(f); err != nil {
			return nil, err
		}
		out = wasmbin.AppendU32(out, f)
		start := r.Off
		if indirect {
			err = skipNameMap(r)
		} else {
			_, err = r.Name()
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r.B[start:r.Off]...)
	}
	return out, nil
}

func skipNameMap(r *wasmbin.Reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if _, err := r.U32(); err != nil {
			return err
		}
		if _, err := r.Name(); err != nil {
			return err
		}
	}
	return nil
}
