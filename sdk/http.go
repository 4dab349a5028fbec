package sdk

import (
	"context"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

// Outbound HTTP (abi/ABI.md section 19, docs/http.md): a handler calls an
// HTTP API on a host its operator file grants.
//
//	resp, err := sdk.HTTP(ctx, &sdk.HTTPRequest{
//		Method: "POST",
//		URL:    "https://api.example.com/v1/jobs",
//		Header: sdk.Header{"Content-Type": {"application/json"}},
//		Body:   []byte(`{"job":7}`),
//	})
//	if errors.Is(err, sdk.ErrHTTPDenied) {
//		// the operator file does not grant the host
//	}
//
// A response is a response whatever its status (a 404 or a 500 is not an
// error); err is an *HTTPError, with a Reason, when there is none. While
// the request runs the guest is blocked in the host; the call's deadline
// (or a ctx deadline earlier than it) cuts it.
//
// HTTP is not transactional: a request a call made has happened even if
// the call then fails or runs again (at least once). For a command that is
// not idempotent the host adds an Idempotency-Key header (unless the
// request sets one), the same at every run of the same request, so that
// a server that honours the header does it once.

// HTTPRequest is a request to send: Method ("" is GET), an absolute URL,
// Header, Body, and Timeout (0: the grant's; the call's deadline always
// bounds it).
type HTTPRequest = abi.HTTPRequest

// HTTPResponse is a server's answer: Status, Header, Body and the URL
// that answered (after redirects).
type HTTPResponse = abi.HTTPResponse

// Header is an HTTP header, in net/http's shape: http.Header(h) converts
// it.
type Header = abi.Header

// HTTPError is a request that got no response: its Reason and why.
type HTTPError = abi.HTTPError

// Errors of HTTP, one per reason: errors.Is(err, ErrHTTPDenied) matches
// every denial, whatever its message.
var (
	ErrHTTPInvalid     = &abi.HTTPError{Reason: abi.HTTPInvalid}
	ErrHTTPDenied      = &abi.HTTPError{Reason: abi.HTTPDenied}
	ErrHTTPDNS         = &abi.HTTPError{Reason: abi.HTTPDNS}
	ErrHTTPConnect     = &abi.HTTPError{Reason: abi.HTTPConnect}
	ErrHTTPTLS         = &abi.HTTPError{Reason: abi.HTTPTLS}
	ErrHTTPTimeout     = &abi.HTTPError{Reason: abi.HTTPTimeout}
	ErrHTTPTooLarge    = &abi.HTTPError{Reason: abi.HTTPTooLarge}
	ErrHTTPLimit       = &abi.HTTPError{Reason: abi.HTTPLimit}
	ErrHTTPRedirects   = &abi.HTTPError{Reason: abi.HTTPRedirects}
	ErrHTTPUnavailable = &abi.HTTPError{Reason: abi.HTTPUnavailable}
	ErrHTTPFailed      = &abi.HTTPError{Reason: abi.HTTPFailed}
)

// HTTP sends r and returns the response. r is not modified.
func HTTP(ctx context.Context, r *HTTPRequest) (*HTTPResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	req := *r
	if _, root := ctx.(*callContext); !root { // the host knows the handler's own deadline
		if d, ok := ctx.Deadline(); ok {
			left := time.Until(d)
			if left <= 0 {
				return nil, context.DeadlineExceeded
			}
			if req.Timeout == 0 || left < req.Timeout {
				req.Timeout = left
			}
		}
	}
	if err := req.Validate(); err != nil {
		return nil, &abi.HTTPError{Reason: abi.HTTPInvalid, Message: err.Error()}
	}
	res, err := hostHTTP(&req)
	if err != nil {
		return nil, err
	}
	if err := res.Err(); err != nil {
		return nil, err
	}
	return &res.HTTPResponse, nil
}
