package httpout

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cmdhost/cmdhost/abi"
)

// server is an httptest server on loopback and its host patterns.
type server struct {
	*httptest.Server
	port string
}

func newServer(t testing.TB, h http.HandlerFunc) *server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	return &server{Server: s, port: port}
}

// addr is the server's address pattern, http://127.0.0.1:PORT.
func (s *server) addr() string { return "http://127.0.0.1:" + s.port }

// name is the server's name pattern, http://localhost:PORT.
func (s *server) name() string { return "http://localhost:" + s.port }

func hosts(t *testing.T, patterns ...string) []Host {
	t.Helper()
	var out []Host
	for _, p := range patterns {
		h, err := ParseHost(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	return out
}

func newClient(t *testing.T, g Grant) *Client {
	t.Helper()
	c, err := New(g, Config{Plugin: "p", Stats: &Stats{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func wantFailure(t *testing.T, res *abi.HTTPResult, reason abi.HTTPReason, msg string) {
	t.Helper()
	if res.Failure != reason || !strings.Contains(res.Message, msg) {
		t.Fatalf("%v %q (status %d); want %v with %q", res.Failure, res.Message, res.Status, reason, msg)
	}
}

// TestRoundTrip: what the guest sends arrives as sent (method, headers,
// body, the Idempotency-Key when given), and the response comes back
// whole (status, headers, body, the URL that answered).
func TestRoundTrip(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Method", r.Method)
		w.Header().Set("X-Got", r.Header.Get("X-Token")+"|"+strings.Join(r.Header.Values("X-Many"), ",")+"|"+r.Header.Get("User-Agent"))
		w.Header().Set("X-Key", r.Header.Get("Idempotency-Key"))
		w.Header().Add("X-Two", "1")
		w.Header().Add("X-Two", "2")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(append([]byte("got "), body...))
	})
	c := newClient(t, Grant{Hosts: hosts(t, s.addr())})
	res := c.Do(ctxT(t), &abi.HTTPRequest{Method: "PUT", URL: s.URL + "/x?q=1",
		Header: abi.Header{"X-Token": {"t"}, "X-Many": {"a", "b"}}, Body: []byte("body")}, "key-1")
	if res.Failure != abi.HTTPNone || res.Status != 201 || string(res.Body) != "got body" || res.Header.Get("X-Method") != "PUT" ||
		res.Header.Get("X-Got") != "t|a,b|cmdhost" || res.Header.Get("X-Key") != "key-1" || strings.Join(res.Header.Values("X-Two"), ",") != "1,2" ||
		res.URL != s.URL+"/x?q=1" {
		t.Fatalf("%+v", res)
	}
	// The guest's own key wins; none without a key.
	res = c.Do(ctxT(t), &abi.HTTPRequest{URL: s.URL, Header: abi.Header{"Idempotency-Key": {"mine"}}}, "key-2")
	if res.Header.Get("X-Key") != "mine" {
		t.Fatalf("%+v", res)
	}
	if res = c.Do(ctxT(t), &abi.HTTPRequest{URL: s.URL}, ""); res.Header.Get("X-Key") != "" || res.Header.Get("X-Method") != "GET" {
		t.Fatalf("%+v", res)
	}
	snap := c.stats.Snapshot()
	if snap.Requests["2xx"] != 3 || snap.Count != 3 {
		t.Fatalf("stats %+v", snap)
	}
}

// TestDenied: a scheme, host, port or method the grant does not cover is
// refused before anything is sent; a name that resolves to loopback is
// refused at connect unless the grant names the address; a redirect to
// a host not granted, or to an address refused, is refused.
func TestDenied(t *testing.T) {
	hits := 0
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits++
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	other := newServer(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("other")) })
	named := newServer(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("named")) })
	// named is granted by its name alone, which resolves to loopback.
	c := newClient(t, Grant{Hosts: hosts(t, s.addr(), other.addr(), named.name()), Methods: []string{"GET"}})
	ctx := ctxT(t)
	for name, c2 := range map[string]struct {
		url, method, msg string
	}{
		"host":   {"http://127.0.0.2:" + s.port + "/", "", "is not granted"},
		"port":   {"http://127.0.0.1:1/", "", "is not granted"},
		"scheme": {"https://127.0.0.1:" + s.port + "/", "", "is not granted"},
		"method": {s.URL, "POST", "method POST is not granted"},
		// granted by name, but the name resolves to loopback: refused at
		// connect, on the address dialled
		"name to loopback": {named.name() + "/", "", "is loopback: the grant does not name it"},
		"redirect to a host not granted": {s.URL + "/?to=" + "http://127.0.0.3:" + s.port + "/", "",
			"a redirect to http://127.0.0.3:" + s.port + ": the grant does not cover"},
		"redirect to a refused address": {s.URL + "/?to=" + named.name() + "/", "", "is loopback"},
	} {
		res := c.Do(ctx, &abi.HTTPRequest{Method: c2.method, URL: c2.url}, "")
		if res.Failure != abi.HTTPDenied || !strings.Contains(res.Message, c2.msg) {
			t.Errorf("%s: %v %q; want denied with %q", name, res.Failure, res.Message, c2.msg)
		}
	}
	if hits != 2 { // the two redirects' first requests
		t.Fatalf("%d requests reached the server", hits)
	}
	// A redirect to a granted host is followed.
	res := c.Do(ctx, &abi.HTTPRequest{URL: s.URL + "/?to=" + other.URL + "/o"}, "")
	if res.Failure != abi.HTTPNone || string(res.Body) != "other" || res.URL != other.URL+"/o" {
		t.Fatalf("%+v", res)
	}
	// The grant naming the loopback network opens the name.
	c = newClient(t, Grant{Hosts: hosts(t, named.name()), PrivateNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
	if res := c.Do(ctx, &abi.HTTPRequest{URL: named.name() + "/"}, ""); res.Failure != abi.HTTPNone || string(res.Body) != "named" {
		t.Fatalf("%+v", res)
	}
	if n := c.stats.Snapshot().Requests; n["2xx"] != 1 {
		t.Fatalf("%v", n)
	}
}

func TestRedirectBounds(t *testing.T) {
	var s *server
	s = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if n > 0 {
			http.Redirect(w, r, s.URL+"/?n="+strconv.Itoa(n-1), http.StatusFound)
			return
		}
		_, _ = w.Write([]byte("end"))
	})
	c := newClient(t, Grant{Hosts: hosts(t, s.addr()), MaxRedirects: 2})
	if res := c.Do(ctxT(t), &abi.HTTPRequest{URL: s.URL + "/?n=2"}, ""); string(res.Body) != "end" {
		t.Fatalf("%+v", res)
	}
	wantFailure(t, c.Do(ctxT(t), &abi.HTTPRequest{URL: s.URL + "/?n=3"}, ""), abi.HTTPRedirects, "more than 2 redirects")
	c = newClient(t, Grant{Hosts: hosts(t, s.addr()), MaxRedirects: NoRedirects})
	if res := c.Do(ctxT(t), &abi.HTTPRequest{URL: s.URL + "/?n=1"}, ""); res.Status != http.StatusFound || res.Header.Get("Location") == "" {
		t.Fatalf("%+v", res)
	}
}

