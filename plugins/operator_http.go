package plugins

import (
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/cmdhost/cmdhost/internal/httpout"
)

// The operator file's "http": the hosts the plugin may reach over HTTP,
// and how much (docs/http.md).
//
//	"http": {
//	  "hosts": ["api.example.com", "*.example.org:8443", "http://10.0.0.5:8080"],
//	  "methods": ["GET", "POST"],        default: GET HEAD POST PUT PATCH DELETE OPTIONS
//	  "privateNetworks": ["10.0.0.0/8"], non-public addresses a granted name may resolve to
//	  "maxRequests": 16,                 a call's requests
//	  "maxRequestBytes": 1048576,        a request's body
//	  "maxResponseBytes": 4194304,       a response's body
//	  "timeout": "10s",                  a request, within the call's deadline
//	  "maxRedirects": 5,                 0: none followed
//	  "rate": 50, "burst": 100,          requests a second, the plugin's calls together
//	  "caFile": "/etc/cmdhost/ca.pem"    roots trusted instead of the system's
//	}
//
// Without it the plugin reaches no host.
var httpFields = []string{"hosts", "methods", "privateNetworks", "maxRequests", "maxRequestBytes", "maxResponseBytes",
	"timeout", "maxRedirects", "rate", "burst", "caFile"}

// maxHTTPHosts bounds the host patterns and networks of a grant.
const maxHTTPHosts = 256

func (p *opParser) http(raw json.RawMessage, at string) (*httpout.Grant, error) {
	fields, err := p.object(raw, at, httpFields)
	if err != nil {
		return nil, err
	}
	g := &httpout.Grant{}
	for _, f := range fields {
		where := join(at, f.key)
		switch f.key {
		case "hosts":
			g.Hosts, err = p.httpHosts(f.raw, where)
		case "methods":
			g.Methods, err = p.httpMethods(f.raw, where)
		case "privateNetworks":
			g.PrivateNetworks, err = p.httpNetworks(f.raw, where)
		case "maxRequests":
			g.MaxRequests, err = p.integer(f.raw, where, 1, 1<<16)
		case "maxRequestBytes":
			g.MaxRequestBytes, err = p.size(f.raw, where, 1, httpout.MaxBodyBytes)
		case "maxResponseBytes":
			g.MaxResponseBytes, err = p.size(f.raw, where, 1, httpout.MaxBodyBytes)
		case "timeout":
			g.Timeout, err = p.duration(f.raw, where, false)
		case "maxRedirects":
			g.MaxRedirects, err = p.integer(f.raw, where, 0, httpout.MaxRedirectsLimit)
			if g.MaxRedirects == 0 {
				g.MaxRedirects = httpout.NoRedirects
			}
		case "rate":
			var n int
			n, err = p.integer(f.raw, where, 1, math.MaxInt32)
			g.Rate = float64(n)
		case "burst":
			g.Burst, err = p.integer(f.raw, where, 1, math.MaxInt32)
		case "caFile":
			g.CAFile, err = p.caFile(f.raw, where)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(g.Hosts) == 0 {
		return nil, p.errf(join(at, "hosts"), `is missing or empty: name the hosts the plugin may reach, e.g. ["api.example.com", "http://10.0.0.5:8080"]`)
	}
	return g, nil
}

// strList reads a list of at most max strings.
func (p *opParser) strList(raw json.RawMessage, at, example string, max int) ([]string, error) {
	var list []json.RawMessage
	if kind(raw) != "a list" || json.Unmarshal(raw, &list) != nil {
		return nil, p.errf(at, "is %s: write a list, e.g. %s", kind(raw), example)
	}
	if len(list) > max {
		return nil, p.errf(at, "holds %d items, more than %d", len(list), max)
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, err := p.str(item, fmt.Sprintf("%s[%d]", at, i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (p *opParser) httpHosts(raw json.RawMessage, at string) ([]httpout.Host, error) {
	list, err := p.strList(raw, at, `["api.example.com", "http://10.0.0.5:8080"]`, maxHTTPHosts)
	if err != nil {
		return nil, err
	}
	out := make([]httpout.Host, 0, len(list))
	for i, s := range list {
		h, err := httpout.ParseHost(s)
		if err != nil {
			return nil, p.errf(fmt.Sprintf("%s[%d]", at, i), "%v", err)
		}
		out = append(out, h)
	}
	return out, nil
}

func (p *opParser) httpMethods(raw json.RawMessage, at string) ([]string, error) {
	list, err := p.strList(raw, at, `["GET", "POST"]`, 32)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, p.errf(at, "is empty: name the methods, or remove the field to allow the usual ones")
	}
	for i, m := range list {
		switch {
		case m != strings.ToUpper(m) || m == "" || strings.ContainsAny(m, " \t/:()<>@,;\\\"[]?={}"):
			return nil, p.errf(fmt.Sprintf("%s[%d]", at, i), "%q is not a method: write it in capitals, e.g. \"GET\"", m)
		case m == "CONNECT" || m == "TRACE":
			return nil, p.errf(fmt.Sprintf("%s[%d]", at, i), "%s is never allowed", m)
		}
	}
	return list, nil
}

func (p *opParser) httpNetworks(raw json.RawMessage, at string) ([]netip.Prefix, error) {
	list, err := p.strList(raw, at, `["10.0.0.0/8", "fd00::/8", "127.0.0.1"]`, maxHTTPHosts)
	if err != nil {
		return nil, err
	}
	out := make([]netip.Prefix, 0, len(list))
	for i, s := range list {
		pr, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil || a.Zone() != "" {
				return nil, p.errf(fmt.Sprintf("%s[%d]", at, i), "%q is not a network or an address (e.g. \"10.0.0.0/8\", \"127.0.0.1\")", s)
			}
			pr = netip.PrefixFrom(a, a.BitLen())
		}
		if a := pr.Addr(); a.Is4In6() {
			pr = netip.PrefixFrom(a.Unmap(), max(pr.Bits()-96, 0))
		}
		out = append(out, pr.Masked())
	}
	return out, nil
}

func (p *opParser) caFile(raw json.RawMessage, at string) (string, error) {
	s, err := p.str(raw, at)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(s) {
		return "", p.errf(at, "%q is not an absolute path: write the PEM file's full path, e.g. \"/etc/cmdhost/ca.pem\"", s)
	}
	if _, err := os.Stat(s); err != nil {
		return "", p.errf(at, "%q: %v", s, err)
	}
	return s, nil
}
