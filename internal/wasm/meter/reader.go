package meter

import "github.com/cmdhost/cmdhost/internal/wasmbin"

// appendName appends a name: its length and bytes.
func appendName(b []byte, s string) []byte {
	return append(wasmbin.AppendU32(b, uint32(len(s))), s...)
}

// appendPadded4 appends v (< 2^27) as a signed LEB128 of exactly 4 bytes,
// so that it can be patched in place once known (patchPadded4).
func appendPadded4(b []byte, v uint32) []byte {
	return append(b, byte(v)|0x80, byte(v>>7)|0x80, byte(v>>14)|0x80, byte(v>>21)&0x3f)
}

func patchPadded4(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v)|0x80, byte(v>>7)|0x80, byte(v>>14)|0x80, byte(v>>21)&0x3f
}
