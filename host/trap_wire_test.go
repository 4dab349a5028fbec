package host_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// TestTrapReachesCaller: through a whole host over each real broker, a
// handler's panic message reaches the caller as the 500's __stMsg, and the
// host logs what the guest printed when it failed as one record (with the
// stack in its "output"). Before, the caller read "trap: wasm error:
// unreachable" and the host logged a WARN record per line of the guest's
// output: 93 for one out-of-memory call.
func TestTrapReachesCaller(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		dir := t.TempDir()
		for _, n := range []string{"panic", "oom"} {
			testkit.InstallFile(t, filepath.Join(pluginDir, n+".wasm"), dir, n+".wasm")
		}
		var log testkit.LogBuffer
		serving := &signalWriter{want: []byte(`"msg":"serving"`), seen: make(chan struct{})}
		id := "trap-" + strings.ReplaceAll(t.Name(), "/", "-")
		srv, err := host.New(host.Config{
			PluginsDir: dir,
			ExecutorID: id,
			CacheDir:   testkit.CacheDir(),
			Logger:     slog.New(slog.NewJSONHandler(teeWriter{&log, serving}, nil)),
			Broker:     host.BrokerConfig{URL: u},
			Limits: host.LimitsConfig{
				ExecTimeout: 30 * time.Second,
				Pool:        1,
				MaxExpiry:   time.Hour,
				Drain:       10 * time.Second,
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		go func() { ran <- srv.Run(ctx) }()
		t.Cleanup(func() { stop(); <-ran })
		select {
		case <-serving.seen:
		case err := <-ran:
			t.Fatalf("Run returned before serving: %v", err)
		case <-time.After(60 * time.Second): // hang guard
			t.Fatal("the server did not start serving")
		}
		inv, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: session.Config{Broker: u}})
		if err != nil {
			t.Fatal(err)
		}
		defer inv.Close()

		cases := []struct{ command, payload, msg, stack string }{
			{"panic", "index", "plugin panic: command panic: trap: panic: runtime error: index out of range [5] with length 3 (details in the host log)", "goroutine 1 [running]"},
			{"oom", "", "plugin oom: command oom: out of memory: runtime: out of memory: cannot allocate ", "fatal error: out of memory"},
		}
		for _, c := range cases {
			before := len(stderrRecords(t, log.String()))
			r, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/" + id + "/" + c.command, Payload: []byte(c.payload), ContentType: "text/plain", Timeout: 30 * time.Second})
			if err != nil || r.Status != 500 {
				t.Fatalf("%s: %+v, %v; want a 500", c.command, r, err)
			}
			t.Logf("%s: __stMsg %q", c.command, r.Message)
			if !strings.HasPrefix(r.Message, strings.TrimSuffix(c.msg, " (details in the host log)")) || !strings.HasSuffix(r.Message, "(details in the host log)") {
				t.Errorf("%s: __stMsg\n %q\nwant\n %q", c.command, r.Message, c.msg)
			}
			// The engine logs the guest's output before the call returns:
			// it is in the log when the reply arrives.
			recs := stderrRecords(t, log.String())[before:]
			if len(recs) != 1 || !strings.Contains(recs[0]["output"], c.stack) || recs[0]["command"] != c.command {
				t.Errorf("%s: %d records of the guest's stderr; want one, with %q in its output: %q", c.command, len(recs), c.stack, recs)
			}
		}
	})
}

// teeWriter writes to a and b.
type teeWriter struct{ a, b io.Writer }

func (w teeWriter) Write(p []byte) (int, error) {
	_, _ = w.b.Write(p)
	return w.a.Write(p)
}

// stderrRecords returns the JSON log's records of guests' stderr, their
// attributes as strings.
func stderrRecords(t *testing.T, log string) []map[string]string {
	t.Helper()
	var out []map[string]string
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a log line that is not JSON: %v: %q", err, sc.Text())
		}
		if m["source"] != "stderr" {
			continue
		}
		s := map[string]string{}
		for k, v := range m {
			if str, ok := v.(string); ok {
				s[k] = str
			}
		}
		out = append(out, s)
	}
	return out
}
