package statestore

import (
	"errors"
	"strconv"
)

// The RESP3 subset the protocol uses. A request is an array of bulk
// strings, `*<n>\r\n` then n times `$<len>\r\n<bytes>\r\n`, and nothing
// after it; keys and values are any bytes (NUL, CR and LF included). A
// reply is one of: `+OK\r\n`, `:<n>\r\n`, `$<len>\r\n<bytes>\r\n`,
// `$-1\r\n` (a GET that finds nothing) and `-ERR <message>\r\n`.

// maxArgs bounds a request's array: the longest a client sends is SET
// with a condition and PX (6); a few unknown options more still get
// their "syntax error", and a larger array is refused before anything is
// allocated for it.
const maxArgs = 16

// maxDigits bounds the digits of a length: a bulk string is at most the
// payload's size, which MQTT bounds below 2^28.
const maxDigits = 10

// errSyntaxRESP is a payload that is not an array of bulk strings.
var errSyntaxRESP = errors.New("not a RESP3 array of bulk strings")

// parseRequest reads a request's array. The arguments are slices of b
// (no copy): the payload's bytes, bounded by its size.
func parseRequest(b []byte) ([][]byte, error) {
	if len(b) == 0 || b[0] != '*' {
		return nil, errSyntaxRESP
	}
	n, rest, ok := readLength(b[1:])
	if !ok || n < 1 || n > maxArgs {
		return nil, errSyntaxRESP
	}
	args := make([][]byte, 0, n)
	for range n {
		if len(rest) == 0 || rest[0] != '$' {
			return nil, errSyntaxRESP
		}
		var l int
		if l, rest, ok = readLength(rest[1:]); !ok || l > len(rest)-2 {
			return nil, errSyntaxRESP
		}
		if rest[l] != '\r' || rest[l+1] != '\n' {
			return nil, errSyntaxRESP
		}
		args = append(args, rest[:l:l])
		rest = rest[l+2:]
	}
	if len(rest) != 0 {
		return nil, errSyntaxRESP
	}
	return args, nil
}

// readLength reads 1 to maxDigits decimal digits and the CRLF after them.
func readLength(b []byte) (n int, rest []byte, ok bool) {
	i := 0
	for ; i < len(b) && i <= maxDigits && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
	}
	if i == 0 || i > maxDigits || len(b) < i+2 || b[i] != '\r' || b[i+1] != '\n' {
		return 0, nil, false
	}
	return n, b[i+2:], true
}

// The replies.
var (
	replyOK      = []byte("+OK\r\n")
	replyNil     = []byte("$-1\r\n")
	replyApplied = []byte(":1\r\n")
	replyNone    = []byte(":0\r\n")
	replyNotDone = []byte(":-1\r\n")
)

// bulk is a blob string reply: a GET's value.
func bulk(v []byte) []byte {
	out := make([]byte, 0, len(v)+16)
	out = append(out, '$')
	out = strconv.AppendInt(out, int64(len(v)), 10)
	out = append(out, '\r', '\n')
	out = append(out, v...)
	return append(out, '\r', '\n')
}

// errorReply is `-ERR msg\r\n`; msg is one line (cleanLine).
func errorReply(msg string) []byte {
	return append(append([]byte("-ERR "), cleanLine(msg, maxErrorBytes)...), '\r', '\n')
}

// maxErrorBytes bounds an error reply's message.
const maxErrorBytes = 512

// cleanLine is s with control characters made spaces, cut to max bytes:
// a message of an error reply is one line (the clients read up to its
// CRLF), and a key quoted in it may hold anything.
func cleanLine(s string, max int) string {
	b := []byte(s)
	if len(b) > max {
		b = b[:max]
	}
	for i, c := range b {
		if c < 0x20 || c == 0x7f {
			b[i] = ' '
		}
	}
	return string(b)
}

// The notifications' payloads (KEYNOTIFY): a key set to a value, a key
// deleted (DEL, a VDEL that matched, its expiry).
var notifyDelete = []byte("*2\r\n$6\r\nNOTIFY\r\n$6\r\nDELETE\r\n")

func notifySet(v []byte) []byte {
	const head = "*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n"
	return append([]byte(head), bulk(v)...)
}
