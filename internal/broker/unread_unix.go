//go:build unix

package broker

import (
	"crypto/tls"
	"net"
	"syscall"
)

// hasUnread reports whether bytes c's peer sent wait in its socket, not
// read yet: a look (recv with MSG_PEEK, not waiting) that takes nothing.
func hasUnread(c net.Conn) bool {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var b [1]byte
	n := 0
	_ = rc.Control(func(fd uintptr) {
		n, _, _ = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	})
	return n > 0
}
