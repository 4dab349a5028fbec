package nested_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/httpout"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// httpKitLanguages are the kit's languages whose SDK sends HTTP requests
// (kit-http).
var httpKitLanguages = []string{"go", "rust", "c", "as"}

// kitServer is the test's HTTP server, on loopback: /echo answers 201
// with the method and body and, in X-Kit-Reply, the request's X-Kit and
// Content-Type; /key answers the request's Idempotency-Key in X-Kit-Reply
// ("-" when none); /big answers 2,000 bytes; /redirect?to=URL redirects;
// /hang answers nothing until the request is cut, which it reports on
// cut.
type kitServer struct {
	*httptest.Server
	port    string
	arrived chan struct{}
	cut     chan struct{}
}

func newKitServer(t *testing.T) *kitServer {
	s := &kitServer{arrived: make(chan struct{}, 16), cut: make(chan struct{}, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("X-Kit-Reply", r.Header.Get("X-Kit")+"|"+r.Header.Get("Content-Type"))
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(append([]byte(r.Method+" "), body...))
		case "/key":
			k := r.Header.Get("Idempotency-Key")
			if k == "" {
				k = "-"
			}
			w.Header().Set("X-Kit-Reply", k)
			_, _ = w.Write([]byte("k"))
		case "/big":
			_, _ = w.Write([]byte(strings.Repeat("b", 2000)))
		case "/redirect":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case "/hang":
			s.arrived <- struct{}{}
			<-r.Context().Done()
			s.cut <- struct{}{}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	_, s.port, _ = net.SplitHostPort(s.Listener.Addr().String())
	return s
}

func mustHosts(t *testing.T, patterns ...string) []httpout.Host {
	t.Helper()
	var out []httpout.Host
	for _, p := range patterns {
		h, err := httpout.ParseHost(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	return out
}

// TestGuestKitHTTP runs kit-http in each language against servers the
// test starts: a granted request goes and comes back whole; a host not
// granted, a name that resolves to loopback without a grant naming the
// address, a redirect to either, and a plugin granted no HTTP are denied;
// a body over the grant's bounds is too large; a server that never
// answers is cut at the call's deadline (the call ends, the request is
// cancelled) or at the grant's timeout (typed); the plugin's rate refuses
// past its burst; a non-idempotent request's Idempotency-Key is the same
// at every run of the same request and another for another request.
func TestGuestKitHTTP(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	for _, lang := range httpKitLanguages {
		t.Run(lang, func(t *testing.T) {
			file := "../plugins-kit/kit-" + lang
			srv, named := newKitServer(t), newKitServer(t)
			load := func(t *testing.T, g httpout.Grant, fuel int64) (*wasm.Plugin, *wasm.Engine) {
				h := newNestHostWith(t, "kit-host", wasm.Config{}, wasm.PluginConfig{PoolSize: 2, Fuel: fuel, Grants: wasm.Grants{HTTP: g}}, file)
				return h.plugins[file], h.engine
			}
			call := func(t *testing.T, p *wasm.Plugin, ctx context.Context, corr []byte, payload string) (string, error) {
				t.Helper()
				resp, err := p.Invoke(ctx, &abi.Request{Command: "kit-http", Payload: []byte(payload), ContentType: "text/plain",
					ExecutorID: "kit-host", CorrelationID: corr})
				if err != nil {
					return "", err
				}
				if resp.Code() != abi.StatusOK {
					t.Fatalf("kit-http %q: %+v", payload, resp)
				}
				return string(resp.Payload), nil
			}
			ok := func(t *testing.T, p *wasm.Plugin, payload string) string {
				t.Helper()
				ctx, cancel := context.WithTimeout(ctxT(t), 20*time.Second)
				defer cancel()
				out, err := call(t, p, ctx, parentCorrelation, payload)
				if err != nil {
					t.Fatalf("kit-http %q: %v", payload, err)
				}
				return out
			}
			// srv by its address; named by its name alone (localhost).
			grant := httpout.Grant{Hosts: mustHosts(t, "http://127.0.0.1:"+srv.port, "http://localhost:"+named.port),
				MaxRequestBytes: 100, MaxResponseBytes: 1000, Timeout: time.Minute}
			p, engine := load(t, grant, 0)

			t.Run("round trip", func(t *testing.T) {
				if got, want := ok(t, p, "POST "+srv.URL+"/echo hello there"), "201 "+lang+"|text/plain POST hello there"; got != want {
					t.Fatalf("%q, want %q", got, want)
				}
			})
			t.Run("denied", func(t *testing.T) {
				for payload, want := range map[string]string{
					"GET http://127.0.0.2:" + srv.port + "/echo":                             "denied: http://127.0.0.2:" + srv.port + " is not granted",
					"GET http://localhost:" + named.port + "/echo":                           "denied: address 127.0.0.1:" + named.port + " is loopback",
					"GET " + srv.URL + "/redirect?to=http://127.0.0.3:" + srv.port:           "denied: a redirect to http://127.0.0.3:" + srv.port,
					"GET " + srv.URL + "/redirect?to=http://localhost:" + named.port:         "denied: address 127.0.0.1:" + named.port + " is loopback",
					"GET https://127.0.0.1:" + srv.port + "/echo":                            "denied: https://127.0.0.1:" + srv.port + " is not granted",
					"DELETE " + srv.URL + "/echo":                                            "201 ", // every usual method
					"GET " + srv.URL + "/redirect?to=http://127.0.0.1:" + srv.port + "/echo": "201 " + lang + "| GET ",
				} {
					if got := ok(t, p, payload); !strings.HasPrefix(got, want) {
						t.Errorf("%s: %q, want %q…", payload, got, want)
					}
				}
				none, noneEngine := load(t, httpout.Grant{}, 0)
				if got := ok(t, none, "GET "+srv.URL+"/echo"); !strings.HasPrefix(got, `denied: the operator file grants no HTTP: "http": {"hosts": [...]} in kit-`+lang+".json") {
					t.Errorf("no grant: %q", got)
				}
				if n := noneEngine.HTTPStats()["kit-"+lang].Requests; n["denied"] != 1 {
					t.Errorf("counted %v", n)
				}
			})
			t.Run("too large", func(t *testing.T) {
				if got := ok(t, p, "POST "+srv.URL+"/echo +100"); !strings.HasPrefix(got, "201 ") {
					t.Errorf("100 bytes: %q", got)
				}
				if got := ok(t, p, "POST "+srv.URL+"/echo +101"); !strings.HasPrefix(got, "too-large: the request's body is 101 bytes") {
					t.Errorf("101 bytes: %q", got)
				}
				if got := ok(t, p, "GET "+srv.URL+"/big"); !strings.HasPrefix(got, "too-large: the response's body is 2000 bytes, over the grant's bound of 1000") {
					t.Errorf("a response of 2,000 bytes: %q", got)
				}
				// Far over the bound: refused before it is copied out of the guest.
				if got := ok(t, p, "POST "+srv.URL+"/echo +1000000"); !strings.HasPrefix(got, "too-large: the request is ") {
					t.Errorf("1,000,000 bytes: %q", got)
				}
			})
			t.Run("requests a call makes", func(t *testing.T) {
				lines := strings.Split(ok(t, p, "x17 GET "+srv.URL+"/echo"), "\n")
				if len(lines) != 17 || !strings.HasPrefix(lines[15], "201 ") || lines[16] != "limit: over the call's bound of 16 requests (the grant's maxRequests)" {
					t.Fatalf("%q", lines)
				}
			})
			for _, fuel := range []int64{0, 1 << 50} { // wazero's own deadline check, and the metered module's
				t.Run("deadline"+map[bool]string{true: " metered"}[fuel > 0], func(t *testing.T) {
					pl := p
					if fuel > 0 {
						pl, _ = load(t, grant, fuel)
					}
					ctx, cancel := context.WithTimeout(ctxT(t), 500*time.Millisecond)
					defer cancel()
					start := time.Now()
					_, err := call(t, pl, ctx, parentCorrelation, "GET "+srv.URL+"/hang")
					took := time.Since(start)
					var werr *wasm.Error
					if !errors.As(err, &werr) || werr.Kind != wasm.KindDeadline {
						t.Fatalf("err %v after %v; want the call's deadline", err, took)
					}
					if took > 5*time.Second {
						t.Fatalf("the call ended %v after its start, for a deadline of 500ms", took)
					}
					<-srv.arrived
					select {
					case <-srv.cut:
					case <-time.After(10 * time.Second):
						t.Fatal("the request outlived its call")
					}
					if got := ok(t, pl, "GET "+srv.URL+"/echo"); !strings.HasPrefix(got, "201 ") { // a fresh instance
						t.Fatalf("after the cut: %q", got)
					}
				})
			}
			t.Run("grant timeout", func(t *testing.T) {
				short, _ := load(t, httpout.Grant{Hosts: grant.Hosts, Timeout: 200 * time.Millisecond}, 0)
				if got := ok(t, short, "GET "+srv.URL+"/hang"); got != "timeout: no response within 200ms" {
					t.Fatalf("%q", got)
				}
				<-srv.arrived
				<-srv.cut
			})
			t.Run("rate", func(t *testing.T) {
				limited, engine := load(t, httpout.Grant{Hosts: grant.Hosts, Rate: 0.01, Burst: 3}, 0)
				for i := range 3 {
					if got := ok(t, limited, "GET "+srv.URL+"/echo"); !strings.HasPrefix(got, "201 ") {
						t.Fatalf("#%d: %q", i+1, got)
					}
				}
				if got := ok(t, limited, "GET "+srv.URL+"/echo"); !strings.HasPrefix(got, "limit: over the plugin's rate") {
					t.Fatalf("past the burst: %q", got)
				}
				if n := engine.HTTPStats()["kit-"+lang].Requests; n["2xx"] != 3 || n["limit"] != 1 {
					t.Fatalf("counted %v", n)
				}
			})
			t.Run("idempotency key", func(t *testing.T) {
				key := func(corr []byte, topic string) string {
					t.Helper()
					ctx := ctxT(t)
					if topic != "" {
						ctx = httpout.WithRequestKey(ctx, corr, topic)
					}
					out, err := call(t, p, ctx, corr, "GET "+srv.URL+"/key")
					if err != nil {
						t.Fatal(err)
					}
					return strings.Fields(out)[1]
				}
				corr, other := []byte("correlation-0001"), []byte("correlation-0002")
				first, rerun := key(corr, "clients/a/rsp"), key(corr, "clients/a/rsp")
				want, _ := httpout.IdempotencyKey(httpout.WithRequestKey(context.Background(), corr, "clients/a/rsp"), corr, 0)
				if first != want || rerun != first {
					t.Fatalf("first run %s, run again %s; want %s both times", first, rerun, want)
				}
				if k := key(other, "clients/a/rsp"); k == first || k == "-" {
					t.Fatalf("another request's key: %s", k)
				}
				if k := key(corr, ""); k != "-" { // an idempotent command's: the executor gives no request key
					t.Fatalf("without a request key: %s", k)
				}
				// Each request of a call has its own, the same at a run again.
				three := func() []string {
					out, err := call(t, p, httpout.WithRequestKey(ctxT(t), corr, "clients/a/rsp"), corr, "x3 GET "+srv.URL+"/key")
					if err != nil {
						t.Fatal(err)
					}
					var keys []string
					for _, l := range strings.Split(out, "\n") {
						keys = append(keys, strings.Fields(l)[1])
					}
					return keys
				}
				keys, again := three(), three()
				if len(keys) != 3 || keys[0] != first || keys[1] == keys[0] || keys[2] == keys[1] || strings.Join(keys, ",") != strings.Join(again, ",") {
					t.Fatalf("the keys of three requests %v, at a run again %v", keys, again)
				}
			})
			if n := engine.HTTPStats()["kit-"+lang].Requests; n["denied"] < 5 || n["too_large"] != 3 || n["limit"] != 1 || n["2xx"] < 4 {
				t.Errorf("counted %v", n)
			}
		})
	}
}
