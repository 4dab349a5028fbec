package abi_test

import (
	"bytes"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

func fullHTTPRequest() *abi.HTTPRequest {
	return &abi.HTTPRequest{Method: "POST", URL: "https://api.example.com/v1/jobs?x=1",
		Header: abi.Header{"Accept": {"application/json"}, "X-Many": {"1", "2"}},
		Body:   []byte(`{"a":1}`), Timeout: 1500 * time.Millisecond}
}

func TestHTTPRequestRoundTrip(t *testing.T) {
	for name, r := range map[string]*abi.HTTPRequest{
		"full": fullHTTPRequest(),
		"GET":  {URL: "http://10.0.0.1:8080/"},
	} {
		got, err := abi.DecodeHTTPRequest(abi.AppendHTTPRequest(nil, r))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("%s: got %+v, want %+v", name, got, r)
		}
	}
}

// TestHTTPDocumentedEncoding is ABI.md section 19's example, byte for
// byte: a name's values are entries of their own, in order.
func TestHTTPDocumentedEncoding(t *testing.T) {
	want := cat(
		recStr(1, "POST"),
		recStr(2, "https://api.example.com/jobs"),
		recEntry(3, "X-Tag", "a"),
		recEntry(3, "X-Tag", "b"),
		recStr(4, "hi"),
		recI64(5, 2000),
	)
	r := &abi.HTTPRequest{Method: "POST", URL: "https://api.example.com/jobs", Header: abi.Header{"X-Tag": {"a", "b"}},
		Body: []byte("hi"), Timeout: 2 * time.Second}
	if got := abi.AppendHTTPRequest(nil, r); !bytes.Equal(got, want) {
		t.Fatalf("encoding\n% x\nwant\n% x", got, want)
	}
	res := cat(recU32(3, 201), recEntry(4, "Location", "/jobs/7"), recStr(5, "ok"), recStr(6, "https://api.example.com/jobs"))
	got, err := abi.DecodeHTTPResult(res)
	if err != nil || got.Status != 201 || got.Header.Get("location") != "/jobs/7" || string(got.Body) != "ok" || got.Err() != nil {
		t.Fatalf("%+v, %v", got, err)
	}
	fail := cat(recU8(1, 2), recStr(2, "host evil.example is not granted"))
	got, err = abi.DecodeHTTPResult(fail)
	if err != nil || !errors.Is(got.Err(), &abi.HTTPError{Reason: abi.HTTPDenied}) || errors.Is(got.Err(), &abi.HTTPError{Reason: abi.HTTPDNS}) {
		t.Fatalf("%+v, %v", got, err)
	}
	if s := got.Err().Error(); s != "http: denied: host evil.example is not granted" {
		t.Fatalf("error %q", s)
	}
}

func TestHTTPHeaderNamesCanonical(t *testing.T) {
	for _, name := range []string{"content-type", "X-FOO-bar", "x", "-a-", "Idempotency-Key", "a b", "ü", "WWW-Authenticate", ""} {
		if got, want := abi.CanonicalHeaderKey(name), http.CanonicalHeaderKey(name); got != want {
			t.Errorf("%q: %q, net/http %q", name, got, want)
		}
	}
	h := abi.Header{}
	h.Add("x-a", "1")
	h.Add("X-A", "2")
	if got := h.Values("X-a"); strings.Join(got, ",") != "1,2" || http.Header(h).Get("x-a") != "1" {
		t.Fatalf("%v", h)
	}
	// Names decode canonical, their values merged in order.
	got, err := abi.DecodeHTTPRequest(cat(recStr(2, "https://x.example/"), recEntry(3, "x-a", "1"), recEntry(3, "X-A", "2")))
	if err != nil || strings.Join(got.Header["X-A"], ",") != "1,2" {
		t.Fatalf("%+v, %v", got, err)
	}
}

