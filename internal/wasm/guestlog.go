package wasm

import (
	"bytes"
	"log/slog"
	"sync/atomic"
)

// guestOutput turns a guest's stdout or stderr into host log lines tagged
// with the plugin, through the plugin's output gate (outputlimit.go), and
// notices the Go runtime's out-of-memory message, which is the only sign
// that a trap was an out-of-memory one: it looks at everything written,
// dropped lines included. One instance writes to it at a time. When call
// is set, each complete line goes through it first: the output of a call
// that is failing is held there and logged when the call ends
// (trapout.go).
type guestOutput struct {
	gate   *outputGate
	stream string
	level  slog.Level
	oom    *atomic.Bool
	call   *callOutput
	line   []byte
}

var oomMarker = []byte("out of memory")

func (w *guestOutput) Write(p []byte) (int, error) {
	if w.oom != nil && bytes.Contains(p, oomMarker) {
		w.oom.Store(true)
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.add(p)
			break
		}
		w.add(p[:i])
		w.flush()
		p = p[i+1:]
	}
	return n, nil
}

// add appends to the current line what fits in MaxLine (plus one byte, so
// that the gate sees the line is too long and marks the cut) and discards
// the rest, counted as dropped: a guest writing without newlines never
// grows the buffer.
func (w *guestOutput) add(p []byte) {
	room := max(w.gate.limits.MaxLine+1-len(w.line), 0)
	if room < len(p) {
		w.gate.droppedBytes.Add(int64(len(p) - room))
		p = p[:room]
	}
	w.line = append(w.line, p...)
}

func (w *guestOutput) flush() {
	if len(w.line) == 0 {
		return
	}
	if w.call != nil && w.call.line(w.level, w.stream, w.line, w.gate) {
		w.line = w.line[:0]
		return
	}
	w.gate.emit(w.level, w.stream, w.line)
	w.line = w.line[:0]
}
