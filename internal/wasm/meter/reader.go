package meter

import (
	"errors"
)

// reader reads the WebAssembly binary format.
type reader struct {
	b   []byte
	off int
}

var errTruncated = errors.New("unexpected end")

func (r *reader) done() bool { return r.off >= len(r.b) }

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errTruncated
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

// bytes returns the next n bytes, a view of the module.
func (r *reader) bytes(n uint32) ([]byte, error) {
	if uint64(n) > uint64(len(r.b)-r.off) {
		return nil, errTruncated
	}
	out := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return out, nil
}

// u32 reads an unsigned LEB128 of at most 32 bits.
func (r *reader) u32() (uint32, error) {
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

// s33 reads a signed LEB128 of at most 33 bits (a block type).
func (r *reader) s33() (int64, error) {
	var v int64
	var shift uint
	for i := 0; i < 5; i++ {
		c, err := r.byte()
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
	return 0, errors.New("integer representation too long")
}

// skipLEB skips a LEB128 of at most maxBytes bytes, signed or not.
func (r *reader) skipLEB(maxBytes int) error {
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

// name skips a name (its length and bytes) and returns it.
func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(n)
	return string(b), err
}

// valType skips a value type: one byte, or a reference type prefix and a
// heap type.
func (r *reader) valType() error {
	c, err := r.byte()
	if err != nil {
		return err
	}
	if c == 0x63 || c == 0x64 { // (ref null ht), (ref ht)
		return r.skipLEB(5)
	}
	return nil
}

// appendU32 appends v as an unsigned LEB128.
func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendName appends a name: its length and bytes.
func appendName(b []byte, s string) []byte {
	return append(appendU32(b, uint32(len(s))), s...)
}

// appendPadded4 appends v (< 2^27) as a signed LEB128 of exactly 4 bytes,
// so that it can be patched in place once known (patchPadded4).
func appendPadded4(b []byte, v uint32) []byte {
	return append(b, byte(v)|0x80, byte(v>>7)|0x80, byte(v>>14)|0x80, byte(v>>21)&0x3f)
}

func patchPadded4(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v)|0x80, byte(v>>7)|0x80, byte(v>>14)|0x80, byte(v>>21)&0x3f
}
