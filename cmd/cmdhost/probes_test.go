package main

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestServeMetricsPortTaken: a --metrics address in use fails serve at
// once, before any plugin is loaded, with status 1 and an error naming
// the address and the flag.
func TestServeMetricsPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, errOut, code := runWithin(t, 60*time.Second, "serve", "--plugins", plugins, "--listen", freeAddr(t), "--metrics", l.Addr().String())
	if code != exitFailed || !strings.Contains(errOut, "address already in use") || !strings.Contains(errOut, l.Addr().String()+" (--metrics)") {
		t.Fatalf("status %d, stderr %q; want %d and an error naming %s (--metrics)", code, errOut, exitFailed, l.Addr())
	}
	if strings.Contains(errOut, "plugin loaded") {
		t.Errorf("plugins were loaded before the metrics port was found in use:\n%s", errOut)
	}
}