// TestSizeBounds: a request body over the grant's bound is not sent; a
// response over it is cut as it is read, announced or not.
func TestSizeBounds(t *testing.T) {
	sent := 0
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		sent++
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		chunk := []byte(strings.Repeat("x", 1000))
		for ; n > 0; n -= len(chunk) {
			if _, err := w.Write(chunk[:min(n, len(chunk))]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	c := newClient(t, Grant{Hosts: hosts(t, s.addr()), MaxRequestBytes: 10, MaxResponseBytes: 5000})
	ctx := ctxT(t)
	wantFailure(t, c.Do(ctx, &abi.HTTPRequest{Method: "POST", URL: s.URL, Body: make([]byte, 11)}, ""), abi.HTTPTooLarge, "over the grant's bound of 10")
	if sent != 0 {
		t.Fatal("a request over the bound was sent")
	}
	if res := c.Do(ctx, &abi.HTTPRequest{URL: s.URL + "/?n=5000"}, ""); res.Failure != abi.HTTPNone || len(res.Body) != 5000 {
		t.Fatalf("%v %q %d", res.Failure, res.Message, len(res.Body))
	}
	wantFailure(t, c.Do(ctx, &abi.HTTPRequest{URL: s.URL + "/?n=5001"}, ""), abi.HTTPTooLarge, "5001 bytes")
	wantFailure(t, c.Do(ctx, &abi.HTTPRequest{URL: s.URL + "/?n=1000000&chunked=1"}, ""), abi.HTTPTooLarge, "cut there")
	if n := c.stats.Snapshot().Requests; n["too_large"] != 3 || n["2xx"] != 1 {
		t.Fatalf("%v", n)
	}
}

// TestTimeouts: a server that never answers is cut at the request's
// timeout (typed), and at once when the call's context ends.
func TestTimeouts(t *testing.T) {
	arrived := make(chan struct{}, 4)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
	})
	c := newClient(t, Grant{Hosts: hosts(t, s.addr()), Timeout: time.Minute})
	start := time.Now()
	wantFailure(t, c.Do(ctxT(t), &abi.HTTPRequest{URL: s.URL, Timeout: 200 * time.Millisecond}, ""), abi.HTTPTimeout, "no response within 200ms")
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("cut after %v", d)
	}
	<-arrived
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan *abi.HTTPResult)
	go func() { done <- c.Do(ctx, &abi.HTTPRequest{URL: s.URL}, "") }()
	<-arrived
	cancel()
	select {
	case res := <-done:
		wantFailure(t, res, abi.HTTPTimeout, "the call's deadline passed")
	case <-time.After(10 * time.Second):
		t.Fatal("the request outlived its call")
	}
	// The grant's timeout bounds a longer request timeout.
	c = newClient(t, Grant{Hosts: hosts(t, s.addr()), Timeout: 150 * time.Millisecond})
	wantFailure(t, c.Do(ctxT(t), &abi.HTTPRequest{URL: s.URL, Timeout: time.Hour}, ""), abi.HTTPTimeout, "no response within 150ms")
}

