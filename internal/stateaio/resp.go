package stateaio

import (
	"bytes"
	"errors"
	"strconv"
)

// The client's half of the protocol's RESP3 subset (the server's is
// package statestore's): a request is an array of bulk strings; a reply
// is `+OK`, `:<n>`, `$<len>` and that many bytes, `$-1`, or `-ERR
// <message>`, each ended by CRLF.

// encodeRequest is a request's array of bulk strings.
func encodeRequest(args ...[]byte) []byte {
	n := 16
	for _, a := range args {
		n += len(a) + 16
	}
	b := make([]byte, 0, n)
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// reply is a reply read.
type reply struct {
	kind byte   // '+', '-', ':' or '$'
	text string // '+': the line; '-': the message, without "ERR "
	n    int64  // ':': the number; '$': the length, -1 for none
	data []byte // '$': the value
}

// errReply is a payload that is not one of the replies.
var errReply = errors.New("not a reply of the state store protocol")

// parseReply reads a reply: one of its forms and nothing after it.
func parseReply(b []byte) (reply, error) {
	if len(b) < 3 {
		return reply{}, errReply
	}
	r := reply{kind: b[0]}
	line, rest, ok := bytes.Cut(b[1:], []byte("\r\n"))
	if !ok {
		return reply{}, errReply
	}
	switch r.kind {
	case '+', '-':
		if len(rest) != 0 {
			return reply{}, errReply
		}
		r.text = string(line)
		if r.kind == '-' {
			r.text = string(bytes.TrimPrefix(line, []byte("ERR ")))
		}
	case ':':
		n, err := strconv.ParseInt(string(line), 10, 64)
		if err != nil || len(rest) != 0 {
			return reply{}, errReply
		}
		r.n = n
	case '$':
		n, err := strconv.ParseInt(string(line), 10, 64)
		switch {
		case err != nil || n < -1:
			return reply{}, errReply
		case n == -1:
			if len(rest) != 0 {
				return reply{}, errReply
			}
		case int64(len(rest)) != n+2 || rest[n] != '\r' || rest[n+1] != '\n':
			return reply{}, errReply
		default:
			r.data = rest[:n:n]
		}
		r.n = n
	default:
		return reply{}, errReply
	}
	return r, nil
}

// String shows a reply in an error: its kind and what it says, cut.
func (r reply) String() string {
	switch r.kind {
	case '+', '-':
		return string(r.kind) + quote([]byte(r.text))
	case ':':
		return ":" + strconv.FormatInt(r.n, 10)
	}
	return "$" + strconv.FormatInt(r.n, 10)
}

// quote shows bytes in an error: quoted, cut at 64.
func quote(b []byte) string {
	const max = 64
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "…"
	}
	return strconv.Quote(string(b))
}
