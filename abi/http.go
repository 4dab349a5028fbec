package abi

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Outbound HTTP (FnHTTPRequest): a handler sends an HTTP request to a host
// its operator file grants and gets the response, or a typed reason why
// there is none. See ABI.md section 19.

// HTTPRequest tags.
const (
	hrqMethod  = 1 // string; absent = GET
	hrqURL     = 2 // string, required
	hrqHeader  = 3 // header entry, repeated (a name may repeat)
	hrqBody    = 4 // bytes
	hrqTimeout = 5 // ms; absent or 0 = the grant's
)

// HTTPResult tags.
const (
	hrsFailure = 1 // u8: HTTPReason; absent = none
	hrsMessage = 2 // string
	hrsStatus  = 3 // u32
	hrsHeader  = 4 // header entry, repeated
	hrsBody    = 5 // bytes
	hrsURL     = 6 // string: the URL that answered (after redirects)
)

// Bounds of an HTTPRequest, whatever the grant.
const (
	// MaxHTTPURL bounds a request's URL in bytes.
	MaxHTTPURL = 8 << 10
	// MaxHTTPMethod bounds a request's method in bytes.
	MaxHTTPMethod = 32
	// MaxHTTPHeaders bounds a request's header values (a name with two
	// values counts two).
	MaxHTTPHeaders = 64
	// MaxHTTPHeaderBytes bounds a request's header names and values
	// together.
	MaxHTTPHeaderBytes = 64 << 10
)

// IdempotencyKeyHeader is the header the host adds to the requests of a
// non-idempotent command (ABI.md section 19).
const IdempotencyKeyHeader = "Idempotency-Key"

// Header is an HTTP header: canonical names (CanonicalHeaderKey) to their
// values in order. It has net/http's Header's shape, so each converts to
// the other: http.Header(h), abi.Header(hh).
type Header map[string][]string

