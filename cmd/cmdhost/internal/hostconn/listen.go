package hostconn

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/cmdhost/cmdhost/internal/redact"
)

// DefaultListen is the embedded broker's address: not MQTT's 1883, so it
// never collides with a system broker there.
const DefaultListen = "127.0.0.1:11883"

func Hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "cmdhost"
	}
	return h
}

// brokerURL parses a --broker value. It may name the user
// (mqtts://NAME@host:8883), never a password: a flag's value shows in
// process listings, so the password comes from --password-file or
// CMDHOST_PASSWORD, and no error prints it.
func brokerURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "mqtt" && u.Scheme != "tcp" && u.Scheme != "tls" && u.Scheme != "mqtts" && u.Scheme != "ssl") {
		return nil, fmt.Errorf("--broker %q: want a URL such as mqtt://127.0.0.1:1883 (or mqtts://host:8883 for TLS)", redact.String(raw))
	}
	if _, has := u.User.Password(); has || strings.Contains(u.Path+u.RawQuery+u.Fragment, "@") {
		// An '@' past the host is a password holding '/', '?' or '#'
		// that the parser took for the host's port and a path.
		return nil, fmt.Errorf("--broker %s: a password in the URL would show in process listings and logs: give it in a file (--password-file FILE) or in %s; the URL may keep the user (mqtt://NAME@host)", redact.URL(u), passwordEnv)
	}
	return u, nil
}
