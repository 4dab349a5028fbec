package wasm

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// OutputLimits bound what one plugin writes to the host's log: its stdout
// and stderr lines and its log host-function calls, all counted together
// and shared by all its instances. A guest can write 100 MiB in a quarter
// of a second; without a bound, one plugin fills the host's disk and
// drowns every other line. What is over the limit is dropped and counted
// (Stats.OutputDroppedLines, OutputDroppedBytes); the host logs one line
// when a plugin starts dropping, one with the counts every
// outputNoteInterval while it goes on, and one with the counts when it
// writes within its limit again: never one per dropped line. Zero fields
// take the defaults.
type OutputLimits struct {
	// LinesPerSecond is the sustained rate of lines; default 100.
	LinesPerSecond int
	// LineBurst is how many lines may come at once; default 1000.
	LineBurst int
	// BytesPerSecond is the sustained rate of bytes; default 64 KiB.
	BytesPerSecond int
	// ByteBurst is how many bytes may come at once; default 1 MiB.
	ByteBurst int
	// MaxLine bounds one line; a longer one is cut on a character
	// boundary and marked; default 4 KiB.
	MaxLine int
}

// Default output limits.
const (
	DefaultOutputLinesPerSecond = 100
	DefaultOutputLineBurst      = 1000
	DefaultOutputBytesPerSecond = 64 << 10
	DefaultOutputByteBurst      = 1 << 20
	DefaultOutputMaxLine        = 4 << 10
)

func (l OutputLimits) withDefaults() OutputLimits {
	if l.LinesPerSecond <= 0 {
		l.LinesPerSecond = DefaultOutputLinesPerSecond
	}
	if l.LineBurst <= 0 {
		l.LineBurst = DefaultOutputLineBurst
	}
	if l.BytesPerSecond <= 0 {
		l.BytesPerSecond = DefaultOutputBytesPerSecond
	}
	if l.ByteBurst <= 0 {
		l.ByteBurst = DefaultOutputByteBurst
	}
	if l.MaxLine <= 0 {
		l.MaxLine = DefaultOutputMaxLine
	}
	return l
}

// outputNoteInterval is how often the host says that a plugin is still
// dropping output.
const outputNoteInterval = 10 * time.Second

// cutMark ends a line cut at MaxLine.
const cutMark = " …[cut]"

// outputGate is one plugin version's output limiter: two token buckets,
// lines and bytes, refilled by the clock. Instances of the plugin write
// concurrently, so its state is under mu; the drop counters are atomic so
// that Stats reads them without the lock.
type outputGate struct {
	limits OutputLimits
	now    func() time.Time
	log    *slog.Logger
	plugin string

	mu       sync.Mutex
	lines    float64 // tokens left
	bytes    float64
	last     time.Time // of the last refill
	dropping bool      // in a run of drops (take explains when it ends)
	noted    time.Time // when the host last said so
	lastDrop time.Time // of the run's latest drop
	runLines int64     // dropped in the current run of drops
	runBytes int64

	droppedLines atomic.Int64
	droppedBytes atomic.Int64
}

func newOutputGate(limits OutputLimits, now func() time.Time, log *slog.Logger, plugin string) *outputGate {
	limits = limits.withDefaults()
	return &outputGate{limits: limits, now: now, log: log, plugin: plugin,
		lines: float64(limits.LineBurst), bytes: float64(limits.ByteBurst), last: now()}
}

// emit writes one guest line at level when the plugin's budget allows it,
// cut to MaxLine; otherwise it counts it as dropped.
func (g *outputGate) emit(level slog.Level, source string, line []byte) {
	line, cut := cutLine(line, g.limits.MaxLine)
	if !g.take(len(line)) {
		return
	}
	msg := string(line)
	if cut {
		msg += cutMark
	}
	g.log.Log(context.Background(), level, msg, "plugin", g.plugin, "source", source)
}

// emitBlock writes the held output of a failed call (trapout.go) as one
// record: its first line the message, the rest the "output" attribute,
// tagged with the call's command. The budget is charged one line of all
// its bytes: a failure's output is bounded (maxHeldOutput) and each
// failure costs the guest its instance.
func (g *outputGate) emitBlock(level slog.Level, source, command, first, rest string) {
	if !g.take(len(first) + len(rest)) {
		return
	}
	g.log.Log(context.Background(), level, first, "plugin", g.plugin, "command", command, "source", source, "output", rest)
}

// take spends the tokens of a line of n bytes and reports whether it may
// be written. A run of drops is announced when it starts, noted with its
// counts every outputNoteInterval while it goes on, and closed with its
// counts by the first line let through after a whole second without a
// drop: a steady flood, whose lines get through one per refill, is one
// run, not a note per refill.
func (g *outputGate) take(n int) bool {
	g.mu.Lock()
	now := g.now()
	if dt := now.Sub(g.last).Seconds(); dt > 0 {
		g.lines = min(float64(g.limits.LineBurst), g.lines+dt*float64(g.limits.LinesPerSecond))
		g.bytes = min(float64(g.limits.ByteBurst), g.bytes+dt*float64(g.limits.BytesPerSecond))
	}
	g.last = now
	if g.lines < 1 || g.bytes < float64(n) {
		first, still := !g.dropping, g.dropping && now.Sub(g.noted) >= outputNoteInterval
		if first || still {
			g.noted = now
		}
		g.dropping, g.lastDrop = true, now
		g.runLines++
		g.runBytes += int64(n)
		lines, bytes := g.runLines, g.runBytes
		g.mu.Unlock()
		g.droppedLines.Add(1)
		g.droppedBytes.Add(int64(n))
		switch {
		case first:
			g.log.Warn("guest output over its limit: dropping lines until it slows down", "plugin", g.plugin,
				"lines_per_s", g.limits.LinesPerSecond, "bytes_per_s", g.limits.BytesPerSecond)
		case still:
			g.log.Warn("guest output still over its limit", "plugin", g.plugin, "dropped_lines", lines, "dropped_bytes", bytes)
		}
		return false
	}
	g.lines--
	g.bytes -= float64(n)
	ended := g.dropping && now.Sub(g.lastDrop) >= time.Second
	lines, bytes := g.runLines, g.runBytes
	if ended {
		g.dropping, g.runLines, g.runBytes = false, 0, 0
	}
	g.mu.Unlock()
	if ended {
		g.log.Warn("guest output within its limit again", "plugin", g.plugin, "dropped_lines", lines, "dropped_bytes", bytes)
	}
	return true
}

// cutLine returns line cut to at most max bytes on a character boundary,
// and whether it was cut.
func cutLine(line []byte, max int) ([]byte, bool) {
	if len(line) <= max {
		return line, false
	}
	n := max
	for n > 0 && !utf8.RuneStart(line[n]) {
		n--
	}
	return line[:n], true
}