// Get returns the first value of name, "" when there is none.
func (h Header) Get(name string) string {
	if v := h[CanonicalHeaderKey(name)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Values returns the values of name.
func (h Header) Values(name string) []string { return h[CanonicalHeaderKey(name)] }

// Set replaces the values of name by value.
func (h Header) Set(name, value string) { h[CanonicalHeaderKey(name)] = []string{value} }

// Add appends value to the values of name.
func (h Header) Add(name, value string) {
	k := CanonicalHeaderKey(name)
	h[k] = append(h[k], value)
}

// Del removes name.
func (h Header) Del(name string) { delete(h, CanonicalHeaderKey(name)) }

// CanonicalHeaderKey returns name as net/http writes it: the first letter
// and each letter after a '-' upper case, the rest lower case. A name that
// is not a token (RFC 9110) is returned as it is, as net/http does.
func CanonicalHeaderKey(name string) string {
	if !isToken(name) {
		return name
	}
	upper, changed := true, false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (upper && 'a' <= c && c <= 'z') || (!upper && 'A' <= c && c <= 'Z') {
			changed = true
			break
		}
		upper = c == '-'
	}
	if !changed {
		return name
	}
	b := []byte(name)
	upper = true
	for i, c := range b {
		switch {
		case upper && 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
		case !upper && 'A' <= c && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
		upper = c == '-'
	}
	return string(b)
}

// HTTPRequest is what a guest hands to FnHTTPRequest.
type HTTPRequest struct {
	// Method is the request's method; "" is GET. CONNECT and TRACE are
	// refused.
	Method string
	// URL is an absolute http or https URL: the grant decides which.
	URL string
	// Header holds the request's headers. The host sets Host,
	// Content-Length, Transfer-Encoding and the connection's headers
	// itself (a request that names one is invalid), and adds
	// Idempotency-Key for a non-idempotent command when the header is not
	// set.
	Header Header
	Body   []byte
	// Timeout bounds the request, redirects and reading the response
	// included; 0 is the grant's timeout, and a longer one is cut to it.
	// The call's deadline always bounds it too. Sent in whole
	// milliseconds, rounded up.
	Timeout time.Duration
}

// HTTPResponse is the server's answer.
type HTTPResponse struct {
	// Status is the response's status code (a 404 or a 500 is an answer,
	// not a failure).
	Status int
	Header Header
	Body   []byte
	// URL is the URL that answered: the request's, or the last redirect's.
	URL string
}

// HTTPResult is what FnHTTPRequest hands back: the response, or, when
// Failure is not HTTPNone, why there is none.
type HTTPResult struct {
	Failure HTTPReason
	Message string
	HTTPResponse
}

// Err returns the result's failure as an *HTTPError, or nil.
func (r *HTTPResult) Err() error {
	if r.Failure == HTTPNone {
		return nil
	}
	return &HTTPError{Reason: r.Failure, Message: r.Message}
}

// HTTPReason says why an HTTP request got no response.
type HTTPReason uint8

// HTTP failure reasons.
const (
	HTTPNone HTTPReason = 0
	// HTTPInvalid: the request breaks the rules (HTTPRequest.Validate),
	// or its URL does not parse.
	HTTPInvalid HTTPReason = 1
	// HTTPDenied: the operator file does not grant it: the scheme, host,
	// port or method; an address the host refuses (loopback, private,
	// link-local, multicast, unspecified) that the grant does not name; a
	// redirect to any of these.
	HTTPDenied HTTPReason = 2
	// HTTPDNS: the host name does not resolve.
	HTTPDNS HTTPReason = 3
	// HTTPConnect: no connection (refused, unreachable, reset).
	HTTPConnect HTTPReason = 4
	// HTTPTLS: the TLS handshake failed (the server's certificate is not
	// trusted or not for the name, no common version).
	HTTPTLS HTTPReason = 5
	// HTTPTimeout: the request's timeout (or the grant's) passed before
	// the response was read.
	HTTPTimeout HTTPReason = 6
	// HTTPTooLarge: the request's body is over the grant's bound, or the
	// response's body (read until the bound, then cut) or headers are.
	HTTPTooLarge HTTPReason = 7
	// HTTPLimit: over the call's bound of requests or the plugin's rate.
	HTTPLimit HTTPReason = 8
	// HTTPRedirects: more redirects than the host follows.
	HTTPRedirects HTTPReason = 9
	// HTTPUnavailable: the host does not offer outbound HTTP.
	HTTPUnavailable HTTPReason = 10
	// HTTPFailed: the exchange failed otherwise (a malformed response, a
	// connection closed in the middle of the body).
	HTTPFailed HTTPReason = 11
)

var httpReasonNames = [...]string{"none", "invalid", "denied", "dns", "connect", "tls", "timeout", "too_large",
	"limit", "redirects", "unavailable", "failed"}

func (r HTTPReason) String() string {
	if int(r) < len(httpReasonNames) {
		return httpReasonNames[r]
	}
	return fmt.Sprintf("http_reason(%d)", uint8(r))
}

// HTTPError is an HTTP request that got no response. errors.Is matches
// it with an *HTTPError of the same Reason and no Message, so that
// sentinels such as &HTTPError{Reason: HTTPDenied} match every denial.
type HTTPError struct {
	Reason  HTTPReason
	Message string
}

func (e *HTTPError) Error() string {
	if e.Message == "" {
		return "http: " + e.Reason.String()
	}
	return "http: " + e.Reason.String() + ": " + e.Message
}

// Is reports whether target is an *HTTPError of e's Reason without a
// Message.
func (e *HTTPError) Is(target error) bool {
	t, ok := target.(*HTTPError)
	return ok && t.Message == "" && t.Reason == e.Reason
}

// AppendHTTPRequest appends the encoding of r to dst.
func AppendHTTPRequest(dst []byte, r *HTTPRequest) []byte {
	if r.Method != "" {
		dst = appendString(dst, hrqMethod, r.Method)
	}
	dst = appendString(dst, hrqURL, r.URL)
	dst = appendHeader(dst, hrqHeader, r.Header)
	if len(r.Body) > 0 {
		dst = appendRecord(dst, hrqBody, r.Body)
	}
	if r.Timeout > 0 {
		dst = appendI64(dst, hrqTimeout, ceilMillis(r.Timeout))
	}
	return dst
}

// DecodeHTTPRequest decodes an encoded HTTPRequest and checks it with
// HTTPRequest.Validate. The result shares no memory with buf.
func DecodeHTTPRequest(buf []byte) (*HTTPRequest, error) {
	r := &HTTPRequest{}
	rd := reader{buf: buf, singular: bits(hrqMethod, hrqURL, hrqBody, hrqTimeout)}
	headers := 0
	for {
		tag, v, ok, err := rd.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch tag {
		case hrqMethod:
			r.Method = string(v)
		case hrqURL:
			r.URL = string(v)
		case hrqHeader:
			if headers++; headers > MaxHTTPHeaders {
				return nil, malformed("more than %d header values", MaxHTTPHeaders)
			}
			err = headerEntry(tag, v, &r.Header, copyString)
		case hrqBody:
			r.Body = copyBytes(v)
		case hrqTimeout:
			var ms int64
			ms, err = durationMillis(tag, v)
			r.Timeout = time.Duration(ms) * time.Millisecond
		}
		if err != nil {
			return nil, err
		}
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// reservedRequestHeaders are the headers the host sets itself.
var reservedRequestHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
	"Proxy-Connection", "Te", "Trailer", "Upgrade"}

// Validate checks what any host refuses in an HTTPRequest, whatever its
// grants: a method that is not a token (or CONNECT, TRACE), a URL that is
// empty, too long or holds spaces or control characters, header names
// that are not tokens or that the host sets itself, values with control
// characters, too many headers. Whether the URL is granted is the
// host's to say.
func (r *HTTPRequest) Validate() error {
	switch m := r.Method; {
	case m != "" && (len(m) > MaxHTTPMethod || !isToken(m)):
		return malformed("method %.40q is not a token of at most %d bytes", m, MaxHTTPMethod)
	case m == "CONNECT" || m == "TRACE":
		return malformed("method %s is not allowed", m)
	case r.URL == "" || len(r.URL) > MaxHTTPURL:
		return malformed("a URL is 1 to %d bytes, not %d", MaxHTTPURL, len(r.URL))
	case !cleanString(r.URL) || strings.ContainsRune(r.URL, ' '):
		return malformed("URL %.64q: UTF-8 without spaces or control characters", r.URL)
	case r.Timeout < 0:
		return malformed("a negative timeout")
	}
	values, size := 0, 0
	for name, vs := range r.Header {
		switch {
		case !isToken(name):
			return malformed("header name %.64q is not a token", name)
		case containsFold(reservedRequestHeaders, name) || strings.HasPrefix(strings.ToLower(name), "proxy-"):
			return malformed("header %s: the host sets it", name)
		}
		for _, v := range vs {
			if !headerValue(v) {
				return malformed("header %s: a value with a control character", name)
			}
			values++
			size += len(name) + len(v)
		}
	}
	switch {
	case values > MaxHTTPHeaders:
		return malformed("%d header values, more than %d", values, MaxHTTPHeaders)
	case size > MaxHTTPHeaderBytes:
		return malformed("%d bytes of headers, more than %d", size, MaxHTTPHeaderBytes)
	}
	return nil
}

// AppendHTTPResult appends the encoding of r to dst.
func AppendHTTPResult(dst []byte, r *HTTPResult) []byte {
	if r.Failure != HTTPNone {
		dst = appendU8(dst, hrsFailure, byte(r.Failure))
	}
	if r.Message != "" {
		dst = appendString(dst, hrsMessage, r.Message)
	}
	if r.Status != 0 {
		dst = appendU32(dst, hrsStatus, uint32(r.Status))
	}
	dst = appendHeader(dst, hrsHeader, r.Header)
	if len(r.Body) > 0 {
		dst = appendRecord(dst, hrsBody, r.Body)
	}
	if r.URL != "" {
		dst = appendString(dst, hrsURL, r.URL)
	}
	return dst
}

// DecodeHTTPResult decodes an encoded HTTPResult. The result shares no
// memory with buf.
func DecodeHTTPResult(buf []byte) (*HTTPResult, error) { return decodeHTTPResult(buf, false) }

// DecodeHTTPResultShared decodes like DecodeHTTPResult, except that the
// result's strings and byte slices share buf's memory, so buf must never
// change afterwards (see DecodeRequestShared): a guest reads each result
// into a fresh buffer and decodes it in place, without copying the body.
func DecodeHTTPResultShared(buf []byte) (*HTTPResult, error) { return decodeHTTPResult(buf, true) }

func decodeHTTPResult(buf []byte, shared bool) (*HTTPResult, error) {
	str, bytes := copyString, copyBytes
	if shared {
		str, bytes = shareString, shareBytes
	}
	r := &HTTPResult{}
	rd := reader{buf: buf, singular: bits(hrsFailure, hrsMessage, hrsStatus, hrsBody, hrsURL)}
	for {
		tag, v, ok, err := rd.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return r, nil
		}
		switch tag {
		case hrsFailure:
			var b byte
			b, err = u8(tag, v)
			r.Failure = HTTPReason(b)
		case hrsMessage:
			r.Message = str(v)
		case hrsStatus:
			var s uint32
			s, err = u32(tag, v)
			r.Status = int(s)
		case hrsHeader:
			err = headerEntry(tag, v, &r.Header, str)
		case hrsBody:
			r.Body = bytes(v)
		case hrsURL:
			r.URL = str(v)
		}
		if err != nil {
			return nil, err
		}
	}
}

// appendHeader writes one entry record per value, names sorted and each
// name's values in order.
func appendHeader(dst []byte, tag byte, h Header) []byte {
	if len(h) == 0 {
		return dst
	}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range h[k] {
			dst = append(dst, tag)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(4+len(k)+len(v)))
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(k)))
			dst = append(dst, k...)
			dst = append(dst, v...)
		}
	}
	return dst
}

// headerEntry decodes `klen u32 | name | value` into h: unlike a map
// entry, a name may repeat (its values are kept in order); names are
// made canonical.
func headerEntry(tag byte, v []byte, h *Header, str func([]byte) string) error {
	if len(v) < 4 {
		return malformed("record %d: header entry shorter than its name length", tag)
	}
	kl := binary.LittleEndian.Uint32(v)
	if uint64(kl) > uint64(len(v)-4) {
		return malformed("record %d: name length %d exceeds entry", tag, kl)
	}
	if *h == nil {
		*h = make(Header)
	}
	k := CanonicalHeaderKey(string(v[4 : 4+kl]))
	(*h)[k] = append((*h)[k], str(v[4+kl:]))
	return nil
}

// isToken reports whether s is an RFC 9110 token: what a method or a
// header name is made of.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// headerValue reports whether v may be a header field value: no control
// character but a horizontal tab (no CR, LF or NUL).
func headerValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
