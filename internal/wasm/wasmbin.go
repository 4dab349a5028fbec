package wasm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// binReader reads the WebAssembly binary format: just enough of it for the
// load-time checks of module limits (modlimits.go), which must run before
// wazero decodes a module, since decoding alone can cost gigabytes.
type binReader struct {
	b   []byte
	off int
}

var errTruncated = errors.New("unexpected end")

func (r *binReader) done() bool { return r.off >= len(r.b) }

func (r *binReader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errTruncated
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

// bytes returns the next n bytes, a view of the module.
func (r *binReader) bytes(n uint32) ([]byte, error) {
	if uint64(n) > uint64(len(r.b)-r.off) {
		return nil, errTruncated
	}
	out := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return out, nil
}

// u32 reads an unsigned LEB128 of at most 32 bits.
func (r *binReader) u32() (uint32, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		c, err := r.byte()
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
	return 0, errors.New("integer representation too long")
}

// skipLEB skips a LEB128 of at most maxBytes bytes, signed or not.
func (r *binReader) skipLEB(maxBytes int) error {
	for i := 0; i < maxBytes; i++ {
		c, err := r.byte()
		if err != nil {
			return err
		}
		if c&0x80 == 0 {
			return nil
		}
	}
	return errors.New("integer representation too long")
}

// name reads a name, its length and bytes, for a message: quoted unless
// it is printable UTF-8.
func (r *binReader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(n)
	if err != nil {
		return "", err
	}
	s := string(b)
	if !utf8.ValidString(s) || strings.IndexFunc(s, func(c rune) bool { return !unicode.IsPrint(c) }) >= 0 {
		s = strconv.Quote(s)
	}
	return s, nil
}

// Value and reference type bytes.
const (
	refNullable    = 0x63 // (ref null ht), followed by a heap type
	refNonNullable = 0x64 // (ref ht), followed by a heap type
)

// skipRefType skips a reference type: one byte (funcref 0x70, externref
// 0x6f, ...) or a prefix and a heap type (an s33).
func (r *binReader) skipRefType() error {
	c, err := r.byte()
	if err != nil {
		return err
	}
	if c == refNullable || c == refNonNullable {
		return r.skipLEB(5)
	}
	return nil
}

// skipConstExpr skips a constant expression up to and including its end
// opcode. It knows the instructions wazero accepts in one: an opcode it
// does not know is an error, since its immediates cannot be skipped.
func (r *binReader) skipConstExpr() error {
	for {
		op, err := r.byte()
		if err != nil {
			return err
		}
		switch op {
		case 0x0b: // end
			return nil
		case 0x41, 0x23, 0xd2: // i32.const s32, global.get idx, ref.func idx
			err = r.skipLEB(5)
		case 0x42: // i64.const s64
			err = r.skipLEB(10)
		case 0x43: // f32.const
			_, err = r.bytes(4)
		case 0x44: // f64.const
			_, err = r.bytes(8)
		case 0xd0: // ref.null heaptype (s33)
			err = r.skipLEB(5)
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended-const add, sub, mul
		case 0xfd: // SIMD prefix: only v128.const (12) is constant
			var sub uint32
			if sub, err = r.u32(); err == nil {
				if sub != 12 {
					return fmt.Errorf("opcode 0xfd %d is not allowed in a constant expression", sub)
				}
				_, err = r.bytes(16)
			}
		default:
			return fmt.Errorf("opcode %#x is not allowed in a constant expression", op)
		}
		if err != nil {
			return err
		}
	}
}

// appendU32 appends v as an unsigned LEB128.
func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
