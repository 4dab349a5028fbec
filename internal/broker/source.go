package broker

import (
	"net"
	"net/netip"
)

// sourceOf is the source a connection's bounds are kept per (pending.go,
// logins.go, throttle.go): its IPv4 address, or the /64 of its IPv6
// address (what one host or one site is given: the addresses within it
// cost an attacker nothing). An IPv4 address mapped into IPv6 is the IPv4
// address. An address that is not IP (none over TCP) is the zero prefix,
// one source for all of them.
func sourceOf(a net.Addr) netip.Prefix {
	var ip netip.Addr
	switch a := a.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	case nil:
	default:
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			ip = ap.Addr()
		}
	}
	ip = ip.Unmap()
	switch {
	case ip.Is4():
		return netip.PrefixFrom(ip, 32)
	case ip.Is6():
		p, _ := ip.WithZone("").Prefix(64)
		return p
	}
	return netip.Prefix{}
}
