package wasm

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"
)

// What a guest prints when it fails, told apart from its ordinary output.
//
// A Go guest that panics or dies (out of memory, a fatal error) prints the
// reason and then every goroutine's stack to stderr before it traps; a
// Rust guest prints "panicked at" and a C guest "Assertion failed" before
// it aborts. Logged a record per line, one failed call of a Go guest made
// ~90 WARN records and its reason reached the caller only as "wasm error:
// unreachable". So each instance watches what its guest writes during a
// call (callOutput): from a line on stderr that starts a failure's output
// (failureStart) on, the call's stderr lines are held, not logged; when
// the call fails they become ONE log record (the first line its message,
// the rest an "output" attribute) and the first line goes into the call's
// error, whose first line is what the caller's 500 quotes. When the call
// does not fail after all, the held lines are logged as they were written,
// a record each. Ordinary output is never held. Held lines are bounded
// (maxHeldOutput) and pass the plugin's output gate like any other
// output: the whole record is charged as one line of its bytes.
//
// The first line at warning level or above that the guest writes during a
// call, on stderr or with the log function, is kept too: a guest whose
// describe returns non-zero has said why there (the Go SDK logs "sdk: no
// commands registered …"), and the load error quotes it.

// maxHeldOutput bounds what is held of a failing call's output, in
// bytes; later lines are dropped and counted as the output gate's drops.
// A Go guest's panic with its few goroutines is 1–8 KiB.
const maxHeldOutput = 32 << 10

// maxGuestMessage bounds the guest's line that an error quotes, in bytes.
const maxGuestMessage = 256

// failureMarks start a guest's failure output at the start of a stderr
// line: Go's panic, fatal error and runtime diagnostics (the out-of-memory
// one comes before "fatal error: out of memory" and says what did not
// fit), and C's assert. Rust's panic line starts with the thread's name
// ("thread '<unnamed>' panicked at"), so it is matched anywhere in the
// line (rustMark).
var failureMarks = [][]byte{[]byte("panic: "), []byte("fatal error: "), []byte("runtime: "), []byte("Assertion failed")}

var rustMark = []byte("' panicked at ")

// failureStart reports whether line starts a guest's failure output.
func failureStart(line []byte) bool {
	for _, m := range failureMarks {
		if bytes.HasPrefix(line, m) {
			return true
		}
	}
	return bytes.HasPrefix(line, []byte("thread '")) && bytes.Contains(line, rustMark)
}

// callOutput is what an instance's guest wrote during one call that the
// call's end needs. The instance runs one call at a time and its guest
// writes from the goroutine that runs the call, so it needs no lock.
type callOutput struct {
	failing   bool       // a failure's output began: stderr lines are held
	level     slog.Level // of the held lines (stderr's)
	held      []string
	heldBytes int
	dropped   int    // lines dropped over maxHeldOutput
	reason    string // the first line at warning level or above
}

// line takes one complete stderr or stdout line before it is logged and
// says whether it is held (then the caller does not log it).
func (c *callOutput) line(level slog.Level, stream string, line []byte, gate *outputGate) bool {
	c.note(level, line)
	if stream != "stderr" {
		return false
	}
	if !c.failing && failureStart(line) {
		c.failing, c.level = true, level
	}
	if !c.failing {
		return false
	}
	// line is at most MaxLine+1 bytes (guestOutput.add); it is cut and
	// marked when logged, by end or by the gate.
	if c.heldBytes+len(line)+1 > maxHeldOutput {
		c.dropped++
		gate.droppedLines.Add(1)
		gate.droppedBytes.Add(int64(len(line)))
		return true
	}
	c.held = append(c.held, string(line))
	c.heldBytes += len(line) + 1
	return true
}

// note keeps the first line at warning level or above.
func (c *callOutput) note(level slog.Level, line []byte) {
	if c.reason == "" && level >= slog.LevelWarn && len(bytes.TrimSpace(line)) > 0 {
		c.reason = guestMessage(string(line[:min(len(line), 4*maxGuestMessage)]))
	}
}

// end closes the call (or the instantiation) named what, which failed or
// not: the held output is logged, as one record when it failed, and the
// state is cleared for the next call. It returns the guest's failure
// message (empty when it printed none, or did not fail) and the reason
// kept by note.
func (c *callOutput) end(failed bool, gate *outputGate, what string) (message, reason string) {
	held, dropped, level := c.held, c.dropped, c.level
	reason = c.reason
	*c = callOutput{} // an idle instance keeps nothing of the call
	if len(held) == 0 {
		return "", reason
	}
	if !failed {
		for _, l := range held {
			gate.emit(level, "stderr", []byte(l))
		}
		return "", reason
	}
	for i, l := range held {
		if b, cut := cutLine([]byte(l), gate.limits.MaxLine); cut {
			held[i] = string(b) + cutMark
		}
	}
	message = held[0]
	if strings.HasSuffix(message, ":") && len(held) > 1 {
		// Rust since 1.73: "thread '…' panicked at src/lib.rs:5:9:",
		// then the message on a line of its own.
		message += " " + held[1]
	}
	rest := strings.Join(held[1:], "\n")
	if dropped > 0 {
		rest += fmt.Sprintf("\n…[%d more lines dropped]", dropped)
	}
	gate.emitBlock(level, "stderr", what, held[0], rest)
	return guestMessage(message), reason
}

// guestMessage returns s as one clean line of at most maxGuestMessage
// bytes: each run of whitespace controls becomes a space, other controls
// and bytes that are not UTF-8 become U+FFFD, and a longer line is cut on
// a character boundary and ends in "…". An error that quotes it may go
// into a reply: brokers drop a client that sends controls or broken UTF-8.
func guestMessage(s string) string {
	s = s[:min(len(s), 4*maxGuestMessage)] // a cleaned character is at most 3 bytes
	var b strings.Builder
	b.Grow(len(s))
	space := false // the last written is a space standing for controls
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				b.WriteRune(utf8.RuneError)
				space = false
				continue
			}
			b.WriteRune(r)
		case r == '\t', r == '\n', r == '\v', r == '\f', r == '\r', r == 0x85:
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		case r < 0x20, r >= 0x7f && r <= 0x9f, r >= 0xfdd0 && r <= 0xfdef, r&0xfffe == 0xfffe:
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
		space = false
	}
	c := strings.TrimSpace(b.String())
	if len(c) <= maxGuestMessage {
		return c
	}
	n := maxGuestMessage - len("…")
	for n > 0 && !utf8.RuneStart(c[n]) {
		n--
	}
	return c[:n] + "…"
}

// guestFailure is a failed call's error led by what the guest printed
// when it failed: its first line is the guest's, the rest wazero's (the
// trap and its wasm stack trace).
type guestFailure struct {
	said string
	err  error
}

func (g *guestFailure) Error() string { return g.said + "\n" + g.err.Error() }
func (g *guestFailure) Unwrap() error { return g.err }
