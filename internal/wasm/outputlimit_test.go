package wasm

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// countingHandler is a slog handler that keeps every record's message and
// level, so that tests count what reached the host's log.
type countingHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *countingHandler) WithGroup(string) slog.Handler            { return h }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
	return nil
}

// split returns the guest's lines (their bytes added up) and the host's
// own messages about the limit.
func (h *countingHandler) split() (lines, bytes int, notes []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.records {
		if strings.HasPrefix(r.Message, "guest output ") {
			notes = append(notes, r.Message)
			continue
		}
		lines++
		bytes += len(r.Message)
	}
	return lines, bytes, notes
}

func newTestGate(limits OutputLimits) (*outputGate, *countingHandler, *testkit.Clock) {
	h, clock := &countingHandler{}, newFakeClock()
	return newOutputGate(limits, clock.Now, slog.New(h), "p"), h, clock
}

// TestOutputGateRefills: a burst goes through, the rest is dropped and
// counted, time refills the budget at the sustained rate, and the host
// says so once when dropping starts and once, with the counts, when it
// ends: never a line per dropped line.
func TestOutputGateRefills(t *testing.T) {
	g, h, clock := newTestGate(OutputLimits{LinesPerSecond: 10, LineBurst: 50})
	for range 200 {
		g.emit(slog.LevelInfo, "stdout", []byte("hello"))
	}
	lines, _, notes := h.split()
	if lines != 50 || g.droppedLines.Load() != 150 || g.droppedBytes.Load() != 150*5 {
		t.Fatalf("%d lines logged, %d dropped (%d bytes); want 50 and 150 (750)", lines, g.droppedLines.Load(), g.droppedBytes.Load())
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "over its limit") {
		t.Fatalf("notes %q; want one saying it is over its limit", notes)
	}

	clock.Add(time.Second) // 10 lines' worth
	for range 20 {
		g.emit(slog.LevelInfo, "stdout", []byte("again"))
	}
	lines, _, notes = h.split()
	if lines != 60 || g.droppedLines.Load() != 160 {
		t.Fatalf("after 1 s: %d lines logged, %d dropped; want 60 and 160", lines, g.droppedLines.Load())
	}
	if len(notes) != 3 || !strings.Contains(notes[1], "within its limit again") || !strings.Contains(notes[2], "over its limit") {
		t.Fatalf("notes %q; want over, within again, over", notes)
	}
	h.mu.Lock()
	var dropped any
	h.records[51].Attrs(func(a slog.Attr) bool {
		if a.Key == "dropped_lines" {
			dropped = a.Value.Any()
		}
		return true
	})
	h.mu.Unlock()
	if dropped != int64(150) {
		t.Fatalf("the note of the end of the drops says dropped_lines=%v; want 150", dropped)
	}
}

// TestOutputGateNotesALongFlood: a steady flood is one run of drops,
// whatever gets through between refills: announced once, noted with its
// counts every outputNoteInterval, and closed once, by the first line after
// a quiet second.
func TestOutputGateNotesALongFlood(t *testing.T) {
	g, h, clock := newTestGate(OutputLimits{LinesPerSecond: 1, LineBurst: 1})
	for range 120 { // a minute of 100 lines a second, one a second let through
		for range 50 {
			g.emit(slog.LevelInfo, "stdout", []byte("x"))
		}
		clock.Add(500 * time.Millisecond)
	}
	lines, _, notes := h.split()
	want := []string{"guest output over its limit: dropping lines until it slows down"}
	for range 5 { // at 10, 20 … 50 s
		want = append(want, "guest output still over its limit")
	}
	if lines != 60 || !slices.Equal(notes, want) {
		t.Fatalf("%d lines, notes %q; want 60 lines and %q", lines, notes, want)
	}
	clock.Add(500 * time.Millisecond) // a quiet second since the last drop
	g.emit(slog.LevelInfo, "stdout", []byte("calm"))
	_, _, notes = h.split()
	if len(notes) != 7 || notes[6] != "guest output within its limit again" {
		t.Fatalf("after a quiet second: notes %q; want the run closed", notes)
	}
	if d := g.droppedLines.Load(); d != 120*50-60 {
		t.Fatalf("%d lines dropped; want %d", d, 120*50-60)
	}
}

// TestOutputGateBytes: the byte budget holds when lines are few and long.
func TestOutputGateBytes(t *testing.T) {
	g, h, _ := newTestGate(OutputLimits{ByteBurst: 10_000, MaxLine: 1000})
	line := []byte(strings.Repeat("y", 1000))
	for range 100 {
		g.emit(slog.LevelInfo, "stdout", line)
	}
	if lines, bytes, _ := h.split(); lines != 10 || bytes != 10_000 {
		t.Fatalf("%d lines, %d bytes logged; want 10 lines, 10,000 bytes", lines, bytes)
	}
}

