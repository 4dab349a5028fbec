package httpout

import "net/netip"

// Which addresses a request may connect to: a public address, or one the
// grant names (Grant.explicit). Every other kind is refused at connect
// time, on the address actually dialled, whatever name led there.

// reserved4 are IPv4 ranges that are neither public nor covered by
// netip's classes: "this network", shared address space (carrier NAT,
// where some clouds keep their metadata service), IETF protocol
// assignments (another metadata address), documentation, benchmarking,
// reserved and broadcast.
var reserved4 = prefixes("0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
	"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4")

// reserved6 are IPv6 ranges that are neither public nor covered by
// netip's classes: IPv4-compatible addresses (deprecated), discard,
// Teredo (a tunnel to an IPv4 address), documentation, site-local
// (deprecated, private in practice).
var reserved6 = prefixes("::/96", "100::/64", "2001::/32", "2001:db8::/32", "fec0::/10")

// NAT64 and 6to4 addresses carry an IPv4 address, which decides.
var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

func prefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, p := range s {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

// addrClass returns "" for a public address, else its kind: loopback,
// private, link-local, multicast, unspecified or reserved. An
// IPv4-mapped IPv6 address is its IPv4 address.
func addrClass(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "invalid"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case a.IsPrivate():
		return "private"
	}
	if a.Is4() {
		if a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
			return "broadcast"
		}
		for _, p := range reserved4 {
			if p.Contains(a) {
				return "reserved"
			}
		}
	} else {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			if c := addrClass(netip.AddrFrom4([4]byte(b[12:16]))); c != "" {
				return c
			}
		case sixTo4.Contains(a):
			if c := addrClass(netip.AddrFrom4([4]byte(b[2:6]))); c != "" {
				return c
			}
		}
		for _, p := range reserved6 {
			if p.Contains(a) {
				return "reserved"
			}
		}
	}
	if !a.IsGlobalUnicast() {
		return "reserved"
	}
	return ""
}
