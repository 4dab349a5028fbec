package httpout

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cmdhost/cmdhost/internal/setting"
)

// Grant is what a plugin may reach over HTTP: the hosts its patterns
// match, with the methods Methods names, each request and response
// bounded. The zero value grants nothing.
type Grant struct {
	// Hosts are the patterns of the hosts the plugin may reach (ParseHost).
	Hosts []Host
	// Methods the plugin may use; nil: DefaultMethods.
	Methods []string
	// PrivateNetworks are the addresses that are not public (loopback,
	// private, link-local...) that a granted name may resolve to. A host
	// pattern that is an address opens that address (on its port) by
	// itself; a name never does: its DNS may change.
	PrivateNetworks []netip.Prefix
	// MaxRequests bounds the requests of one call; 0: DefaultMaxRequests.
	// (No bound of a grant but MaxRedirects can be turned off.)
	MaxRequests int
	// MaxRequestBytes bounds a request's body; 0: DefaultMaxRequestBytes.
	MaxRequestBytes int
	// MaxResponseBytes bounds a response's body, read until the bound and
	// then cut; 0: DefaultMaxResponseBytes.
	MaxResponseBytes int
	// Timeout bounds a request, redirects and the response's body
	// included; 0: DefaultTimeout. The call's deadline bounds it too.
	Timeout time.Duration
	// MaxRedirects bounds the redirects a request follows; 0:
	// DefaultMaxRedirects, NoRedirects: none (a redirect is the
	// response).
	MaxRedirects int
	// Rate and Burst bound the plugin's requests, all its calls
	// together: Rate a second with bursts of Burst. 0: the defaults.
	Rate  float64
	Burst int
	// CAFile names a file of PEM certificates the plugin's TLS
	// connections trust instead of the system's roots; "": the system's.
	CAFile string
}

// The defaults of a Grant's bounds.
const (
	DefaultMaxRequests      = 16
	DefaultMaxRequestBytes  = 1 << 20
	DefaultMaxResponseBytes = 4 << 20
	DefaultTimeout          = 10 * time.Second
	DefaultMaxRedirects     = 5
	DefaultRate             = 50
	DefaultBurst            = 100
)

// MaxBodyBytes bounds MaxRequestBytes and MaxResponseBytes: a result
// handed to a guest must fit in an i32 length.
const MaxBodyBytes = 256 << 20

// MaxRedirectsLimit bounds MaxRedirects.
const MaxRedirectsLimit = 20

// DefaultMethods are the methods a grant without "methods" allows.
var DefaultMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// Granted reports whether g grants anything.
func (g Grant) Granted() bool { return len(g.Hosts) > 0 }

func (g Grant) withDefaults() Grant {
	if g.Methods == nil {
		g.Methods = DefaultMethods
	}
	g.MaxRequests = positiveOr(g.MaxRequests, DefaultMaxRequests)
	g.MaxRequestBytes = min(positiveOr(g.MaxRequestBytes, DefaultMaxRequestBytes), MaxBodyBytes)
	g.MaxResponseBytes = min(positiveOr(g.MaxResponseBytes, DefaultMaxResponseBytes), MaxBodyBytes)
	g.Timeout = positiveOr(g.Timeout, DefaultTimeout)
	g.MaxRedirects = min(setting.Or(g.MaxRedirects, DefaultMaxRedirects), MaxRedirectsLimit)
	if g.Rate <= 0 {
		g.Rate = DefaultRate
	}
	g.Burst = positiveOr(g.Burst, DefaultBurst)
	return g
}

// positiveOr is v, or def when v is not positive: a grant's bounds cannot
// be turned off.
func positiveOr[T setting.Number](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Host is a host pattern of a grant: a scheme, a host and a port.
//
//	api.example.com              https, that name, port 443
//	*.example.org:8443           https, any name under example.org (not example.org itself), port 8443
//	http://127.0.0.1:8080        plain http, that address, port 8080
//	https://[2001:db8::1]:*      that IPv6 address, any port
//	*                            https, any name or address (public addresses only), port 443
//
// Without a scheme a pattern is https; http must be written. A port of *
// is any port; without one, the scheme's (443, 80).
type Host struct {
	Scheme string // "https" or "http"
	// Name is a lower-case host name, "*.suffix", or "*" (any); "" when
	// Addr is set.
	Name string
	// Addr is the pattern's address when it names one.
	Addr netip.Addr
	// Port is the port; 0: any.
	Port int
}

// ParseHost parses a host pattern (see Host).
func ParseHost(s string) (Host, error) {
	h := Host{Scheme: "https"}
	rest := s
	if scheme, after, ok := strings.Cut(s, "://"); ok {
		switch strings.ToLower(scheme) {
		case "https", "http":
			h.Scheme = strings.ToLower(scheme)
		default:
			return Host{}, fmt.Errorf("%q: the scheme is http or https, not %q", s, scheme)
		}
		rest = after
	}
	if strings.ContainsAny(rest, "/?#@ ") || rest == "" {
		return Host{}, fmt.Errorf("%q: write [http://]host[:port], without a path, query, user or space (e.g. \"api.example.com\", \"http://10.0.0.5:8080\")", s)
	}
	host, port := rest, ""
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return Host{}, fmt.Errorf("%q: an IPv6 address is written in brackets, [::1]", s)
		}
		host, port = rest[1:end], strings.TrimPrefix(rest[end+1:], ":")
		if rest[end+1:] != "" && !strings.HasPrefix(rest[end+1:], ":") {
			return Host{}, fmt.Errorf("%q: after ] comes :port or nothing", s)
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return Host{}, fmt.Errorf("%q: %q is not an IPv6 address", s, host)
		}
		h.Addr = a.Unmap()
	} else {
		if a, err := netip.ParseAddr(rest); err == nil && a.Is6() {
			return Host{}, fmt.Errorf("%q: write an IPv6 address in brackets, [%s]", s, rest)
		}
		if i := strings.LastIndexByte(rest, ':'); i >= 0 {
			host, port = rest[:i], rest[i+1:]
		}
		if a, err := netip.ParseAddr(host); err == nil {
			if a.Is6() {
				return Host{}, fmt.Errorf("%q: write an IPv6 address in brackets, [%s]", s, host)
			}
			h.Addr = a
		} else {
			name := strings.TrimSuffix(strings.ToLower(host), ".")
			if err := checkNamePattern(name); err != nil {
				return Host{}, fmt.Errorf("%q: %w", s, err)
			}
			h.Name = name
		}
	}
	switch {
	case port == "*":
	case port == "" && strings.HasSuffix(rest, ":"):
		return Host{}, fmt.Errorf("%q: a : with no port after it", s)
	case port == "":
		h.Port = defaultPort(h.Scheme)
	default:
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return Host{}, fmt.Errorf("%q: the port is 1 to 65535 or *, not %q", s, port)
		}
		h.Port = n
	}
	return h, nil
}

