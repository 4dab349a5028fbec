package rpc

import (
	"encoding/base64"
	"slices"
	"strconv"
	"unicode/utf8"
)

// appendStoredReply appends r as encoding/json encodes storedReply, byte
// for byte (replyjson_test.go checks it), without reflection: a
// non-idempotent request's outcome is encoded once per request, before
// its reply, on the request's path. Decoding (decodeReply) stays with
// encoding/json: it runs only for a request answered from the store.
func appendStoredReply(b []byte, r *reply) []byte {
	b = append(b, '{')
	first := true
	field := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
	}
	str := func(name, v string) {
		if v != "" {
			field(name)
			b = appendJSONString(b, v)
		}
	}
	strMap := func(name string, m map[string]string) {
		if len(m) == 0 {
			return
		}
		field(name)
		b = append(b, '{')
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, m[k])
		}
		b = append(b, '}')
	}
	if r.none {
		field("none")
		b = append(b, "true"...)
	}
	field("status")
	b = strconv.AppendUint(b, uint64(r.status), 10)
	if r.appError {
		field("appError")
		b = append(b, "true"...)
	}
	str("message", r.message)
	str("propName", r.propName)
	str("propValue", r.propValue)
	strMap("extra", r.extra)
	if len(r.payload) > 0 {
		field("payload")
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, r.payload)
		b = append(b, '"')
	}
	str("contentType", r.contentType)
	if r.format != 0 {
		field("format")
		b = strconv.AppendUint(b, uint64(r.format), 10)
	}
	strMap("metadata", r.metadata)
	if r.ttl != nil {
		field("ttl")
		b = strconv.AppendInt(b, int64(*r.ttl), 10)
	}
	if r.raw {
		field("raw")
		b = append(b, "true"...)
	}
	str("ts", r.ts)
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes a string:
// control characters, <, > and & as \u escapes (HTML-safe), an invalid
// UTF-8 byte as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
