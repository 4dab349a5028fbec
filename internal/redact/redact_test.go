package redact

import (
	"net/url"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for raw, want := range map[string]string{
		"rediss://cmdhost:Hunter2@127.0.0.1:6380/0": "rediss://cmdhost:xxxxx@127.0.0.1:6380/0",
		"redis://:PW-WRONG@127.0.0.1:6379/0":        "redis://:xxxxx@127.0.0.1:6379/0",
		"mqtt://user@host:1883":                     "mqtt://user@host:1883",
		"mqtt://127.0.0.1:1883":                     "mqtt://127.0.0.1:1883",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := URL(u); got != want {
			t.Errorf("URL(%s) = %s, want %s", raw, got, want)
		}
		if got := String(raw); got != want {
			t.Errorf("String(%s) = %s, want %s", raw, got, want)
		}
	}
	if URL(nil) != "" {
		t.Error("URL(nil) is not empty")
	}
}

// A string that does not parse keeps nothing before its last '@'.
func TestStringUnparsable(t *testing.T) {
	for _, raw := range []string{
		"redis://user:pa%zz@host:6379/0", // bad escape: url.Parse fails
		"redis://us er:Secret@Word@host", // a password with '@' in it
		"user:Secret@host:6379",          // no scheme
	} {
		got := String(raw)
		if strings.Contains(got, "Secret") || strings.Contains(got, "pa%zz") {
			t.Errorf("String(%q) = %q: the password shows", raw, got)
		}
		if !strings.Contains(got, "xxxxx@") {
			t.Errorf("String(%q) = %q: no redaction mark", raw, got)
		}
	}
	if got := String("no at sign"); got != "no at sign" {
		t.Errorf("String without '@' = %q", got)
	}
}

// A password holding '/', '?' or '#' after digits parses as the host's
// port, the user as the host, and the rest as a path, query or fragment:
// url.URL.Redacted sees no user info. The '@' after the host gives it
// away, and the part before it is cut.
func TestPasswordParsedAsPort(t *testing.T) {
	for _, raw := range []string{"rediss://u:1234/ab+c@host:6380/0", "redis://u:99#x@h:1/0", "mqtt://u:12?z@h:1"} {
		got := String(raw)
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		fromURL := URL(u)
		for _, out := range []string{got, fromURL} {
			if strings.Contains(out, "ab+c") || strings.Contains(out, "99#x") || strings.Contains(out, "12?z") || !strings.Contains(out, "xxxxx@") {
				t.Errorf("%s: redacted as %q", raw, out)
			}
		}
	}
}
