// Package logx holds the host's one logger default: a nil *slog.Logger in
// a Config discards, and OrDiscard is where that is decided, so that no
// package writes its own discarding logger (nine did) and every part
// reads a non-nil logger once its Config is resolved.
package logx

import "log/slog"

// OrDiscard returns l, or a logger that discards everything when l is
// nil.
func OrDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