func TestRate(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {})
	c := newClient(t, Grant{Hosts: hosts(t, s.addr()), Rate: 0.001, Burst: 2})
	for i := range 2 {
		if res := c.Do(ctxT(t), &abi.HTTPRequest{URL: s.URL}, ""); res.Failure != abi.HTTPNone {
			t.Fatalf("%d: %+v", i, res)
		}
	}
	// A request refused by its grant takes no token.
	wantFailure(t, c.Do(ctxT(t), &abi.HTTPRequest{URL: "http://127.0.0.9:1/"}, ""), abi.HTTPDenied, "")
	wantFailure(t, c.Do(ctxT(t), &abi.HTTPRequest{URL: s.URL}, ""), abi.HTTPLimit, "over the plugin's rate")
}

// TestConnectFailures: a name that does not resolve, a port where nothing
// listens, and a TLS server whose certificate the roots do not verify
// each fail with their reason; the grant's CA file makes that server
// trusted.
func TestConnectFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("tls ok")) }))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	tlsAddr := strings.TrimPrefix(tlsSrv.URL, "https://")
	c := newClient(t, Grant{Hosts: hosts(t, "http://nothing.invalid", "http://"+closed, tlsAddr)})
	ctx := ctxT(t)
	wantFailure(t, c.Do(ctx, &abi.HTTPRequest{URL: "http://nothing.invalid/"}, ""), abi.HTTPDNS, "nothing.invalid does not resolve")
	wantFailure(t, c.Do(ctx, &abi.HTTPRequest{URL: "http://" + closed + "/"}, ""), abi.HTTPConnect, "refused")
	wantFailure(t, c.Do(ctx, &abi.HTTPRequest{URL: tlsSrv.URL}, ""), abi.HTTPTLS, "certificate")

	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	c = newClient(t, Grant{Hosts: hosts(t, tlsAddr), CAFile: ca})
	if res := c.Do(ctx, &abi.HTTPRequest{URL: tlsSrv.URL}, ""); res.Failure != abi.HTTPNone || string(res.Body) != "tls ok" {
		t.Fatalf("%+v", res)
	}
	if _, err := New(Grant{Hosts: hosts(t, tlsAddr), CAFile: filepath.Join(t.TempDir(), "none.pem")}, Config{}); err == nil {
		t.Fatal("a CA file that does not exist was taken")
	}
}

