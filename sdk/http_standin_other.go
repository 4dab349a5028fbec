//go:build !wasip1

package sdk

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/cmdhost/cmdhost/abi"
)

// The stand-in for outbound HTTP in native builds: handler tests answer
// the requests their handler sends with SetTestHTTP, by hand or through a
// real client (TestHTTPVia, e.g. an httptest server's).

// TestHTTPFunc answers one request in native builds. An error becomes
// HTTP's error: an *HTTPError as it is (to test a denial, say), any other
// error an ErrHTTPFailed with its message. ctx ends at the request's
// Timeout.
type TestHTTPFunc func(ctx context.Context, r *HTTPRequest) (*HTTPResponse, error)

var testHTTP struct {
	mu sync.Mutex
	f  TestHTTPFunc
}

// SetTestHTTP sets the function that answers HTTP in native builds; nil
// (the default) makes every request fail with ErrHTTPUnavailable. No
// grant is checked: that is the host's, with the operator file.
func SetTestHTTP(f TestHTTPFunc) {
	testHTTP.mu.Lock()
	defer testHTTP.mu.Unlock()
	testHTTP.f = f
}

// TestHTTPVia returns a TestHTTPFunc that sends each request with c (nil:
// http.DefaultClient), e.g. an httptest.Server's Client().
func TestHTTPVia(c *http.Client) TestHTTPFunc {
	if c == nil {
		c = http.DefaultClient
	}
	return func(ctx context.Context, r *HTTPRequest) (*HTTPResponse, error) {
		method := r.Method
		if method == "" {
			method = http.MethodGet
		}
		req, err := http.NewRequestWithContext(ctx, method, r.URL, bytes.NewReader(r.Body))
		if err != nil {
			return nil, &HTTPError{Reason: abi.HTTPInvalid, Message: err.Error()}
		}
		req.Header = http.Header(r.Header).Clone()
		resp, err := c.Do(req)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return nil, &HTTPError{Reason: abi.HTTPTimeout, Message: err.Error()}
			}
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		return &HTTPResponse{Status: resp.StatusCode, Header: Header(resp.Header), Body: body, URL: resp.Request.URL.String()}, nil
	}
}

func hostHTTP(r *abi.HTTPRequest) (*abi.HTTPResult, error) {
	testHTTP.mu.Lock()
	f := testHTTP.f
	testHTTP.mu.Unlock()
	if f == nil {
		return &abi.HTTPResult{Failure: abi.HTTPUnavailable,
			Message: "outbound HTTP is not available (native build: see sdk.SetTestHTTP)"}, nil
	}
	ctx := context.Background()
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	resp, err := f(ctx, r)
	var herr *HTTPError
	switch {
	case errors.As(err, &herr):
		return &abi.HTTPResult{Failure: herr.Reason, Message: herr.Message}, nil
	case err != nil:
		return &abi.HTTPResult{Failure: abi.HTTPFailed, Message: err.Error()}, nil
	case resp == nil:
		return &abi.HTTPResult{HTTPResponse: abi.HTTPResponse{Status: http.StatusNoContent, URL: r.URL}}, nil
	}
	res := &abi.HTTPResult{HTTPResponse: *resp}
	if res.Status == 0 {
		res.Status = http.StatusOK
	}
	return res, nil
}
