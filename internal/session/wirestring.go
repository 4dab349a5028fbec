package session

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Strings on the wire.
//
// MQTT v5 strings (topics, content types, user property keys and values)
// must be well-formed UTF-8 without U+0000, of at most 65,535 bytes.
// mosquitto (2.0.11; TestMosquittoRefusesWhatWireRefuses measures it) also
// refuses the control characters U+0001–U+001F and U+007F–U+009F and the
// non-characters U+FDD0–U+FDEF and U+xFFFE/U+xFFFF. It does not refuse
// such a packet: it drops the connection of the client that sent it, and
// paho sends its unacknowledged QoS 1 publishes again after each reconnect,
// so that one bad string keeps a client off the broker for good. (paho
// itself cuts a longer string at 65,535 bytes, mid-character if it falls
// there.) So every string the host publishes follows these rules, however
// it came to be:
//   - text the host writes or quotes (status messages, __propName,
//     __propVal, the versions of a 505) is cleaned (CleanText): whitespace
//     controls become a space, other refused characters and bytes that are
//     not UTF-8 become U+FFFD, and it is cut to a bound on a character
//     boundary, "…" marking the cut;
//   - what must arrive as it was or not at all (a handler's metadata and
//     content type, topics) is checked (WireProblem) and, when it fails,
//     dropped or refused by its user;
//   - every packet is checked whole before it is published (Session.Check:
//     strings and size against the broker's Maximum Packet Size).

// MaxString is the longest string MQTT can carry (a 16-bit length).
const MaxString = 65535

// cutMarker marks where a string was cut.
const cutMarker = "…"

// wireRune reports whether brokers accept r in a string.
func wireRune(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f: // C0 and C1 controls, DEL
		return false
	case r >= 0xfdd0 && r <= 0xfdef, r&0xfffe == 0xfffe: // non-characters
		return false
	case r >= 0xd800 && r <= 0xdfff, r > utf8.MaxRune: // surrogates, beyond Unicode
		return false
	}
	return true
}

// WireProblem says why s cannot be sent as an MQTT string as it is, or
// returns "" when it can.
func WireProblem(s string) string {
	if len(s) > MaxString {
		return fmt.Sprintf("%d bytes, more than MQTT's %d", len(s), MaxString)
	}
	if plainASCII(s) {
		return ""
	}
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return fmt.Sprintf("byte 0x%02x at offset %d is not UTF-8", s[i], i)
			}
		}
		if !wireRune(r) {
			return fmt.Sprintf("character %U at offset %d is refused by brokers", r, i)
		}
	}
	return ""
}

// plainASCII reports whether s is printable ASCII only: the common case,
// which needs no decoding.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// CleanText returns s as a string brokers accept, of at most limit bytes
// (at least len(cutMarker)): each run of whitespace controls (tab, line
// and page breaks) becomes one space, any other refused character and any
// byte that is not UTF-8 becomes U+FFFD, and a longer result is cut on a
// character boundary, its end replaced by "…".
func CleanText(s string, limit int) string {
	if len(s) <= limit && plainASCII(s) {
		return s
	}
	c := clean(prefix(s, limit))
	if len(s) <= limit && len(c) <= limit {
		return c
	}
	return c[:runeStartAtOrBefore(c, limit-len(cutMarker))] + cutMarker
}

// CleanMiddle is CleanText cut in the middle rather than at the end, for
// a status message (the protocol's __stMsg): an error often quotes the
// offending value before it says what is wrong with it, and both ends tell.
func CleanMiddle(s string, limit int) string {
	if len(s) <= limit && plainASCII(s) {
		return s
	}
	whole := len(s) <= 2*limit
	head, tail := s, s
	if !whole { // only its ends can show: clean just those
		head, tail = prefix(s, limit), suffix(s, limit)
	}
	h := clean(head)
	if whole && len(h) <= limit {
		return h
	}
	t := h
	if !whole {
		t = clean(tail)
	}
	room := limit - len(cutMarker)
	hn := runeStartAtOrBefore(h, room*2/3)
	tn := runeStartAtOrAfter(t, len(t)-(room-hn))
	return h[:hn] + cutMarker + t[tn:]
}

// clean replaces what brokers refuse (see CleanText).
func clean(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false // the last rune written is a space standing for controls
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				b.WriteRune(utf8.RuneError)
				space = false
				continue
			}
		}
		switch {
		case r == '\t', r == '\n', r == '\v', r == '\f', r == '\r', r == 0x85:
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		case !wireRune(r):
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
		space = false
	}
	return b.String()
}

// prefix returns at most n bytes from the start of s, not splitting a
// character of its (backing off at most utf8.UTFMax-1 bytes: s may not be
// UTF-8).
func prefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for i := n; i > n-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i]
		}
	}
	return s[:n]
}

// suffix returns at most n bytes from the end of s, not splitting a
// character of its (as prefix).
func suffix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	start := len(s) - n
	for i := start; i < start+utf8.UTFMax && i < len(s); i++ {
		if utf8.RuneStart(s[i]) {
			return s[i:]
		}
	}
	return s[start:]
}

// runeStartAtOrBefore returns the largest i <= n at which a character of
// the valid UTF-8 string s starts, or len(s) when n is beyond it.
func runeStartAtOrBefore(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return max(n, 0)
}

// runeStartAtOrAfter returns the smallest i >= n at which a character of
// the valid UTF-8 string s starts, or len(s).
func runeStartAtOrAfter(s string, n int) int {
	n = max(n, 0)
	for n < len(s) && !utf8.RuneStart(s[n]) {
		n++
	}
	return n
}
