package broker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/cmdhost/cmdhost/internal/ratelog"
)

// mochi logs through the slog.Logger the broker gives it (newServer), and
// it logs as if its clients were trusted: a PUBLISH a hook refuses at
// ERROR with the whole packet (slog.Any("packet", pk): the payload as
// decimal bytes, every user property in clear, an admin token included),
// a will message it cannot parse with the whole will, and a warning for
// every connection that ends with an error (each refused CONNECT among
// them), none of it rate-limited. One user sending requests it may not
// send turned 25 MB of requests into 90 MB of log and grew the host by
// 180 MB while the lines were formatted.
//
// mochiLog is the handler of that logger, between mochi and the host's:
//
//   - What a client sent never reaches the host's handler: a packet or a
//     will is replaced by what it is (type, topic cut to logMax, payload
//     size), never its payload or user properties, and any other value
//     of a type the handler does not know by its type's name. This is done
//     on the record's attributes before anything formats them: a value is
//     told by its slog Kind and Go type, so a refused 8 MiB publish costs
//     a summary, not the formatting of 8 MiB. Strings (a client id may be
//     64 KiB) are cut to logMax.
//   - mochi's warnings and errors are rate-limited: one line a second for
//     each message, the next one saying how many were left out
//     (lines_not_logged). mochi's line for a CONNECT or a PUBLISH the
//     guard refused is dropped: the guard logged the refusal itself,
//     saying who and why.
//   - mochi's life cycle (info: "added hook", "attached listener"...) is
//     logged at debug, and so is a connection that ends with EOF (mochi
//     warns with an empty message whenever a client goes without a
//     DISCONNECT, such as mosquitto_rr after its one call): "client
//     connection ended".
//
// The handlers derived by WithAttrs and WithGroup (mochi makes one per
// hook and per listener) share one set of limits.
type mochiLog struct {
	next  slog.Handler
	lines *lineLimits
}

func newMochiLog(next slog.Handler) mochiLog {
	return mochiLog{next: next, lines: &lineLimits{byMessage: map[string]*ratelog.Limiter{},
		others: ratelog.Limiter{Interval: mochiLineInterval}}}
}

func (h mochiLog) Enabled(ctx context.Context, level slog.Level) bool {
	if level == slog.LevelInfo {
		level = slog.LevelDebug // Handle lowers it
	}
	return h.next.Enabled(ctx, level)
}

func (h mochiLog) Handle(ctx context.Context, r slog.Record) error {
	level, msg := r.Level, r.Message
	switch {
	case level == slog.LevelInfo:
		level = slog.LevelDebug
	case loggedByGuard(r):
		return nil
	case level == slog.LevelWarn && msg == "" && errors.Is(recordError(r), io.EOF):
		level, msg = slog.LevelDebug, "client connection ended"
	}
	if level != r.Level && !h.next.Enabled(ctx, level) {
		return nil
	}
	leftOut := 0
	if level >= slog.LevelWarn {
		ok, n := h.lines.allow(msg, r.Time)
		if !ok {
			return nil
		}
		leftOut = n
	}
	out := slog.NewRecord(r.Time, level, msg, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(scrubAttr(a))
		return true
	})
	if leftOut > 0 {
		out.AddAttrs(slog.Int("lines_not_logged", leftOut))
	}
	return h.next.Handle(ctx, out)
}

func (h mochiLog) WithAttrs(as []slog.Attr) slog.Handler {
	scrubbed := make([]slog.Attr, len(as))
	for i, a := range as {
		scrubbed[i] = scrubAttr(a)
	}
	return mochiLog{next: h.next.WithAttrs(scrubbed), lines: h.lines}
}

func (h mochiLog) WithGroup(name string) slog.Handler {
	return mochiLog{next: h.next.WithGroup(name), lines: h.lines}
}

