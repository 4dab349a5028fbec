package servecmd

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

// collector is a fake OTLP/HTTP collector: it keeps the spans it gets.
type collector struct {
	mu    sync.Mutex
	spans []string // "service.instance.id span-name"
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		z, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = z
	}
	b, err := io.ReadAll(body)
	var req coltrace.ExportTraceServiceRequest
	if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		service, instance := "", ""
		for _, kv := range rs.Resource.Attributes {
			switch kv.Key {
			case "service.name":
				service = kv.Value.GetStringValue()
			case "service.instance.id":
				instance = kv.Value.GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c.spans = append(c.spans, service+" "+instance+" "+s.Name)
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// serve --otlp-endpoint sends the spans of the requests it runs to an
// OTLP/HTTP collector, the last ones when it stops.
func TestServeExportsSpans(t *testing.T) {
	col := &collector{}
	srv := httptest.NewServer(col)
	defer srv.Close()
	addr, stop := clitest.StartServe(t, nil, "--otlp-endpoint", srv.URL)
	if out, errOut, code := clitest.Run(t, "invoke", "echo", "-d", "hi", "--broker", "mqtt://"+addr, "--executor", "cli-host"); out != "hi" || code != 0 {
		t.Fatalf("invoke: %q %q %d", out, errOut, code)
	}
	if log, err := stop(); err != nil {
		t.Fatalf("serve: %v\n%s", err, log)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	got := strings.Join(col.spans, "\n")
	for _, want := range []string{"cmdhost cli-host cmdhost.request echo", "cmdhost cli-host cmdhost.execute", "cmdhost cli-host cmdhost.reply"} {
		if !strings.Contains(got, want) {
			t.Errorf("the collector got no span %q; it got:\n%s", want, got)
		}
	}

	_, errOut, code := clitest.Run(t, "serve", "--plugins", clitest.Plugins, "--listen", clitest.FreeAddr(t), "--otlp-endpoint", "127.0.0.1:4318")
	if code != base.ExitUsage || !strings.Contains(errOut, "want the collector's OTLP/HTTP URL, e.g. http://127.0.0.1:4318") {
		t.Errorf("--otlp-endpoint without a scheme: %q, exit %d", errOut, code)
	}
}
