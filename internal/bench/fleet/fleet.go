// Package fleet makes many distinct plugins out of one test module, for
// the measurements of how cmdhost's cost grows with the number of plugins
// (make bench-scale, the per-plugin memory tests). Each copy serves a
// command of its own and has a digest of its own, so that the host loads
// and compiles every one as it would a real fleet: the copies differ only
// in a marker string, the command's name, patched in place (same length,
// so that no offset or length in the module changes).
package fleet

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// WATMarker is the command name of testdata/wat-echo, which WATName
// replaces in its copies.
const WATMarker = "wat-echo"

// WATName is the name of copy i (< 100,000) of wat-echo: its plugin's and
// its command's, as long as WATMarker.
func WATName(i int) string { return fmt.Sprintf("we-%05d", i) }

// GoMarker is the command name the Go guest of testdata/bench-goecho is
// built with (-ldflags -X main.command=…), which GoName replaces.
const GoMarker = "gecho-marker-000"

// GoName is the name of copy i (< 1,000,000,000) of the Go guest, as
// long as GoMarker.
func GoName(i int) string { return fmt.Sprintf("gecho-%010d", i) }

// Write writes n copies of module into dir as NAME.wasm, NAME being
// name(i), each with marker replaced by its name, and returns the names.
// The marker must occur in module (a Go guest holds it twice: in its data
// and in the build settings it records) and every name must be as long
// as it.
func Write(dir string, module []byte, marker string, n int, name func(int) string) ([]string, error) {
	var at []int
	for i := 0; ; {
		j := bytes.Index(module[i:], []byte(marker))
		if j < 0 {
			break
		}
		at = append(at, i+j)
		i += j + len(marker)
	}
	if len(at) == 0 {
		return nil, fmt.Errorf("the module does not hold %q: it cannot be copied under other names", marker)
	}
	names := make([]string, n)
	buf := bytes.Clone(module)
	for i := range n {
		names[i] = name(i)
		if len(names[i]) != len(marker) {
			return nil, fmt.Errorf("copy name %q is not as long as the marker %q", names[i], marker)
		}
		for _, a := range at {
			copy(buf[a:], names[i])
		}
		if err := os.WriteFile(filepath.Join(dir, names[i]+".wasm"), buf, 0o644); err != nil {
			return nil, err
		}
	}
	return names, nil
}