// loggedByGuard reports whether r is mochi's line for a refusal the guard
// logged itself, saying who and why: a CONNECT it refused (the warning at
// the end of the connection), a PUBLISH it refused (the error of OnPublish).
func loggedByGuard(r slog.Record) bool {
	switch {
	case r.Level == slog.LevelWarn && r.Message == "":
		var refused *refusedError
		return errors.As(recordError(r), &refused)
	case r.Message == "publish packet error":
		return recordString(r, "hook") == (*guard)(nil).ID()
	}
	return false
}

// recordString returns r's string attribute key, "" if it has none.
func recordString(r slog.Record, key string) string {
	s := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			s = a.Value.String()
			return false
		}
		return true
	})
	return s
}

// recordError returns r's "error" attribute, nil if it has none.
func recordError(r slog.Record) error {
	var err error
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "error" {
			err, _ = a.Value.Any().(error)
			return false
		}
		return true
	})
	return err
}

// scrubAttr returns a without anything a client sent but a packet's
// shape, a string cut to logMax. It formats nothing.
func scrubAttr(a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		if s := a.Value.String(); len(s) > logMax {
			return slog.String(a.Key, logText(s))
		}
	case slog.KindGroup:
		group := a.Value.Group()
		scrubbed := make([]slog.Attr, len(group))
		for i, g := range group {
			scrubbed[i] = scrubAttr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(scrubbed...)}
	case slog.KindAny, slog.KindLogValuer: // not resolved: a LogValue could format anything
		return slog.Attr{Key: a.Key, Value: summary(a.Value.Any())}
	}
	return a
}

// summary is what of v may be logged: an error as it is (mochi's say what
// went wrong, not what was sent), a packet or a will by its shape, any
// other value by its type.
func summary(v any) slog.Value {
	switch v := v.(type) {
	case nil:
		return slog.AnyValue(nil)
	case error:
		return slog.AnyValue(v)
	case packets.Packet:
		return packetShape(&v)
	case *packets.Packet:
		if v == nil {
			return slog.AnyValue(nil)
		}
		return packetShape(v)
	case mqtt.Will:
		return slog.GroupValue(slog.String("topic", logText(v.TopicName)), slog.Int("payload_bytes", len(v.Payload)),
			slog.Int("user_properties", len(v.User)))
	default:
		return slog.StringValue(fmt.Sprintf("(%T not logged)", v))
	}
}

// packetShape is a packet's type, QoS, id, topic (cut) and sizes.
func packetShape(pk *packets.Packet) slog.Value {
	return slog.GroupValue(slog.String("type", packets.PacketNames[pk.FixedHeader.Type]),
		slog.Int("qos", int(pk.FixedHeader.Qos)), slog.Int("id", int(pk.PacketID)),
		slog.String("topic", logText(pk.TopicName)), slog.Int("payload_bytes", len(pk.Payload)),
		slog.Int("user_properties", len(pk.Properties.User)))
}

// mochiLineInterval is how often one of mochi's warnings or errors (by
// message) is logged at most.
const mochiLineInterval = time.Second

// maxLineKinds bounds the messages limited one by one; mochi's are
// constants, fewer than it, and any beyond share one limit.
const maxLineKinds = 64

// lineLimits rate-limits lines by message. Safe for concurrent use.
type lineLimits struct {
	mu        sync.Mutex
	byMessage map[string]*ratelog.Limiter
	others    ratelog.Limiter
}

// allow reports whether a line with msg at now is logged, and how many
// lines with it were left out since the last one logged.
func (l *lineLimits) allow(msg string, now time.Time) (bool, int) {
	l.mu.Lock()
	lim, ok := l.byMessage[msg]
	if !ok {
		if len(l.byMessage) < maxLineKinds {
			lim = &ratelog.Limiter{Interval: mochiLineInterval}
			l.byMessage[msg] = lim
		} else {
			lim = &l.others
		}
	}
	l.mu.Unlock()
	return lim.Allow(now)
}
