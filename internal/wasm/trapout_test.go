package wasm

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// TestCallOutputLanguages: the failure message of each guest language's
// way of dying, as its runtime prints it, and the bound on what is held.
// The guest kit (internal/nested/guestkit_test.go) checks Go and Debian's Rust 1.63
// on real modules; Rust 1.73 and later put the message on a line of its
// own, and C's assert prints before abort.
func TestCallOutputLanguages(t *testing.T) {
	cases := []struct {
		name, output, message string
	}{
		{"go panic", "panic: boom\n\ngoroutine 1 [running]:\nmain.f()\n", "panic: boom"},
		{"go out of memory", "runtime: out of memory: cannot allocate 1048576-byte block (3 in use)\nfatal error: out of memory\n", "runtime: out of memory: cannot allocate 1048576-byte block (3 in use)"},
		{"rust 1.63", "thread '<unnamed>' panicked at 'boom', src/lib.rs:5:9\nnote: run with `RUST_BACKTRACE=1`\n", "thread '<unnamed>' panicked at 'boom', src/lib.rs:5:9"},
		{"rust 1.73", "thread '<unnamed>' panicked at src/lib.rs:5:9:\nboom\nnote: run with `RUST_BACKTRACE=1`\n", "thread '<unnamed>' panicked at src/lib.rs:5:9: boom"},
		{"c assert", "Assertion failed: n > 0 (kit.c: trap: 12)\n", "Assertion failed: n > 0 (kit.c: trap: 12)"},
		{"ordinary lines only", "about to fail\nstill going\n", ""},
		{"a marker not at the start", "log: panic: no\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gate, h, _ := newTestGate(OutputLimits{})
			var out callOutput
			w := &guestOutput{gate: gate, stream: "stderr", level: slog.LevelWarn, call: &out}
			_, _ = w.Write([]byte(c.output))
			msg, _ := out.end(true, gate, "cmd")
			if msg != c.message {
				t.Errorf("message %q, want %q", msg, c.message)
			}
			lines, _, _ := h.split()
			if want := strings.Count(c.output, "\n") - strings.Count(c.output, "\n\n"); c.message != "" && lines != 1 || c.message == "" && lines != want {
				t.Errorf("%d records; want one for a failure's output, one a line otherwise", lines)
			}
		})
	}

	t.Run("bounded", func(t *testing.T) {
		gate, h, _ := newTestGate(OutputLimits{})
		var out callOutput
		w := &guestOutput{gate: gate, stream: "stderr", level: slog.LevelWarn, call: &out}
		_, _ = w.Write([]byte("panic: flood\n"))
		line := strings.Repeat("x", 999) + "\n"
		for range 100 { // 100,000 bytes
			_, _ = w.Write([]byte(line))
		}
		out.end(true, gate, "cmd")
		recs := h.guestRecords(0)
		if len(recs) != 1 || len(recs[0]["output"]) > maxHeldOutput+64 || !strings.HasSuffix(recs[0]["output"], "more lines dropped]") {
			t.Fatalf("want one record of at most %d bytes that says lines were dropped; got %d records", maxHeldOutput, len(recs))
		}
		if n := gate.droppedLines.Load(); n < 60 {
			t.Errorf("%d lines counted as dropped; want the ~68 over the bound", n)
		}
	})
}

// recordEngine is an engine whose log records are kept, for the tests that
// count what a guest's failure put in the host's log.
func recordEngine(t *testing.T) (*Engine, *countingHandler) {
	t.Helper()
	h := &countingHandler{}
	e, err := NewEngine(Config{CacheDir: testkit.CacheDir(), Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e, h
}

// guestRecords returns the records of the guest's output (source stdout,
// stderr or guest) logged since record from, with their attributes.
func (h *countingHandler) guestRecords(from int) []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]string
	for _, r := range h.records[from:] {
		m := map[string]string{"msg": r.Message, "level": r.Level.String()}
		r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
		if m["source"] != "" {
			out = append(out, m)
		}
	}
	return out
}

func (h *countingHandler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.records)
}

// firstLine is what the caller's 500 quotes of err (internal/rpc faultSummary).
func firstLine(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}

