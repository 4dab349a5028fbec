package wasm

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cmdhost/cmdhost/internal/wasmbin"
)

// readName reads a name for a message: quoted unless it is printable UTF-8.
func readName(r *wasmbin.Reader) (string, error) {
	s, err := r.Name()
	if err != nil {
		return "", err
	}
	if !utf8.ValidString(s) || strings.IndexFunc(s, func(c rune) bool { return !unicode.IsPrint(c) }) >= 0 {
		s = strconv.Quote(s)
	}
	return s, nil
}