func TestHTTPRequestRefused(t *testing.T) {
	long := strings.Repeat("a", abi.MaxHTTPURL)
	many := abi.Header{}
	for i := 0; i <= abi.MaxHTTPHeaders; i++ {
		many.Add("X-N", "v")
	}
	for name, r := range map[string]*abi.HTTPRequest{
		"no URL":            {},
		"long URL":          {URL: "https://x.example/" + long},
		"space in URL":      {URL: "https://x.example/a b"},
		"control in URL":    {URL: "https://x.example/\n"},
		"method not token":  {Method: "GE T", URL: "https://x.example/"},
		"CONNECT":           {Method: "CONNECT", URL: "https://x.example/"},
		"TRACE":             {Method: "TRACE", URL: "https://x.example/"},
		"Host":              {URL: "https://x.example/", Header: abi.Header{"Host": {"y.example"}}},
		"content-length":    {URL: "https://x.example/", Header: abi.Header{"content-length": {"3"}}},
		"Proxy-":            {URL: "https://x.example/", Header: abi.Header{"Proxy-Authorization": {"x"}}},
		"name not token":    {URL: "https://x.example/", Header: abi.Header{"X A": {"1"}}},
		"CRLF in value":     {URL: "https://x.example/", Header: abi.Header{"X-A": {"1\r\nX-B: 2"}}},
		"too many values":   {URL: "https://x.example/", Header: many},
		"too many bytes":    {URL: "https://x.example/", Header: abi.Header{"X-A": {strings.Repeat("v", abi.MaxHTTPHeaderBytes)}}},
		"negative timeout":  {URL: "https://x.example/", Timeout: -time.Second},
		"upgrade (hop)":     {URL: "https://x.example/", Header: abi.Header{"Upgrade": {"websocket"}}},
		"transfer-encoding": {URL: "https://x.example/", Header: abi.Header{"Transfer-Encoding": {"chunked"}}},
	} {
		if err := r.Validate(); !errors.Is(err, abi.ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := abi.DecodeHTTPRequest(abi.AppendHTTPRequest(nil, r)); err == nil && r.Timeout >= 0 { // a negative timeout is not encoded
			t.Errorf("%s: decoded", name)
		}
	}
	if err := (&abi.HTTPRequest{URL: "https://x.example/", Header: abi.Header{"X-Tab": {"a\tb"}, "Idempotency-Key": {"k"}}}).Validate(); err != nil {
		t.Errorf("a tab and the guest's own Idempotency-Key: %v", err)
	}
}

func TestHTTPResultShared(t *testing.T) {
	enc := abi.AppendHTTPResult(nil, &abi.HTTPResult{HTTPResponse: abi.HTTPResponse{Status: 200, Body: []byte("body"),
		Header: abi.Header{"A": {"1"}}, URL: "https://x.example/"}})
	shared, err := abi.DecodeHTTPResultShared(enc)
	if err != nil {
		t.Fatal(err)
	}
	copied, _ := abi.DecodeHTTPResult(enc)
	mutate(enc)
	if string(copied.Body) != "body" || string(shared.Body) == "body" {
		t.Fatalf("copied %q, shared %q", copied.Body, shared.Body)
	}
}

func normHTTPRequest(r *abi.HTTPRequest) *abi.HTTPRequest {
	n := *r
	if len(n.Body) == 0 {
		n.Body = nil
	}
	if len(n.Header) == 0 {
		n.Header = nil
	}
	return &n
}

func FuzzDecodeHTTPRequest(f *testing.F) {
	seeds(f,
		abi.AppendHTTPRequest(nil, fullHTTPRequest()),
		cat(recStr(2, "https://x.example/"), recEntry(3, "x-a", "1"), recEntry(3, "X-A", "2")),
		cat(recStr(2, "https://x.example/"), recEntry(3, "Host", "y")),
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		r, err := abi.DecodeHTTPRequest(in)
		if err != nil {
			if r != nil || !errors.Is(err, abi.ErrMalformed) {
				t.Fatalf("%v, %v", r, err)
			}
			return
		}
		enc := abi.AppendHTTPRequest(nil, r)
		mutate(in)
		if after := abi.AppendHTTPRequest(nil, r); !bytes.Equal(after, enc) {
			t.Fatalf("decoded request aliases its input")
		}
		r2, err := abi.DecodeHTTPRequest(enc)
		if err != nil {
			t.Fatalf("re-encoded request does not decode: %v", err)
		}
		if a, b := normHTTPRequest(r), normHTTPRequest(r2); !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip changed the request\n%+v\n%+v", a, b)
		}
		if enc2 := abi.AppendHTTPRequest(nil, r2); !bytes.Equal(enc2, enc) {
			t.Fatalf("encoding is not canonical")
		}
	})
}

func FuzzDecodeHTTPResult(f *testing.F) {
	seeds(f,
		abi.AppendHTTPResult(nil, &abi.HTTPResult{HTTPResponse: abi.HTTPResponse{Status: 200, Body: []byte("b"), Header: abi.Header{"A": {"1", "2"}}}}),
		abi.AppendHTTPResult(nil, &abi.HTTPResult{Failure: abi.HTTPTimeout, Message: "cut"}),
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := abi.DecodeHTTPResult(data)
		if err != nil {
			if r != nil || !errors.Is(err, abi.ErrMalformed) {
				t.Fatalf("%v, %v", r, err)
			}
			return
		}
		if _, err := abi.DecodeHTTPResult(abi.AppendHTTPResult(nil, r)); err != nil {
			t.Fatalf("re-encoded result does not decode: %v", err)
		}
	})
}
