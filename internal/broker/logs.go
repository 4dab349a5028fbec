package broker

import (
	"context"
	"errors"
	"io"
	"log/slog"
)

// quietEOF is the handler of the logger mochi gets. mochi warns, with an
// empty message, whenever a client's connection ends with EOF (a client
// such as mosquitto_rr that closes its socket after its one call, or any
// client that goes away without a DISCONNECT): nothing for an operator to
// act on, once per call. Those records are logged at debug, as "client
// connection ended". mochi's own info records are its life cycle ("added
// hook", "attached listener", "stopping hook": eleven lines a start and a
// stop that say nothing the host's "embedded broker listening" does not):
// they are logged at debug too. Everything else passes unchanged.
type quietEOF struct{ slog.Handler }

func (h quietEOF) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo {
		if !h.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	if r.Level == slog.LevelWarn && r.Message == "" && endedWithEOF(r) {
		if !h.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		quiet := slog.NewRecord(r.Time, slog.LevelDebug, "client connection ended", r.PC)
		r.Attrs(func(a slog.Attr) bool { quiet.AddAttrs(a); return true })
		r = quiet
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietEOF) WithAttrs(as []slog.Attr) slog.Handler { return quietEOF{h.Handler.WithAttrs(as)} }
func (h quietEOF) WithGroup(name string) slog.Handler    { return quietEOF{h.Handler.WithGroup(name)} }

// endedWithEOF reports whether r's "error" is (or wraps) io.EOF.
func endedWithEOF(r slog.Record) bool {
	eof := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "error" {
			err, ok := a.Value.Any().(error)
			eof = ok && errors.Is(err, io.EOF)
			return false
		}
		return true
	})
	return eof
}
