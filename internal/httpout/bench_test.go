package httpout

import (
	"io"
	"net/http"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
)

// BenchmarkRequest is the cost of a request through a plugin's Client
// beyond the network: Plain sends the same request to the same loopback
// server with a bare net/http client; Client adds the grant's checks,
// the address check at connect (once per connection: they are kept),
// the rate, the bounded read and the counts.
//
//	go test ./internal/httpout -run '^$' -bench Request -benchmem
func BenchmarkRequest(b *testing.B) {
	s := newServer(b, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })
	b.Run("Plain", func(b *testing.B) {
		c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		for b.Loop() {
			resp, err := c.Get(s.URL)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
	})
	b.Run("Client", func(b *testing.B) {
		h, _ := ParseHost(s.addr())
		c, err := New(Grant{Hosts: []Host{h}, Rate: 1e9, Burst: 1 << 30}, Config{Stats: &Stats{}})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		req := &abi.HTTPRequest{URL: s.URL}
		for b.Loop() {
			if res := c.Do(b.Context(), req, "k"); res.Failure != abi.HTTPNone {
				b.Fatal(res.Message)
			}
		}
	})
}
