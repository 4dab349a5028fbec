package wasm

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

// The deliberately broken modules are testdata/bad/NAME.wat, built by
// `make plugins` into testdata/plugins/bad-NAME.wasm. Each file's first
// line says what is wrong with it.

// loadRefusal is one module the engine must refuse to load.
type loadRefusal struct {
	name string
	wasm func(t *testing.T) []byte
	cfg  PluginConfig
	// want are substrings the load error must contain, each naming the
	// problem in words an operator can act on.
	want []string
}

func loadBadModule(name string) func(t *testing.T) []byte {
	return func(t *testing.T) []byte { return readPlugin(t, "bad-"+name) }
}

func loadLiteral(b []byte) func(t *testing.T) []byte {
	return func(*testing.T) []byte { return b }
}

func loadRefusals() []loadRefusal {
	return []loadRefusal{
		{name: "net", wasm: loadBadModule("net"),
			want: []string{"wasi_snapshot_preview1.sock_accept", "network"}},
		{name: "version", wasm: loadBadModule("version"),
			want: []string{"ABI version 99", "speaks version 1"}},
		{name: "describe", wasm: loadBadModule("describe"),
			want: []string{"description refused", "malformed envelope", "declares 64 bytes, 8 left"}},
		{name: "nocmds", wasm: loadBadModule("nocmds"),
			want: []string{"description refused", "no commands"}},
		{name: "ttl", wasm: loadBadModule("ttl"),
			want: []string{"description refused", `command "ttl"`, "idempotent", "response TTL"}},
		{name: "foreign", wasm: loadBadModule("foreign"),
			want: []string{"env.now", `no module "env"`}},
		{name: "sig", wasm: loadBadModule("sig"),
			want: []string{"cmdhost.request_len", "(i32) -> (i32)", "() -> (i32)"}},
		{name: "noexport", wasm: loadBadModule("noexport"),
			want: []string{"does not export " + abi.ExportDescribe}},
		{name: "garbage", wasm: loadLiteral([]byte("not wasm at all")),
			want: []string{"not a valid WebAssembly module", "magic"}},
		{name: "empty", wasm: loadLiteral([]byte{}),
			want: []string{"empty module (0 bytes)"}},
		{name: "echo-1-page", wasm: func(t *testing.T) []byte { return readPlugin(t, "echo") },
			cfg:  PluginConfig{MemoryPages: 1},
			want: []string{"minimum memory is above the plugin's memory limit of 1 pages", "raise the memory limit"}},
	}
}

