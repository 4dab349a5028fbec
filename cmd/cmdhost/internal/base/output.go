package base

import (
	"encoding/json"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

func Short(digest string) string {
	if len(digest) > 12 {
		digest = digest[:12]
	}
	return Shown(OrDash(digest)) // a host's answer: control characters shown as �
}

// WritePayload writes a reply's payload; on a terminal it ends it with a
// newline, so that the shell's prompt does not follow it on its line. A
// pipe or file gets the payload as it is.
func WritePayload(w io.Writer, p []byte) error {
	if _, err := w.Write(p); err != nil {
		return err
	}
	if len(p) > 0 && p[len(p)-1] != '\n' && IsTerminal(w) {
		_, err := w.Write([]byte{'\n'})
		return err
	}
	return nil
}

// IsTerminal tells whether w is a terminal (a character device: /dev/null
// is one too, where a newline does no harm).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func OrNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func OrDefault(s string) string {
	if s == "" {
		return "(host default)"
	}
	return s
}

func OrAny(ts []string) string {
	if len(ts) == 0 {
		return "any"
	}
	return strings.Join(ts, ",")
}

// WriteJSONLine writes v as one JSON line: a refresh of watch --json, the
// reply of the fleet commands' --json.
func WriteJSONLine(w io.Writer, v any) error {
	out, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(out, '\n'))
	return err
}

// Clip cuts s to n columns (runes), its last one an ellipsis when cut.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
