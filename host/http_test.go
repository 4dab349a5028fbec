package host_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
)

// Through a whole host: the operator file's "http" grants the plugin a
// server (another host is denied); each request of a non-idempotent
// command carries an Idempotency-Key, another for another request; a
// server that never answers is cut at the command's timeout, which the
// call answers 408, and the request is cancelled.
func TestHTTPThroughHost(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	cut := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			<-r.Context().Done()
			cut <- struct{}{}
			return
		}
		w.Header().Set("X-Kit-Reply", r.Header.Get(abi.IdempotencyKeyHeader)+"|")
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	dir := t.TempDir()
	testkit.InstallFile(t, "../testdata/plugins-kit/kit-go.wasm", dir, "kit-go.wasm")
	testkit.Install(t, dir, "kit-go.json", []byte(`{"http": {"hosts": ["http://127.0.0.1:`+port+`"]}, "commands": {"kit-http": {"timeout": "700ms"}}}`))
	h := hosttest.Serve(t, host.Config{PluginsDir: dir, ExecutorID: "http-host", CacheDir: testkit.CacheDir(), Embedded: host.EmbeddedConfig{Listen: "127.0.0.1:0"}})
	inv := loggedIn(t, h, "http-cli", "", nil)
	call := func(payload string) *rpc.Result {
		t.Helper()
		r, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/http-host/kit-http", Payload: []byte(payload), ContentType: "text/plain", Timeout: 20 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", payload, err)
		}
		return r
	}
	key := func() string {
		t.Helper()
		r := call("GET " + srv.URL + "/key")
		k, _, _ := strings.Cut(strings.TrimPrefix(string(r.Payload), "200 "), "|")
		if r.Status != 200 || len(k) != 36 {
			t.Fatalf("%d %q: want 200 with a key", r.Status, r.Payload)
		}
		return k
	}
	if a, b := key(), key(); a == b {
		t.Fatalf("two requests, one key %s", a)
	}
	if r := call("GET http://127.0.0.2:" + port + "/"); !strings.HasPrefix(string(r.Payload), "denied: http://127.0.0.2:"+port+" is not granted") {
		t.Fatalf("another host: %d %q", r.Status, r.Payload)
	}
	start := time.Now()
	if r := call("GET " + srv.URL + "/hang"); r.Status != abi.StatusRequestTimeout {
		t.Fatalf("a server that never answers: %+v; want 408", r)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("answered after %v for a timeout of 700ms", took)
	}
	select {
	case <-cut:
	case <-time.After(10 * time.Second):
		t.Fatal("the request outlived its call")
	}
}
