// Package redact is the one place where the host turns a URL it prints
// into one fit to print: the password of a URL's user info (a broker's
// mqtt://user:PW@host, a store's rediss://user:PW@host) never reaches a
// log line, an error, /readyz, a metric or `version`. Every place that
// formats a broker or store URL goes through URL or String, so that a
// grep for them finds every such place.
package redact

import (
	"net/url"
	"strings"
)

// URL returns u as a string with its password, if any, replaced by
// "xxxxx" (url.URL.Redacted); "" for nil.
func URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	s := u.Redacted()
	if u.User == nil && strings.Contains(s, "@") {
		// An '@' past the host: a password holding '/', '?' or '#'
		// after digits (u:1234/ab@host) parses as host u, port 1234.
		return String(s)
	}
	return s
}

// String returns the URL raw with its password replaced by "xxxxx". A
// string that does not parse as a URL with a host, or that has an '@'
// its parsed user info does not account for (a password with '/', '?'
// or '#' makes its user part parse as a host and port), is redacted
// conservatively: everything up to its last '@' becomes "xxxxx@", and a
// string with no '@' is returned as it is.
func String(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" && (u.User != nil || !strings.Contains(raw, "@")) {
		return u.Redacted()
	}
	at := strings.LastIndex(raw, "@")
	if at < 0 {
		return raw
	}
	scheme := ""
	if i := strings.Index(raw[:at], "://"); i >= 0 {
		scheme = raw[:i+3]
	}
	return scheme + "xxxxx" + raw[at:]
}
