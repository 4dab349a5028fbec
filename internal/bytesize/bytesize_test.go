package bytesize

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "4194304": 4194304, "1MiB": 1 << 20, "64KiB": 64 << 10, "64 kib": 64 << 10,
		"2GB": 2e9, "1kB": 1000, "1.5KiB": 1536, "512B": 512, "1TiB": 1 << 40, " 8MiB ": 8 << 20, "-1": -1,
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, says := range map[string]string{
		"":              "not a size",
		"MiB":           "not a size",
		"1MB2":          "unknown unit",
		"1 megs":        "unknown unit",
		"0.3KiB":        "not a whole number of bytes",
		"1e6":           "unknown unit",
		"1/2MiB":        "unknown unit",
		"9000PiB":       "unknown unit",
		"9000000000TiB": "too large",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("Parse(%q): %v; want an error saying %q", in, err, says)
		}
		if err != nil && !strings.Contains(err.Error(), "MiB") && !strings.Contains(err.Error(), "bytes") {
			t.Errorf("Parse(%q): %v: names no accepted form", in, err)
		}
	}
}

func TestFormatReadsBack(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1000: "1000", 1 << 20: "1MiB", 72 << 20: "72MiB", 1 << 30: "1GiB", 1536: "1536", -1: "-1", 3 << 40: "3TiB"} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q; want %q", n, got, want)
		}
		if back, err := Parse(Format(n)); err != nil || back != n {
			t.Errorf("Parse(Format(%d)) = %d, %v", n, back, err)
		}
	}
}

func TestHuman(t *testing.T) {
	for n, want := range map[int64]string{1: "1 byte", 512: "512 bytes", 1 << 30: "1 GiB", 1536 << 10: "1.5 MiB", 5 << 20: "5 MiB"} {
		if got := Human(n); got != want {
			t.Errorf("Human(%d) = %q; want %q", n, got, want)
		}
	}
}

func TestValue(t *testing.T) {
	v := NewValue(4 << 20)
	if v.String() != "4MiB" {
		t.Fatalf("default shown as %q", v.String())
	}
	if err := v.Set("1MiB"); err != nil || v.Bytes() != 1<<20 {
		t.Fatalf("Set(1MiB): %d, %v", v.Bytes(), err)
	}
	if err := v.Set("1 megabyte"); err == nil || v.Bytes() != 1<<20 {
		t.Fatalf("Set of a bad value: %v, left %d", err, v.Bytes())
	}
}