// TestCutLine: a long line is cut on a character boundary and marked.
func TestCutLine(t *testing.T) {
	g, h, _ := newTestGate(OutputLimits{MaxLine: 5})
	g.emit(slog.LevelInfo, "stdout", []byte("abcdé-and-more")) // é is 2 bytes, at 4–5
	g.emit(slog.LevelInfo, "stdout", []byte("short"))
	h.mu.Lock()
	defer h.mu.Unlock()
	if got := h.records[0].Message; got != "abcd"+cutMark {
		t.Errorf("cut line %q; want %q", got, "abcd"+cutMark)
	}
	if got := h.records[1].Message; got != "short" {
		t.Errorf("line of MaxLine bytes %q; want it whole", got)
	}
}

// chattyEngine loads the chatty test plugin on an engine of its own whose
// log the test counts, with a frozen clock: no budget is refilled during
// the test, so the counts are exact whatever the machine's speed.
func chattyEngine(t *testing.T) (*Plugin, *countingHandler) {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	h := &countingHandler{}
	e, err := NewEngine(Config{CacheDir: testkit.CacheDir(), Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	bin, err := os.ReadFile(filepath.Join(pluginDir, "..", "plugins-alt", "chatty.wasm"))
	if err != nil {
		t.Fatalf("reading chatty.wasm: %v (run `make plugins`)", err)
	}
	p, err := e.Load(context.Background(), "chatty", bin, PluginConfig{Clock: newFakeClock(), PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p, h
}

// TestGuestOutputLimited: a guest writing 100 MiB, or a million lines, to
// its output or its log gets the default budget into the host's log and
// no more (before the limit, all of it went to the log); the call still
// completes and the plugin's stats count what was dropped.
func TestGuestOutputLimited(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name, payload      string
		minDropped         int64 // lines
		minDroppedBytes    int64
		maxLines, maxBytes int
	}{
		{"million stdout lines", "stdout 1000000 1", 1000000 - DefaultOutputLineBurst, 0, DefaultOutputLineBurst, DefaultOutputLineBurst},
		{"100 MiB of stderr lines", "stderr 25600 4095", 25600 - DefaultOutputByteBurst/4095, 0, DefaultOutputLineBurst, DefaultOutputByteBurst},
		{"100 MiB with no newline", "raw 0 104857600", 0, 100*mib - DefaultOutputMaxLine - 1, 0, 0}, // held until a newline: none comes
		{"log calls", "log 5000 100", 5000 - DefaultOutputLineBurst, 0, DefaultOutputLineBurst, DefaultOutputLineBurst * 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, h := chattyEngine(t)
			if resp := mustCall(t, p, "chatty", c.payload); string(resp.Payload) != "done" {
				t.Fatalf("reply %q", resp.Payload)
			}
			lines, bytes, notes := h.split()
			st := p.Stats()
			t.Logf("%d lines (%d bytes) logged, %d lines (%d bytes) dropped, notes %q", lines, bytes, st.OutputDroppedLines, st.OutputDroppedBytes, notes)
			if lines > c.maxLines || bytes > c.maxBytes {
				t.Errorf("%d lines, %d bytes reached the log; want at most %d lines, %d bytes", lines, bytes, c.maxLines, c.maxBytes)
			}
			if st.OutputDroppedLines < c.minDropped || st.OutputDroppedBytes < c.minDroppedBytes {
				t.Errorf("stats say %d lines, %d bytes dropped; want at least %d lines, %d bytes", st.OutputDroppedLines, st.OutputDroppedBytes, c.minDropped, c.minDroppedBytes)
			}
			if c.minDropped > 0 && len(notes) != 1 {
				t.Errorf("notes %q; want exactly one note that output is dropped", notes)
			}
		})
	}
}

// BenchmarkOutputGate is the cost of the limit per guest line: let through
// (to a handler that discards it) and dropped.
func BenchmarkOutputGate(b *testing.B) {
	line := []byte(strings.Repeat("z", 80))
	discard := slog.New(slog.DiscardHandler)
	b.Run("through", func(b *testing.B) {
		g := newOutputGate(OutputLimits{LinesPerSecond: 1 << 30, LineBurst: 1 << 30, BytesPerSecond: 1 << 30, ByteBurst: 1 << 30}, time.Now, discard, "p")
		for b.Loop() {
			g.emit(slog.LevelInfo, "stdout", line)
		}
	})
	b.Run("dropped", func(b *testing.B) {
		g := newOutputGate(OutputLimits{LineBurst: 1}, time.Now, discard, "p")
		for b.Loop() {
			g.emit(slog.LevelInfo, "stdout", line)
		}
	})
}
