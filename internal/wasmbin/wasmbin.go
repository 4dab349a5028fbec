// Package wasmbin reads the WebAssembly binary format: LEB128 integers,
// names, value types and constant expressions, over a module's bytes. It
// is what the engine's load-time checks (internal/wasm: module limits,
// memory budget, table limits) and the metering rewriter
// (internal/wasm/meter) share: both must read a module before wazero
// decodes it, since decoding alone can cost gigabytes.
package wasmbin

import (
	"errors"
	"fmt"
)

// Reader reads B from Off on; each read moves Off past what it read.
type Reader struct {
	B   []byte
	Off int
}

// ErrTruncated is the error of a read past the end.
var ErrTruncated = errors.New("unexpected end")

var errTooLong = errors.New("integer representation too long")

// Done reports whether every byte was read.
func (r *Reader) Done() bool { return r.Off >= len(r.B) }

// Byte reads one byte.
func (r *Reader) Byte() (byte, error) {
	if r.Off >= len(r.B) {
		return 0, ErrTruncated
	}
	c := r.B[r.Off]
	r.Off++
	return c, nil
}

// Bytes returns the next n bytes, a view of B.
func (r *Reader) Bytes(n uint32) ([]byte, error) {
	if uint64(n) > uint64(len(r.B)-r.Off) {
		return nil, ErrTruncated
	}
	out := r.B[r.Off : r.Off+int(n)]
	r.Off += int(n)
	return out, nil
}

