package abi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"unsafe"
)

// The envelope format shared by Request, Response and Description: a flat
// sequence of records
//
//	tag  u8
//	len  u32, little endian
//	value [len]byte
//
// Integers are little endian and of the exact width their tag defines;
// strings are UTF-8 without a terminator; a map entry is one record whose
// value is `klen u32 | key | value`. Records may come in any order; a tag
// this version does not know is skipped, so a minor addition does not break
// older hosts or guests. Repeating a singular tag is an error.

// recordHeader is the size of a record's tag and length.
const recordHeader = 5

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("malformed envelope")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

func appendRecord(dst []byte, tag byte, value []byte) []byte {
	dst = append(dst, tag)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(value)))
	return append(dst, value...)
}

// beginRecord appends a record header whose length endRecord fills in once
// the value (a nested envelope) has been appended after it: nested
// envelopes are encoded in place, with no buffer of their own.
func beginRecord(dst []byte, tag byte) ([]byte, int) {
	return append(dst, tag, 0, 0, 0, 0), len(dst) + recordHeader
}

func endRecord(dst []byte, at int) []byte {
	binary.LittleEndian.PutUint32(dst[at-4:at], uint32(len(dst)-at))
	return dst
}

func appendString(dst []byte, tag byte, s string) []byte {
	dst = append(dst, tag)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}

func appendU8(dst []byte, tag, v byte) []byte {
	return append(dst, tag, 1, 0, 0, 0, v)
}

func appendU32(dst []byte, tag byte, v uint32) []byte {
	dst = append(dst, tag, 4, 0, 0, 0)
	return binary.LittleEndian.AppendUint32(dst, v)
}

func appendI64(dst []byte, tag byte, v int64) []byte {
	dst = append(dst, tag, 8, 0, 0, 0)
	return binary.LittleEndian.AppendUint64(dst, uint64(v))
}

// appendMap writes one record per entry, keys sorted so that encoding is
// deterministic.
func appendMap(dst []byte, tag byte, m map[string]string) []byte {
	if len(m) == 0 {
		return dst
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		dst = append(dst, tag)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(4+len(k)+len(v)))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(k)))
		dst = append(dst, k...)
		dst = append(dst, v...)
	}
	return dst
}

// reader walks the records of an envelope.
type reader struct {
	buf      []byte
	singular uint64 // bit per known tag that may appear once
	seen     uint64 // bit per singular tag already read
}

// bits returns a mask with a bit for each tag (all below 64).
func bits(tags ...byte) uint64 {
	var m uint64
	for _, t := range tags {
		m |= 1 << t
	}
	return m
}

// next returns the next record; ok is false at the end. A repeated known
// singular tag is an error.
func (r *reader) next() (tag byte, value []byte, ok bool, err error) {
	if len(r.buf) == 0 {
		return 0, nil, false, nil
	}
	if len(r.buf) < recordHeader {
		return 0, nil, false, malformed("truncated record header (%d bytes left)", len(r.buf))
	}
	tag = r.buf[0]
	n := binary.LittleEndian.Uint32(r.buf[1:5])
	if uint64(n) > uint64(len(r.buf)-recordHeader) {
		return 0, nil, false, malformed("record %d declares %d bytes, %d left", tag, n, len(r.buf)-recordHeader)
	}
	value = r.buf[recordHeader : recordHeader+int(n)]
	r.buf = r.buf[recordHeader+int(n):]
	return tag, value, true, r.once(tag)
}

// once fails when a known singular tag repeats. Unknown tags may repeat:
// a later minor version may define them as repeatable.
func (r *reader) once(tag byte) error {
	if tag >= 64 || r.singular&(1<<tag) == 0 {
		return nil
	}
	bit := uint64(1) << tag
	if r.seen&bit != 0 {
		return malformed("record %d repeated", tag)
	}
	r.seen |= bit
	return nil
}

func u8(tag byte, v []byte) (byte, error) {
	if len(v) != 1 {
		return 0, malformed("record %d: want 1 byte, have %d", tag, len(v))
	}
	return v[0], nil
}

func u32(tag byte, v []byte) (uint32, error) {
	if len(v) != 4 {
		return 0, malformed("record %d: want 4 bytes, have %d", tag, len(v))
	}
	return binary.LittleEndian.Uint32(v), nil
}

func i64(tag byte, v []byte) (int64, error) {
	if len(v) != 8 {
		return 0, malformed("record %d: want 8 bytes, have %d", tag, len(v))
	}
	return int64(binary.LittleEndian.Uint64(v)), nil
}

func boolean(tag byte, v []byte) (bool, error) {
	b, err := u8(tag, v)
	if err != nil {
		return false, err
	}
	if b > 1 {
		return false, malformed("record %d: boolean must be 0 or 1, have %d", tag, b)
	}
	return b == 1, nil
}

// mapEntry decodes `klen u32 | key | value` into m, refusing a repeated key.
func mapEntry(tag byte, v []byte, m *map[string]string) error {
	if len(v) < 4 {
		return malformed("record %d: map entry shorter than its key length", tag)
	}
	kl := binary.LittleEndian.Uint32(v)
	if uint64(kl) > uint64(len(v)-4) {
		return malformed("record %d: key length %d exceeds entry", tag, kl)
	}
	k := string(v[4 : 4+kl])
	if *m == nil {
		*m = make(map[string]string)
	}
	if _, dup := (*m)[k]; dup {
		return malformed("record %d: key %q repeated", tag, k)
	}
	(*m)[k] = string(v[4+kl:])
	return nil
}

// durationMillis converts a millisecond count from the wire, refusing
// values that overflow time.Duration.
func durationMillis(tag byte, v []byte) (int64, error) {
	ms, err := i64(tag, v)
	if err != nil {
		return 0, err
	}
	if ms < 0 || ms > math.MaxInt64/int64(1e6) {
		return 0, malformed("record %d: duration %d ms out of range", tag, ms)
	}
	return ms, nil
}

// Field decoders: copying ones for the host, sharing ones for guests (see
// DecodeRequestShared).
func copyString(v []byte) string { return string(v) }

func copyBytes(v []byte) []byte { return append([]byte(nil), v...) }

func shareString(v []byte) string { return unsafe.String(unsafe.SliceData(v), len(v)) }

// shareBytes caps the slice so an append by the handler cannot write into
// the rest of the buffer.
func shareBytes(v []byte) []byte { return v[:len(v):len(v)] }