// TestTrapCarriesGuestMessage: a guest's panic message is the first line
// of the call's error (the 500's message), cleaned and bounded, and the
// rest of what it printed when it failed is one log record; ordinary
// output stays a record per line. Before, the error said only "wasm
// error: unreachable" and each line of the panic was a record of its own.
func TestTrapCarriesGuestMessage(t *testing.T) {
	e, h := recordEngine(t)
	load := func(name string) *Plugin {
		p, err := e.Load(context.Background(), name, readPlugin(t, name), PluginConfig{PoolSize: 1, MemoryPages: 512})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close(context.Background()) })
		return p
	}
	panicky, oom := load("panic"), load("oom")
	cases := []struct {
		name, payload string
		p             *Plugin
		kind          Kind
		first         string // the error's first line
		lines         int    // ordinary guest records
		stackHas      string // in the one record of the failure's output
	}{
		{"panic", "", panicky, KindTrap, "plugin panic: command panic: trap: panic: panic plugin: deliberate panic", 0, "goroutine 1 [running]"},
		{"index", "index", panicky, KindTrap, "plugin panic: command panic: trap: panic: runtime error: index out of range [5] with length 3", 0, "main.init"},
		{"lines before", "log", panicky, KindTrap, "plugin panic: command panic: trap: panic: panic plugin: deliberate panic", 3, "goroutine 1 [running]"},
		{"out of memory", "", oom, KindOutOfMemory, "plugin oom: command oom: out of memory: runtime: out of memory: cannot allocate", 0, "fatal error: out of memory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			from := h.count()
			_, err := call(t, c.p, context.Background(), c.p.Name(), c.payload)
			if KindOf(err) != c.kind {
				t.Fatalf("want %v, got %v", c.kind, err)
			}
			if got := firstLine(err); !strings.HasPrefix(got, c.first) {
				t.Errorf("first line of the error:\n got %q\nwant %q", got, c.first)
			}
			if !strings.Contains(err.Error(), "wasm") {
				t.Errorf("the error keeps wazero's own after the first line: %q", err)
			}
			recs := h.guestRecords(from)
			var blocks []map[string]string
			for _, r := range recs {
				if r["output"] != "" {
					blocks = append(blocks, r)
				}
			}
			if len(recs)-len(blocks) != c.lines || len(blocks) != 1 {
				for _, r := range recs {
					t.Logf("record %q", r)
				}
				t.Fatalf("%d records of guest output: want %d ordinary ones and one with the failure's output, got %d of those", len(recs), c.lines, len(blocks))
			}
			b := blocks[0]
			t.Logf("%d records; the failure's: %q and %d bytes of output in %d lines", len(recs), b["msg"], len(b["output"]), strings.Count(b["output"], "\n")+1)
			if !strings.Contains(b["output"], c.stackHas) || strings.Count(b["output"], "\n") < 3 {
				t.Errorf("the failure's record holds its whole output, one line per line: %q", b["output"])
			}
			if b["level"] != "WARN" || b["plugin"] != c.p.Name() || b["command"] != c.p.Name() || b["source"] != "stderr" {
				t.Errorf("the failure's record names the plugin, command and stream: %q", b)
			}
		})
	}

	// A line the guest never ended (it died mid-line) is its message.
	t.Run("unfinished line", func(t *testing.T) {
		p, err := e.Load(context.Background(), "hostile-midline", readPlugin(t, "hostile-midline"), PluginConfig{PoolSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		from := h.count()
		_, err = call(t, p, context.Background(), "midline", "")
		if want := "plugin hostile-midline: command midline: trap: Assertion failed: n > 0 (kit.c: trap: 12)"; KindOf(err) != KindTrap || firstLine(err) != want {
			t.Errorf("first line of the error:\n got %q\nwant %q", firstLine(err), want)
		}
		if recs := h.guestRecords(from); len(recs) != 1 || recs[0]["command"] != "midline" {
			t.Errorf("want one record of the failure's output, got %q", recs)
		}
	})

	t.Run("controls", func(t *testing.T) {
		_, err := call(t, panicky, context.Background(), "panic", "controls")
		line := firstLine(err)
		if !utf8.ValidString(line) || strings.ContainsFunc(line, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Errorf("the first line must be clean UTF-8 without controls: %q", line)
		}
		if !strings.Contains(line, "trap: panic: bad ") || !strings.Contains(line, "red") {
			t.Errorf("the message survives its cleaning: %q", line)
		}
	})

	t.Run("bounded", func(t *testing.T) {
		m := guestMessage(strings.Repeat("€", 200))
		if len(m) > maxGuestMessage || !utf8.ValidString(m) || !strings.HasSuffix(m, "…") {
			t.Errorf("%d bytes %q: want at most %d, valid, marked as cut", len(m), m, maxGuestMessage)
		}
	})

	// A line that only looks like a panic, in a call that succeeds, is
	// logged as it was written: a record per line.
	t.Run("not a panic", func(t *testing.T) {
		from := h.count()
		if resp := mustCall(t, panicky, "panic", "fake"); string(resp.Payload) != "fine" {
			t.Fatalf("reply %q", resp.Payload)
		}
		recs := h.guestRecords(from)
		if len(recs) != 2 || recs[0]["msg"] != "panic: not a real one" || recs[1]["msg"] != "panic plugin: after the fake" {
			t.Errorf("want the two lines as two records, got %q", recs)
		}
	})
}

// TestDescribeFailureSaysWhy: a Go plugin refused at describe is refused
// with the guest's own reason, for each way a new author gets it wrong.
// Before, every one said "cmdhost_describe returned 1 (the guest's log
// says why)".
func TestDescribeFailureSaysWhy(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	bin, err := os.ReadFile(filepath.Join(pluginDir, "..", "plugins-alt", "describefail.wasm"))
	if err != nil {
		t.Fatalf("reading describefail.wasm: %v (run `make plugins`)", err)
	}
	cases := []struct{ name, cfgCase, want string }{
		{"registered in main", "", "cmdhost_describe returned 1: sdk: no commands registered (register them with sdk.Handle or sdk.OnMessage in an init function: a plugin's main never runs)"},
		{"bad name", "badname", `cmdhost_describe returned 1: sdk: command name "greet/all" may not hold '/'`},
		{"registered twice", "twice", `cmdhost_describe returned 1: sdk: command "greet" registered twice`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := sharedEngine.Load(context.Background(), "describefail", bin, PluginConfig{Config: map[string]string{"case": c.cfgCase}})
			if err == nil {
				_ = p.Close(context.Background())
				t.Fatal("loaded; want a refusal")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error:\n %q\nwant it to contain\n %q", err, c.want)
			}
		})
	}
}