// U32 reads an unsigned LEB128 of at most 32 bits.
func (r *Reader) U32() (uint32, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		c, err := r.Byte()
		if err != nil {
			return 0, err
		}
		if i == 4 && c > 0x0f {
			return 0, errors.New("integer too large")
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, errTooLong
}

// S33 reads a signed LEB128 of at most 33 bits (a block type).
func (r *Reader) S33() (int64, error) {
	var v int64
	var shift uint
	for i := 0; i < 5; i++ {
		c, err := r.Byte()
		if err != nil {
			return 0, err
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, nil
		}
	}
	return 0, errTooLong
}

// SkipLEB skips a LEB128 of at most maxBytes bytes, signed or not.
func (r *Reader) SkipLEB(maxBytes int) error {
	for i := 0; i < maxBytes; i++ {
		c, err := r.Byte()
		if err != nil {
			return err
		}
		if c&0x80 == 0 {
			return nil
		}
	}
	return errTooLong
}

// Name reads a name: its length and bytes, as they are.
func (r *Reader) Name() (string, error) {
	n, err := r.U32()
	if err != nil {
		return "", err
	}
	b, err := r.Bytes(n)
	return string(b), err
}

// Reference type prefixes, each followed by a heap type (an s33).
const (
	refNullable    = 0x63 // (ref null ht)
	refNonNullable = 0x64 // (ref ht)
)

// ValType skips a value or reference type: one byte (i32 0x7f, funcref
// 0x70, externref 0x6f, ...), or a reference type prefix and a heap type.
func (r *Reader) ValType() error {
	c, err := r.Byte()
	if err != nil {
		return err
	}
	if c == refNullable || c == refNonNullable {
		return r.SkipLEB(5)
	}
	return nil
}

// SkipConstExpr skips a constant expression up to and including its end
// opcode. It knows the instructions wazero accepts in one: an opcode it
// does not know is an error, since its immediates cannot be skipped.
func (r *Reader) SkipConstExpr() error {
	for {
		op, err := r.Byte()
		if err != nil {
			return err
		}
		switch op {
		case 0x0b: // end
			return nil
		case 0x41, 0x23, 0xd2: // i32.const s32, global.get idx, ref.func idx
			err = r.SkipLEB(5)
		case 0x42: // i64.const s64
			err = r.SkipLEB(10)
		case 0x43: // f32.const
			_, err = r.Bytes(4)
		case 0x44: // f64.const
			_, err = r.Bytes(8)
		case 0xd0: // ref.null heaptype (s33)
			err = r.SkipLEB(5)
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended-const add, sub, mul
		case 0xfd: // SIMD prefix: only v128.const (12) is constant
			var sub uint32
			if sub, err = r.U32(); err == nil {
				if sub != 12 {
					return fmt.Errorf("opcode 0xfd %d is not allowed in a constant expression", sub)
				}
				_, err = r.Bytes(16)
			}
		default:
			return fmt.Errorf("opcode %#x is not allowed in a constant expression", op)
		}
		if err != nil {
			return err
		}
	}
}

// AppendU32 appends v as an unsigned LEB128.
func AppendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// Instr is one instruction of a function body, as Reader.Instr reads it.
type Instr struct {
	// Op is the opcode; for a prefixed instruction (0xfc, 0xfd, 0xfe), the
	// prefix, and Sub the instruction under it.
	Op  byte
	Sub uint32
	// Targets is the labels of a br_table, its default included.
	Targets uint32
}

// Instr reads one instruction of a function body, skipping its
// immediates. It knows the instructions of WebAssembly 2.0 (bulk memory,
// reference types, SIMD and relaxed SIMD), threads and tail calls; an
// opcode it does not know is an error, since its immediates cannot be
// skipped.
func (r *Reader) Instr() (Instr, error) {
	op, err := r.Byte()
	if err != nil {
		return Instr{}, err
	}
	in := Instr{Op: op}
	switch {
	case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if: a block type
		if r.Off < len(r.B) && (r.B[r.Off] == refNullable || r.B[r.Off] == refNonNullable) {
			err = r.ValType()
		} else {
			_, err = r.S33()
		}
	case op == 0x0c || op == 0x0d || // br, br_if
		op == 0x10 || op == 0x12 || // call, return_call
		op >= 0x20 && op <= 0x26 || // local and global get, set, tee; table.get, set
		op == 0x3f || op == 0x40 || // memory.size, memory.grow
		op == 0x41 || op == 0xd0 || op == 0xd2: // i32.const, ref.null, ref.func
		err = r.SkipLEB(5)
	case op == 0x0e: // br_table
		var n uint32
		if n, err = r.U32(); err == nil {
			in.Targets = n + 1
			for i := uint64(0); i <= uint64(n) && err == nil; i++ {
				err = r.SkipLEB(5)
			}
		}
	case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect: type, table
		if err = r.SkipLEB(5); err == nil {
			err = r.SkipLEB(5)
		}
	case op == 0x1c: // select t*
		var n uint32
		if n, err = r.U32(); err == nil {
			for i := uint32(0); i < n && err == nil; i++ {
				err = r.ValType()
			}
		}
	case op >= 0x28 && op <= 0x3e: // loads and stores
		err = r.memarg()
	case op == 0x42:
		err = r.SkipLEB(10)
	case op == 0x43:
		_, err = r.Bytes(4)
	case op == 0x44:
		_, err = r.Bytes(8)
	case op == 0xfc:
		in.Sub, err = r.prefixFC()
	case op == 0xfd:
		in.Sub, err = r.prefixFD()
	case op == 0xfe:
		in.Sub, err = r.prefixFE()
	case op <= 0x01, op == 0x05, op == 0x0b, op == 0x0f, op == 0x1a, op == 0x1b, // unreachable, nop, else, end, return, drop, select
		op >= 0x45 && op <= 0xc4, op == 0xd1: // numeric, sign extension, ref.is_null
	default:
		return in, fmt.Errorf("opcode %#x is not one this host knows", op)
	}
	if err != nil {
		return in, fmt.Errorf("opcode %#x: %w", op, err)
	}
	return in, nil
}

// memarg skips a memory argument: alignment (bit 6: a memory index
// follows) and offset.
func (r *Reader) memarg() error {
	align, err := r.U32()
	if err != nil {
		return err
	}
	if align&0x40 != 0 {
		if err := r.SkipLEB(5); err != nil {
			return err
		}
	}
	return r.SkipLEB(10)
}

// prefixFC skips the immediates of a 0xfc instruction: saturating
// truncations, bulk memory and table operations.
func (r *Reader) prefixFC() (uint32, error) {
	sub, err := r.U32()
	if err != nil {
		return 0, err
	}
	switch {
	case sub <= 7: // trunc_sat
	case sub == 8, sub == 10, sub == 12, sub == 14: // memory.init, memory.copy, table.init, table.copy: two indices
		if err = r.SkipLEB(5); err == nil {
			err = r.SkipLEB(5)
		}
	case sub == 9, sub == 11, sub == 13, sub >= 15 && sub <= 17: // data.drop, memory.fill, elem.drop, table.grow, size, fill
		err = r.SkipLEB(5)
	default:
		return sub, fmt.Errorf("0xfc %d is not one this host knows", sub)
	}
	return sub, err
}

// prefixFD skips the immediates of a SIMD instruction.
func (r *Reader) prefixFD() (uint32, error) {
	sub, err := r.U32()
	if err != nil {
		return 0, err
	}
	switch {
	case sub <= 11, sub == 92, sub == 93: // loads, stores, load_zero
		err = r.memarg()
	case sub == 12, sub == 13: // v128.const, i8x16.shuffle
		_, err = r.Bytes(16)
	case sub >= 21 && sub <= 34: // extract_lane, replace_lane
		_, err = r.Byte()
	case sub >= 84 && sub <= 91: // load_lane, store_lane
		if err = r.memarg(); err == nil {
			_, err = r.Byte()
		}
	case sub <= 0x113: // the rest, relaxed SIMD included: no immediates
	default:
		return sub, fmt.Errorf("0xfd %d is not one this host knows", sub)
	}
	return sub, err
}

// prefixFE skips the immediates of an atomic instruction.
func (r *Reader) prefixFE() (uint32, error) {
	sub, err := r.U32()
	if err != nil {
		return 0, err
	}
	switch {
	case sub == 3: // atomic.fence
		_, err = r.Byte()
	case sub <= 2, sub >= 0x10 && sub <= 0x4e:
		err = r.memarg()
	default:
		return sub, fmt.Errorf("0xfe %d is not one this host knows", sub)
	}
	return sub, err
}
