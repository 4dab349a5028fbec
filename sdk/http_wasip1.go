//go:build wasip1

package sdk

import (
	"fmt"
	"unsafe"

	"github.com/cmdhost/cmdhost/abi"
)

// httpBuf is reused across requests (the host copies a request at once)
// unless a large body grew it; each result gets a fresh buffer, decoded
// in place, so a handler may keep anything of it.
var httpBuf []byte

// hostHTTP hands r to the host, which blocks until the response is read
// or the request failed, then fetches the result.
func hostHTTP(r *abi.HTTPRequest) (*abi.HTTPResult, error) {
	httpBuf = abi.AppendHTTPRequest(httpBuf[:0], r)
	n := httpRequestImport(ptr(httpBuf), int32(len(httpBuf)))
	if cap(httpBuf) > 64<<10 {
		httpBuf = nil
	}
	if n < 0 {
		return nil, fmt.Errorf("http request refused by the host: result %d", n)
	}
	out := make([]byte, n)
	if rr := httpResultRead(ptr(out), n); rr != n {
		return nil, fmt.Errorf("reading the http result: result %d", rr)
	}
	return abi.DecodeHTTPResultShared(out)
}

//go:wasmimport cmdhost http_request
func httpRequestImport(p unsafe.Pointer, n int32) int32

//go:wasmimport cmdhost http_result_read
func httpResultRead(p unsafe.Pointer, n int32) int32