func TestLoadRefuses(t *testing.T) {
	for _, tc := range loadRefusals() {
		t.Run(tc.name, func(t *testing.T) {
			name := "bad-" + tc.name
			p, err := sharedEngine.Load(context.Background(), name, tc.wasm(t), tc.cfg)
			if err == nil {
				_ = p.Close(context.Background())
				t.Fatalf("Load succeeded; want a refusal")
			}
			if p != nil {
				t.Errorf("Load returned a plugin along with its error %v", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "loading plugin "+name+": ") {
				t.Errorf("error %q does not start by naming the plugin", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			t.Logf("refused: %v", err)
		})
	}

	// _initialize never returns: the load timeout must cut it.
	t.Run("initspin", func(t *testing.T) {
		const timeout = 300 * time.Millisecond
		type result struct {
			p   *Plugin
			err error
		}
		done := make(chan result, 1)
		bin := readPlugin(t, "bad-initspin") // here: it may skip or fail the test, which only the test's goroutine may
		start := time.Now()
		go func() {
			p, err := sharedEngine.Load(context.Background(), "bad-initspin", bin, PluginConfig{LoadTimeout: timeout})
			done <- result{p, err}
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(60 * time.Second): // hang guard: _initialize spins forever
			t.Fatalf("Load with a %v load timeout still running after 60 s: the spinning _initialize was not stopped", timeout)
		}
		elapsed := time.Since(start)
		if r.err == nil {
			_ = r.p.Close(context.Background())
			t.Fatalf("Load succeeded; want the load timeout")
		}
		if elapsed < timeout-50*time.Millisecond {
			t.Errorf("Load failed after %v, before the %v load timeout: %v", elapsed, timeout, r.err)
		}
		if !errors.Is(r.err, context.DeadlineExceeded) || !strings.Contains(r.err.Error(), "deadline") {
			t.Errorf("error %q: want one that is context.DeadlineExceeded and says so", r.err)
		}
		if !strings.Contains(r.err.Error(), "loading plugin bad-initspin: ") {
			t.Errorf("error %q does not name the plugin", r.err)
		}
		if !strings.Contains(r.err.Error(), "_initialize") || !strings.Contains(r.err.Error(), "load timeout of 300ms") {
			t.Errorf("error %q: want one naming _initialize and the load timeout", r.err)
		}
		t.Logf("refused after %v: %v", elapsed.Round(time.Millisecond), r.err)
	})
}

// Modules that load but break the ABI on every call: each call fails as
// bad output and discards its instance.
func TestLoadAcceptsAndFailsAtCall(t *testing.T) {
	for _, tc := range []struct {
		name    string
		want    []string // in the call's error
		wantLog string   // in the host log after the call, if set
	}{
		{name: "nohandle",
			want: []string{abi.ExportHandle + " returned without writing a response"}},
		{name: "badresp",
			want: []string{"status 408 is reserved for the host"},
			// The guest logs this only when response_write returned
			// ResultInvalid (-7); on any other answer it traps instead.
			wantLog: "bad-badresp: response_write returned ResultInvalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := load(t, "bad-"+tc.name, PluginConfig{})
			if p.Description().Command(tc.name) == nil {
				t.Fatalf("description %+v lacks command %q", p.Description(), tc.name)
			}
			// Twice: the first call runs on the warm instance made at load,
			// the second on a fresh one made for it.
			for i := 1; i <= 2; i++ {
				before := p.Stats()
				resp, err := call(t, p, context.Background(), tc.name, "x")
				if err == nil {
					t.Fatalf("call %d: got response %v; want an error", i, resp)
				}
				if k := KindOf(err); k != KindBadOutput {
					t.Fatalf("call %d: kind %v (%v); want %v", i, k, err, KindBadOutput)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("call %d: error %q does not contain %q", i, err, w)
					}
				}
				after := p.Stats()
				if after.Replaced != before.Replaced+1 {
					t.Errorf("call %d: Stats().Replaced went from %d to %d; want +1", i, before.Replaced, after.Replaced)
				}
				if after.Failures != before.Failures+1 {
					t.Errorf("call %d: Stats().Failures went from %d to %d; want +1", i, before.Failures, after.Failures)
				}
				if after.InUse != 0 {
					t.Errorf("call %d: %d calls still in use", i, after.InUse)
				}
			}
			if tc.wantLog != "" && !logBuf.Contains(tc.wantLog) {
				t.Errorf("host log lacks the guest's line %q: response_write did not return ResultInvalid (-7)", tc.wantLog)
			}
		})
	}
}

// A refused load leaves nothing running: no goroutine of the runtime, the
// module or the load timeout survives it.
func TestLoadRefusalLeaksNoGoroutines(t *testing.T) {
	var cases []loadRefusal
	for _, tc := range loadRefusals() {
		switch tc.name {
		case "version", "describe", "ttl", "garbage", "net", "noexport", "echo-1-page":
			// Refused at each stage: compile, import check, export check,
			// after instantiation (version), after describe.
			cases = append(cases, tc)
		}
	}
	// One spinning _initialize, cut by a short load timeout.
	cases = append(cases, loadRefusal{name: "initspin", wasm: loadBadModule("initspin"),
		cfg: PluginConfig{LoadTimeout: 50 * time.Millisecond}})
	modules := make([][]byte, len(cases))
	for i, tc := range cases {
		modules[i] = tc.wasm(t)
	}
	loadAll := func(n int) {
		t.Helper()
		for i := range n {
			tc := cases[i%len(cases)]
			p, err := sharedEngine.Load(context.Background(), "bad-"+tc.name, modules[i%len(cases)], tc.cfg)
			if err == nil {
				_ = p.Close(context.Background())
				t.Fatalf("%s: Load succeeded; want a refusal", tc.name)
			}
		}
	}

	loadAll(len(cases)) // warm up: caches and whatever starts once
	base := settledGoroutines(t, -1)

	loadAll(20)
	const margin = 3
	if n := settledGoroutines(t, base+margin); n > base+margin {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("goroutines: %d before 20 refused loads, %d after (margin %d)\n%s", base, n, margin, buf)
	}
}

// settledGoroutines polls runtime.NumGoroutine until it is at most limit
// (limit < 0: until it stops changing) or 5 s have passed, and returns the
// last count.
func settledGoroutines(t *testing.T, limit int) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	n, stable := runtime.NumGoroutine(), 0
	for time.Now().Before(deadline) {
		if limit >= 0 && n <= limit {
			return n
		}
		if limit < 0 && stable >= 10 {
			return n
		}
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m == n {
			stable++
		} else {
			n, stable = m, 0
		}
	}
	return n
}
