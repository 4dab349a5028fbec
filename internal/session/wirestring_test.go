package session

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWireProblem(t *testing.T) {
	for _, s := range []string{"", "plain ASCII ~!", "é € 𝄞", "\u00a0\u00ad\u2028\ufeff\ufffd\ufdcf\ufdf0\U0010fffd", strings.Repeat("x", 65535)} {
		if p := WireProblem(s); p != "" {
			t.Errorf("%.40q: %s", s, p)
		}
	}
	for _, c := range []struct{ s, want string }{
		{"a\x00b", "U+0000 at offset 1"},
		{"a\nb", "U+000A"},
		{"\x1f", "U+001F"},
		{"a\x7f", "U+007F"},
		{"\u0085", "U+0085"},
		{"\u009f", "U+009F"},
		{"\ufdd0", "U+FDD0"},
		{"\ufdef", "U+FDEF"},
		{"\ufffe", "U+FFFE"},
		{"\uffff", "U+FFFF"},
		{"\U0001fffe", "U+1FFFE"},
		{"\U0010ffff", "U+10FFFF"},
		{"ok\xff", "byte 0xff at offset 2 is not UTF-8"},
		{"\xe2\x82", "byte 0xe2 at offset 0"},       // cut mid-character
		{"\xc0\xaf", "byte 0xc0"},                   // overlong
		{"\xed\xa0\x80", "byte 0xed"},               // a surrogate
		{strings.Repeat("x", 65536), "65536 bytes"}, // longer than MQTT can carry
	} {
		if p := WireProblem(c.s); !strings.Contains(p, c.want) {
			t.Errorf("%.40q: problem %q, want it to say %q", c.s, p, c.want)
		}
	}
}

func TestCleanText(t *testing.T) {
	for _, c := range []struct {
		in    string
		limit int
		want  string
	}{
		{"plain", 10, "plain"},
		{"one\ntwo\r\n\tthree", 100, "one two three"},
		{"nul\x00 del\x7f c1\u0085x\u0090 nc\ufdd0\uffff", 100, "nul\ufffd del\ufffd c1 x\ufffd nc\ufffd\ufffd"},
		{"bad\xff\xfe utf8 \xe2\x82", 100, "bad\ufffd\ufffd utf8 \ufffd\ufffd"},
		{"0123456789", 10, "0123456789"},
		{"0123456789a", 10, "0123456…"},
		{strings.Repeat("€", 10), 10, "€€…"},             // cut on a character boundary
		{strings.Repeat("€", 3) + "x", 10, "€€€x"},       // 10 bytes: fits
		{strings.Repeat("\xff", 4), 10, "\ufffd\ufffd…"}, // cleaning grows it past the bound
		{"€€\n€€", 10, "€€ …"},
	} {
		got := CleanText(c.in, c.limit)
		if got != c.want {
			t.Errorf("CleanText(%q, %d) = %q, want %q", c.in, c.limit, got, c.want)
		}
		checkClean(t, got, c.limit)
	}
}

// maxStatusMessage is the bound the protocol cuts its status messages
// to (rpc.MaxStatusMessage).
const maxStatusMessage = 1024

// cleanMessage is what the protocol does to a status message.
func cleanMessage(s string) string { return CleanMiddle(s, maxStatusMessage) }

func TestCleanMessage(t *testing.T) {
	if m := cleanMessage("plain message"); m != "plain message" {
		t.Fatal(m)
	}
	// A long quoted value: both ends of the message survive the cut.
	long := `malformed timestamp "` + strings.Repeat("€", 65535/3) + `": want three fields`
	m := cleanMessage(long)
	checkClean(t, m, maxStatusMessage)
	if !strings.HasPrefix(m, `malformed timestamp "€€`) || !strings.HasSuffix(m, `€€": want three fields`) || !strings.Contains(m, "€…€") {
		t.Fatalf("the cut keeps both ends: %q", m)
	}
	// Between one and two bounds, cleaned whole, then cut in the middle.
	mid := "start " + strings.Repeat("ab\n", 500) + " end"
	m = cleanMessage(mid)
	checkClean(t, m, maxStatusMessage)
	if !strings.HasPrefix(m, "start ab ab") || !strings.HasSuffix(m, "ab ab  end") || !strings.Contains(m, "…") {
		t.Fatalf("%q", m)
	}
	// Controls that collapse need no cut.
	if m := cleanMessage("x" + strings.Repeat("\n", 1500) + "y"); m != "x y" {
		t.Fatalf("%q", m)
	}
}

// checkClean fails unless s is sendable and at most limit bytes.
func checkClean(t *testing.T, s string, limit int) {
	t.Helper()
	if p := WireProblem(s); p != "" {
		t.Errorf("%.60q is not sendable: %s", s, p)
	}
	if len(s) > limit {
		t.Errorf("%d bytes, bound %d: %.60q", len(s), limit, s)
	}
}

func FuzzCleanText(f *testing.F) {
	f.Add("one\ntwo", 10)
	f.Add("€€€€", 7)
	f.Add("\xff\xfe\x00\u0085\ufdd0", 5)
	f.Fuzz(func(t *testing.T, s string, n int) {
		limit := len(cutMarker) + abs(n)%2048
		got := CleanText(s, limit)
		checkClean(t, got, limit)
		if len(s) <= limit && WireProblem(s) == "" && !strings.ContainsAny(s, "\t\n\v\f\r\u0085") && got != s {
			t.Fatalf("a sendable string that fits is kept: %q → %q", s, got)
		}
		m := cleanMessage(s)
		checkClean(t, m, maxStatusMessage)
		if !utf8.ValidString(m) {
			t.Fatal("not UTF-8")
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}
