package wasmbin

import (
	"errors"
	"testing"
)

// LEB128 reads: what AppendU32 writes reads back; a value past 32 bits,
// a representation past 5 bytes and a read past the end are errors; S33
// extends the sign.
func TestLEB(t *testing.T) {
	for _, v := range []uint32{0, 1, 127, 128, 1 << 20, 1<<32 - 1} {
		r := &Reader{B: AppendU32(nil, v)}
		if got, err := r.U32(); err != nil || got != v || !r.Done() {
			t.Errorf("U32 of %d: %d, %v, done %v", v, got, err, r.Done())
		}
	}
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x1f}, "integer too large"},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, "integer too large"},
		{[]byte{0x80}, ErrTruncated.Error()},
	} {
		if _, err := (&Reader{B: c.b}).U32(); err == nil || err.Error() != c.want {
			t.Errorf("U32 of % x: %v, want %s", c.b, err, c.want)
		}
	}
	if v, err := (&Reader{B: []byte{0x40}}).S33(); err != nil || v != -64 {
		t.Errorf("S33 of 0x40: %d, %v; want -64", v, err)
	}
	if err := (&Reader{B: []byte{0x80, 0x80}}).SkipLEB(2); err == nil {
		t.Error("SkipLEB past its bytes: no error")
	}
	if _, err := (&Reader{B: []byte{3, 'a'}}).Name(); !errors.Is(err, ErrTruncated) {
		t.Errorf("a name past the end: %v", err)
	}
}