func TestInvalidURL(t *testing.T) {
	c := newClient(t, Grant{Hosts: hosts(t, "*")})
	for _, u := range []string{"ftp://x.example/", "https://user:pw@x.example/", "x.example/path", "https://%zz/"} {
		if res := c.Do(ctxT(t), &abi.HTTPRequest{URL: u}, ""); res.Failure != abi.HTTPInvalid {
			t.Errorf("%s: %v %q", u, res.Failure, res.Message)
		}
	}
}

// TestSpan: a traced call's request is a client span with the host and
// the status, without the path or query.
func TestSpan(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, parent := tp.Tracer("test").Start(ctxT(t), "call")
	c := newClient(t, Grant{Hosts: hosts(t, s.addr())})
	c.Do(ctx, &abi.HTTPRequest{URL: s.URL + "/secret-path?key=k"}, "")
	c.Do(ctx, &abi.HTTPRequest{Method: "PUT", URL: "http://127.0.0.7:1/"}, "") // denied: a span with its reason
	parent.End()
	var names []string
	for _, sp := range rec.Ended() {
		names = append(names, sp.Name())
		attrs := map[string]string{}
		for _, a := range sp.Attributes() {
			attrs[string(a.Key)] = a.Value.String()
		}
		switch sp.Name() {
		case "cmdhost.http GET":
			if attrs["server.address"] != "127.0.0.1" || attrs["server.port"] != s.port || attrs["http.response.status_code"] != "202" {
				t.Fatalf("%v", attrs)
			}
			for _, v := range attrs {
				if strings.Contains(v, "secret") {
					t.Fatalf("the span holds the path: %v", attrs)
				}
			}
		case "cmdhost.http PUT":
			if attrs["server.address"] != "127.0.0.7" || attrs["error.type"] != "denied" {
				t.Fatalf("%v", attrs)
			}
		}
	}
	if strings.Join(names, ",") != "cmdhost.http GET,cmdhost.http PUT,call" {
		t.Fatalf("spans %v", names)
	}
}

func TestIdempotencyKey(t *testing.T) {
	ctx := WithRequestKey(context.Background(), []byte{1, 2}, "clients/a/rsp")
	k0, ok0 := IdempotencyKey(ctx, []byte{1, 2}, 0)
	again, _ := IdempotencyKey(WithRequestKey(context.Background(), []byte{1, 2}, "clients/a/rsp"), []byte{1, 2}, 0)
	k1, _ := IdempotencyKey(ctx, []byte{1, 2}, 1)
	other, _ := IdempotencyKey(WithRequestKey(context.Background(), []byte{1, 2}, "clients/b/rsp"), []byte{1, 2}, 0)
	if !ok0 || k0 != again || k0 == k1 || k0 == other || len(k0) != 36 || k0[14] != '8' {
		t.Fatalf("%s %s %s %s", k0, again, k1, other)
	}
	if _, ok := IdempotencyKey(ctx, []byte{9}, 0); ok {
		t.Fatal("a key for another request (a nested call's)")
	}
	if _, ok := IdempotencyKey(context.Background(), []byte{1, 2}, 0); ok {
		t.Fatal("a key without a request key")
	}
	if err := (&abi.HTTPError{Reason: abi.HTTPDenied, Message: "x"}); !errors.Is(err, &abi.HTTPError{Reason: abi.HTTPDenied}) {
		t.Fatal("errors.Is")
	}
}
