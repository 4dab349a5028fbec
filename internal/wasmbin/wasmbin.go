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
