//go:build !wasip1

package sdk

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func setTestHTTP(t *testing.T, f TestHTTPFunc) {
	t.Helper()
	SetTestHTTP(f)
	t.Cleanup(func() { SetTestHTTP(nil) })
}

// A handler test answers its handler's requests with a real server,
// through TestHTTPVia.
func TestHTTPStandInVia(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Echo", r.Header.Get("X-In"))
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write(append([]byte(r.Method+" "), body...))
	}))
	defer srv.Close()
	setTestHTTP(t, TestHTTPVia(srv.Client()))
	resp, err := HTTP(context.Background(), &HTTPRequest{Method: "POST", URL: srv.URL + "/x", Header: Header{"X-In": {"v"}}, Body: []byte("b")})
	if err != nil || resp.Status != http.StatusTeapot || string(resp.Body) != "POST b" || resp.Header.Get("x-echo") != "v" || resp.URL != srv.URL+"/x" {
		t.Fatalf("%+v, %v", resp, err)
	}
}

// Errors are typed: the stand-in's own, one the test returns, and the
// rules any host applies, checked before the host is asked.
func TestHTTPErrors(t *testing.T) {
	SetTestHTTP(nil)
	if _, err := HTTP(context.Background(), &HTTPRequest{URL: "https://x.example/"}); !errors.Is(err, ErrHTTPUnavailable) {
		t.Fatalf("no stand-in: %v", err)
	}
	asked := 0
	setTestHTTP(t, func(ctx context.Context, r *HTTPRequest) (*HTTPResponse, error) {
		asked++
		switch r.URL {
		case "https://denied.example/":
			return nil, &HTTPError{Reason: ErrHTTPDenied.Reason, Message: "not granted"}
		case "https://broken.example/":
			return nil, errors.New("connection reset")
		}
		return nil, nil
	})
	_, err := HTTP(context.Background(), &HTTPRequest{URL: "https://denied.example/"})
	var herr *HTTPError
	if !errors.Is(err, ErrHTTPDenied) || !errors.As(err, &herr) || herr.Message != "not granted" || errors.Is(err, ErrHTTPTimeout) {
		t.Fatalf("denied: %v", err)
	}
	if _, err := HTTP(context.Background(), &HTTPRequest{URL: "https://broken.example/"}); !errors.Is(err, ErrHTTPFailed) {
		t.Fatalf("broken: %v", err)
	}
	if resp, err := HTTP(context.Background(), &HTTPRequest{URL: "https://empty.example/"}); err != nil || resp.Status != http.StatusNoContent {
		t.Fatalf("empty: %+v, %v", resp, err)
	}
	n := asked
	if _, err := HTTP(context.Background(), &HTTPRequest{URL: "https://x.example/", Header: Header{"Host": {"y"}}}); !errors.Is(err, ErrHTTPInvalid) {
		t.Fatalf("a Host header: %v", err)
	}
	if asked != n {
		t.Fatal("an invalid request reached the host")
	}
}

// A ctx deadline earlier than the request's timeout bounds it; a ctx
// already done sends nothing.
func TestHTTPContextDeadline(t *testing.T) {
	var got time.Duration
	setTestHTTP(t, func(ctx context.Context, r *HTTPRequest) (*HTTPResponse, error) {
		got = r.Timeout
		return &HTTPResponse{}, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := HTTP(ctx, &HTTPRequest{URL: "https://x.example/", Timeout: time.Hour}); err != nil || got <= 0 || got > time.Second {
		t.Fatalf("timeout %v, %v", got, err)
	}
	cancel()
	if _, err := HTTP(ctx, &HTTPRequest{URL: "https://x.example/"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("done ctx: %v", err)
	}
}
