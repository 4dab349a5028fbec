// Package bytesize is the one reading and writing of a size in bytes that
// a person types or reads: serve's --max-response-bytes 1MiB, an operator
// file's "maxBytes": "64KiB", a log line's "1 GiB". Before it, sizes were
// whole numbers of bytes on the command line while the README wrote them
// in MiB, and each message that showed one printed it its own way.
//
// Parse accepts a whole number of bytes (4194304), or a number and a unit:
// B, the binary KiB, MiB, GiB, TiB (powers of 1024, what memory and
// buffers are counted in) or the decimal kB, MB, GB, TB (powers of 1000,
// as disks are sold). A fraction is allowed when the bytes come out whole
// (1.5KiB, not 0.3KiB). Units are matched ignoring case and may follow a
// space. Format writes the binary unit that divides a size exactly
// (8MiB), else the bytes, so that what Format writes Parse reads back.
package bytesize

import (
	"fmt"
	"math"
	"math/big"
	"strings"
)

// Forms names what Parse accepts, for the error of a value it refuses.
const Forms = "a whole number of bytes (1048576) or a number and a unit: " +
	"KiB, MiB, GiB, TiB (×1024) or kB, MB, GB, TB (×1000), e.g. 4MiB, 64KiB, 2GB"

// units by name, lowercased.
var units = map[string]int64{
	"b":   1,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
}

// Parse reads s as a size in bytes. Its error says what is wrong and
// names the forms it accepts (Forms); the caller adds the value and which
// flag or field it was for.
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != '-' && r != '+' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(t[:i]), strings.ToLower(strings.TrimSpace(t[i:]))
	}
	mult := int64(1)
	if unit != "" {
		m, ok := units[unit]
		if !ok {
			return 0, fmt.Errorf("unknown unit %q: want %s", strings.TrimSpace(t[i:]), Forms)
		}
		mult = m
	}
	r, ok := new(big.Rat).SetString(num)
	if num == "" || !ok {
		return 0, fmt.Errorf("not a size: want %s", Forms)
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	if !r.IsInt() {
		return 0, fmt.Errorf("not a whole number of bytes (%s): use a smaller unit", r.FloatString(1))
	}
	if !r.Num().IsInt64() {
		return 0, fmt.Errorf("too large (at most %d bytes)", int64(math.MaxInt64))
	}
	return r.Num().Int64(), nil
}

// binary are the units Format writes, largest first.
var binary = []struct {
	name string
	n    int64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// Format writes n as Parse reads it: in the largest binary unit that
// divides it (64MiB), else in bytes (1000). A negative n (off) and 0 are
// written as numbers.
func Format(n int64) string {
	for _, u := range binary {
		if n > 0 && n%u.n == 0 {
			return fmt.Sprintf("%d%s", n/u.n, u.name)
		}
	}
	return fmt.Sprint(n)
}

// Human writes n for a person to read, not to type back: "1 GiB",
// "1.5 MiB", "512 bytes"; one decimal at most.
func Human(n int64) string {
	for _, u := range binary {
		if n >= u.n || -n >= u.n {
			v := float64(n) / float64(u.n)
			if n%u.n == 0 {
				return fmt.Sprintf("%d %s", n/u.n, u.name)
			}
			return fmt.Sprintf("%.1f %s", v, u.name)
		}
	}
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// Value is a size flag's value (urfave/cli's Generic): it parses with
// Parse and shows its default with Format.
type Value struct{ n int64 }

// NewValue is a Value holding n, the flag's default.
func NewValue(n int64) *Value { return &Value{n: n} }

// Set parses s into v.
func (v *Value) Set(s string) error {
	n, err := Parse(s)
	if err != nil {
		return err
	}
	v.n = n
	return nil
}

// String is v as Format writes it.
func (v *Value) String() string {
	if v == nil {
		return ""
	}
	return Format(v.n)
}

// Bytes is the size v holds.
func (v *Value) Bytes() int64 { return v.n }
