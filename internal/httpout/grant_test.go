package httpout

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestParseHost(t *testing.T) {
	for in, want := range map[string]string{
		"api.example.com":          "https://api.example.com:443",
		"API.Example.com.":         "https://api.example.com:443",
		"*.example.org:8443":       "https://*.example.org:8443",
		"http://127.0.0.1:8080":    "http://127.0.0.1:8080",
		"HTTP://host":              "http://host:80",
		"https://[2001:db8::1]:*":  "https://[2001:db8::1]:*",
		"[::ffff:10.0.0.1]:9000":   "https://10.0.0.1:9000",
		"*":                        "https://*:443",
		"http://*:*":               "http://*:*",
		"xn--bcher-kva.example:81": "https://xn--bcher-kva.example:81",
	} {
		h, err := ParseHost(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := h.String(); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
		if again, err := ParseHost(h.String()); err != nil || again != h {
			t.Errorf("%q: its String %s parses as %+v, %v", in, h, again, err)
		}
	}
	for _, in := range []string{"", "ftp://x", "x/path", "x?q", "user@x", "x:0", "x:65536", "x:", "::1", "[::1", "[::1]x",
		"a.*.example", "*example.org", "bücher.example", "a b", "-", "x..y", "[10.0.0.1]", "[fe80::1%eth0]"} {
		if h, err := ParseHost(in); err == nil {
			t.Errorf("%q parsed: %+v", in, h)
		}
	}
}

func TestHostMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, url string
		want         bool
	}{
		{"api.example.com", "https://api.example.com/x", true},
		{"api.example.com", "https://API.example.com./x", true},
		{"api.example.com", "https://api.example.com:443/", true},
		{"api.example.com", "https://api.example.com:444/", false},
		{"api.example.com", "http://api.example.com/", false}, // https by default
		{"api.example.com", "https://evil.com/?api.example.com", false},
		{"api.example.com", "https://api.example.com.evil.com/", false},
		{"*.example.org:8443", "https://a.b.example.org:8443/", true},
		{"*.example.org:8443", "https://example.org:8443/", false},
		{"*.example.org:8443", "https://evilexample.org:8443/", false},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/", true},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8081/", false},
		{"http://127.0.0.1:8080", "http://localhost:8080/", false}, // a name is not the address
		{"http://127.0.0.1:8080", "http://[::ffff:127.0.0.1]:8080/", true},
		{"[2001:db8::1]:*", "https://[2001:db8::1]:1/", true},
		{"*", "https://anything.example/", true},
		{"*", "https://10.0.0.1/", true}, // the address is refused at connect unless named
		{"*", "http://anything.example/", false},
	} {
		h, err := ParseHost(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(c.url)
		tg, err := targetOf(u)
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		if got := h.matches(tg); got != c.want {
			t.Errorf("%s ~ %s: %v, want %v", c.pattern, c.url, got, c.want)
		}
	}
	for _, bad := range []string{"ftp://x/", "https://user:pw@x/", "mailto:a@b", "/relative", "https://[fe80::1%25eth0]/"} {
		u, _ := url.Parse(bad)
		if _, err := targetOf(u); err == nil {
			t.Errorf("%s: a target", bad)
		}
	}
}

func TestAddrClass(t *testing.T) {
	for addr, want := range map[string]string{
		"8.8.8.8":                "",
		"2606:4700:4700::1111":   "",
		"127.0.0.1":              "loopback",
		"127.1.2.3":              "loopback",
		"::1":                    "loopback",
		"::ffff:127.0.0.1":       "loopback",
		"10.1.2.3":               "private",
		"172.16.0.1":             "private",
		"192.168.1.1":            "private",
		"fd00:ec2::254":          "private", // AWS's IPv6 metadata endpoint
		"::ffff:10.0.0.1":        "private",
		"169.254.169.254":        "link-local", // the clouds' metadata endpoint
		"fe80::1":                "link-local",
		"224.0.0.1":              "multicast",
		"ff02::1":                "multicast",
		"0.0.0.0":                "unspecified",
		"::":                     "unspecified",
		"100.100.100.200":        "reserved", // shared address space (a cloud's metadata endpoint)
		"192.0.0.192":            "reserved",
		"0.1.2.3":                "reserved",
		"255.255.255.255":        "broadcast",
		"64:ff9b::7f00:1":        "loopback", // NAT64 of 127.0.0.1
		"64:ff9b::808:808":       "",         // NAT64 of 8.8.8.8
		"2002:a00:1::":           "private",  // 6to4 of 10.0.0.1
		"::7f00:1":               "reserved", // IPv4-compatible
		"2001:db8::1":            "reserved",
		"2001:0:4136:e378::1":    "reserved", // Teredo
		"fec0::1":                "reserved",
		"::ffff:169.254.169.254": "link-local",
	} {
		if got := addrClass(netip.MustParseAddr(addr)); got != want {
			t.Errorf("%s: %q, want %q", addr, got, want)
		}
	}
}

func TestExplicit(t *testing.T) {
	g := Grant{Hosts: []Host{must(ParseHost("http://127.0.0.1:8080")), must(ParseHost("[::1]:*")), must(ParseHost("api.example.com"))},
		PrivateNetworks: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}}
	for addr, want := range map[string]bool{
		"127.0.0.1:8080":        true,
		"127.0.0.1:8081":        false,
		"[::ffff:127.0.0.1]:80": false,
		"[::1]:9":               true,
		"10.1.2.3:443":          true,
		"10.2.0.1:443":          false,
	} {
		ap := netip.MustParseAddrPort(addr)
		if got := g.explicit(ap.Addr(), int(ap.Port())); got != want {
			t.Errorf("%s: %v, want %v", addr, got, want)
		}
	}
	if !strings.Contains(must(ParseHost("api.example.com")).String(), "443") {
		t.Fatal("no default port")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
