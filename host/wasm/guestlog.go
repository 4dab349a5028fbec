package wasm

import (
	"bytes"
	"context"
	"log/slog"
	"sync/atomic"
)

// guestOutput turns a guest's stdout or stderr into host log lines tagged
// with the plugin, and notices the Go runtime's out-of-memory message,
// which is the only sign that a trap was an out-of-memory one. One instance
// writes to it at a time.
type guestOutput struct {
	log    *slog.Logger
	plugin string
	stream string
	level  slog.Level
	oom    *atomic.Bool
	line   []byte
}

// maxOutputLine bounds a buffered line; longer ones are split.
const maxOutputLine = 4 << 10

var oomMarker = []byte("out of memory")

func (w *guestOutput) Write(p []byte) (int, error) {
	if w.oom != nil && bytes.Contains(p, oomMarker) {
		w.oom.Store(true)
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.line = append(w.line, p...)
			if len(w.line) >= maxOutputLine {
				w.flush()
			}
			break
		}
		w.line = append(w.line, p[:i]...)
		w.flush()
		p = p[i+1:]
	}
	return n, nil
}

func (w *guestOutput) flush() {
	if len(w.line) == 0 {
		return
	}
	w.log.Log(context.Background(), w.level, string(w.line), "plugin", w.plugin, "source", w.stream)
	w.line = w.line[:0]
}
