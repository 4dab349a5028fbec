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

// Instr reads one instruction at a time, its immediates skipped: each
// shape of immediate, a br_table's targets counted, and an opcode it does
// not know refused.
func TestInstr(t *testing.T) {
	code := []byte{
		0x02, 0x40, // block
		0x03, 0x7f, // loop (result i32)
		0x04, 0x63, 0x70, // if (result (ref null func))
		0x0e, 0x02, 0x00, 0x01, 0x00, // br_table 0 1 0
		0x11, 0x01, 0x00, // call_indirect 1 0
		0x1c, 0x01, 0x7f, // select (result i32)
		0x28, 0x42, 0x00, 0x10, // i32.load with a memory index, offset 16
		0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, // i64.const
		0x44, 0, 0, 0, 0, 0, 0, 0, 0, // f64.const
		0xfc, 0x0a, 0x00, 0x00, // memory.copy
		0xfc, 0x11, 0x00, // table.fill
		0xfd, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // v128.const
		0xfd, 0x15, 0x01, // i8x16.extract_lane_s 1
		0xfe, 0x03, 0x00, // atomic.fence
		0x6a, // i32.add
		0x0b, // end
	}
	want := []Instr{{Op: 0x02}, {Op: 0x03}, {Op: 0x04}, {Op: 0x0e, Targets: 3}, {Op: 0x11}, {Op: 0x1c}, {Op: 0x28},
		{Op: 0x42}, {Op: 0x44}, {Op: 0xfc, Sub: 10}, {Op: 0xfc, Sub: 17}, {Op: 0xfd, Sub: 12}, {Op: 0xfd, Sub: 21},
		{Op: 0xfe, Sub: 3}, {Op: 0x6a}, {Op: 0x0b}}
	r := &Reader{B: code}
	for i, w := range want {
		in, err := r.Instr()
		if err != nil || in != w {
			t.Fatalf("instruction %d: %+v, %v; want %+v", i, in, err, w)
		}
	}
	if !r.Done() {
		t.Fatalf("%d bytes left", len(code)-r.Off)
	}
	for _, b := range [][]byte{{0x06}, {0xfc, 0x12}, {0xfd, 0x80, 0x04}, {0xfe, 0x04}, {0x0e, 0x05, 0x00}} {
		if _, err := (&Reader{B: b}).Instr(); err == nil {
			t.Errorf("% x: no error", b)
		}
	}
}
