package base

import (
	"strings"
	"unicode"
)

// Shown is s made safe to print on a terminal: what a host, a plugin or
// any client that publishes on a host's topics sends may hold control
// characters (escape sequences that move the cursor, retitle the window
// or clear the screen), which become U+FFFD, as bytes that are not UTF-8
// do.
func Shown(s string) string {
	clean := true
	for _, r := range s {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return unicode.ReplacementChar
		}
		return r
	}, strings.ToValidUTF8(s, string(unicode.ReplacementChar)))
}