// checkNamePattern checks a host name pattern: "*", or labels of letters,
// digits, '-' and '_' (ASCII: an international name in its xn-- form),
// of which the first may be "*".
func checkNamePattern(name string) error {
	if name == "*" {
		return nil
	}
	labels := strings.Split(name, ".")
	for i, l := range labels {
		if l == "*" && i == 0 && len(labels) > 1 {
			continue
		}
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return errors.New("a host name is labels of 1 to 63 characters separated by dots, none starting or ending with '-'")
		}
		for _, c := range []byte(l) {
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("%q: a host name holds letters, digits, '-' and '_' (an international name in its xn-- form), and * only as its first label", l)
			}
		}
	}
	if len(name) > 253 {
		return errors.New("a host name is at most 253 characters")
	}
	return nil
}

func defaultPort(scheme string) int {
	if scheme == "http" {
		return 80
	}
	return 443
}

// String returns the pattern as ParseHost reads it.
func (h Host) String() string {
	port := "*"
	if h.Port != 0 {
		port = strconv.Itoa(h.Port)
	}
	return h.Scheme + "://" + hostText(h.Name, h.Addr) + ":" + port
}

// hostText is an address (an IPv6 one in brackets) when a is valid, else
// name.
func hostText(name string, a netip.Addr) string {
	switch {
	case !a.IsValid():
		return name
	case a.Is6():
		return "[" + a.String() + "]"
	}
	return a.String()
}

// target is where a URL points: its scheme, host (a lower-case name
// without a trailing dot, or an address) and port.
type target struct {
	scheme string
	name   string
	addr   netip.Addr
	port   int
}

func (t target) String() string {
	return t.scheme + "://" + hostText(t.name, t.addr) + ":" + strconv.Itoa(t.port)
}

// pattern is t as a grant would name it exactly.
func (t target) pattern() string {
	s := t.String()
	if t.scheme == "https" && t.port == 443 {
		s = strings.TrimSuffix(strings.TrimPrefix(s, "https://"), ":443")
	}
	return s
}

// targetOf reads where u points; an error says why it cannot be a
// request's URL.
func targetOf(u *url.URL) (target, error) {
	t := target{scheme: strings.ToLower(u.Scheme)}
	switch {
	case t.scheme != "http" && t.scheme != "https":
		return target{}, fmt.Errorf("the scheme is http or https, not %q", u.Scheme)
	case u.User != nil:
		return target{}, errors.New("a URL with a user or password: send credentials in a header (Authorization)")
	case u.Host == "" || u.Opaque != "":
		return target{}, errors.New("not an absolute URL with a host")
	}
	host := strings.ToLower(u.Hostname())
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return target{}, errors.New("an IPv6 address with a zone")
		}
		t.addr = a.Unmap()
	} else {
		t.name = strings.TrimSuffix(host, ".")
		if t.name == "" || strings.Contains(t.name, "*") {
			return target{}, fmt.Errorf("host %q is not a host name", host)
		}
	}
	t.port = defaultPort(t.scheme)
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return target{}, fmt.Errorf("port %q", p)
		}
		t.port = n
	}
	return t, nil
}

// matches reports whether h covers t.
func (h Host) matches(t target) bool {
	if h.Scheme != t.scheme || (h.Port != 0 && h.Port != t.port) {
		return false
	}
	switch {
	case h.Addr.IsValid():
		return t.addr == h.Addr
	case h.Name == "*":
		return true
	case t.addr.IsValid():
		return false
	case strings.HasPrefix(h.Name, "*."):
		return strings.HasSuffix(t.name, h.Name[1:])
	}
	return t.name == h.Name
}

// granted reports whether g covers t with method.
func (g Grant) granted(t target, method string) (hostOK, methodOK bool) {
	for _, h := range g.Hosts {
		if h.matches(t) {
			hostOK = true
			break
		}
	}
	return hostOK, slices.Contains(g.Methods, method)
}

// explicit reports whether g names the address a on port: a host pattern
// that is that address (on that port or any), or a private network that
// holds it.
func (g Grant) explicit(a netip.Addr, port int) bool {
	a = a.Unmap()
	for _, h := range g.Hosts {
		if h.Addr.IsValid() && h.Addr == a && (h.Port == 0 || h.Port == port) {
			return true
		}
	}
	for _, p := range g.PrivateNetworks {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
