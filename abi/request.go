package abi

import (
	"time"
	"unicode/utf8"
)

// Request tags.
const (
	reqCommand       = 1  // string
	reqPayload       = 2  // bytes
	reqContentType   = 3  // string
	reqFormat        = 4  // u8: FormatIndicator
	reqMetadata      = 5  // map entry, repeated
	reqTopicToken    = 6  // map entry, repeated
	reqInvokerID     = 7  // string
	reqCorrelationID = 8  // bytes
	reqDeadline      = 9  // i64: unix nanoseconds; absent = none
	reqExecutorID    = 10 // string
	reqAttempt       = 11 // u32: the run's number, absent = 1
	reqCallerUser    = 12 // string: the verified caller's user name
	reqCallerClient  = 13 // string: the verified caller's client id
	reqTopic         = 14 // string: the topic of a trigger's message
)

// FormatIndicator is MQTT's payload format indicator.
type FormatIndicator uint8

const (
	// FormatBytes says the payload is unspecified bytes.
	FormatBytes FormatIndicator = 0
	// FormatUTF8 says the payload is UTF-8 text.
	FormatUTF8 FormatIndicator = 1
)

// Request is one command invocation as the guest sees it.
type Request struct {
	Command       string            // the command's name as the module declared it
	Payload       []byte            // the request body
	ContentType   string            // MQTT content type, "" when none was sent
	Format        FormatIndicator   // MQTT payload format indicator
	Metadata      map[string]string // the invoker's user properties, protocol ones removed
	TopicTokens   map[string]string // values of the topic pattern's unresolved tokens
	InvokerID     string            // the invoker's client id, "" when unknown
	CorrelationID []byte            // the request's correlation data
	ExecutorID    string            // the host's executor id
	Deadline      time.Time         // when the call is cut; zero when it has none
	// Attempt numbers the runs of this request: 1, or more when the host
	// runs it again after an execution timeout (the on_timeout retry
	// policy, idempotent commands only). Decoding gives 1 when the record
	// is absent; encoding writes it only above 1, and 0 reads as 1.
	Attempt int
	// Caller is who sent the request, as the host verified it (caller.go):
	// zero when the host knows no verified caller. Unlike InvokerID (what
	// the invoker wrote), no client can choose it.
	Caller Caller
	// Topic is the topic a trigger's message came on; "" for a command's
	// request.
	Topic string
}

// AppendRequest appends the encoding of r to dst and returns the result.
func AppendRequest(dst []byte, r *Request) []byte {
	dst = appendString(dst, reqCommand, r.Command)
	if len(r.Payload) > 0 {
		dst = appendRecord(dst, reqPayload, r.Payload)
	}
	if r.ContentType != "" {
		dst = appendString(dst, reqContentType, r.ContentType)
	}
	if r.Format != FormatBytes {
		dst = appendU8(dst, reqFormat, byte(r.Format))
	}
	dst = appendMap(dst, reqMetadata, r.Metadata)
	dst = appendMap(dst, reqTopicToken, r.TopicTokens)
	if r.InvokerID != "" {
		dst = appendString(dst, reqInvokerID, r.InvokerID)
	}
	if len(r.CorrelationID) > 0 {
		dst = appendRecord(dst, reqCorrelationID, r.CorrelationID)
	}
	if r.ExecutorID != "" {
		dst = appendString(dst, reqExecutorID, r.ExecutorID)
	}
	if !r.Deadline.IsZero() {
		dst = appendI64(dst, reqDeadline, r.Deadline.UnixNano())
	}
	if r.Attempt > 1 {
		dst = appendU32(dst, reqAttempt, uint32(r.Attempt))
	}
	if r.Caller.User != "" {
		dst = appendString(dst, reqCallerUser, r.Caller.User)
	}
	if r.Caller.ClientID != "" {
		dst = appendString(dst, reqCallerClient, r.Caller.ClientID)
	}
	if r.Topic != "" {
		dst = appendString(dst, reqTopic, r.Topic)
	}
	return dst
}

// DecodeRequest decodes an encoded Request. The result shares no memory
// with buf.
func DecodeRequest(buf []byte) (*Request, error) { return decodeRequest(buf, false) }

// DecodeRequestShared decodes like DecodeRequest, except that the result's
// strings and byte slices share buf's memory, so buf must never change
// afterwards. It saves an allocation per field, which matters in a guest
// (an allocation costs a Go guest ~0.5–1.6 µs): guests fetch each request
// into a fresh buffer and decode it in place.
func DecodeRequestShared(buf []byte) (*Request, error) { return decodeRequest(buf, true) }

func decodeRequest(buf []byte, shared bool) (*Request, error) {
	str, bytes := copyString, copyBytes
	if shared {
		str, bytes = shareString, shareBytes
	}
	r := &Request{Attempt: 1} // absent = 1
	rd := reader{buf: buf, singular: bits(reqCommand, reqPayload, reqContentType, reqFormat,
		reqInvokerID, reqCorrelationID, reqDeadline, reqExecutorID, reqAttempt, reqCallerUser, reqCallerClient, reqTopic)}
	for {
		tag, v, ok, err := rd.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch tag {
		case reqCommand:
			r.Command = str(v)
		case reqPayload:
			r.Payload = bytes(v)
		case reqContentType:
			r.ContentType = str(v)
		case reqFormat:
			b, err := u8(tag, v)
			if err != nil {
				return nil, err
			}
			if FormatIndicator(b) > FormatUTF8 {
				return nil, malformed("payload format indicator %d (want 0 or 1)", b)
			}
			r.Format = FormatIndicator(b)
		case reqMetadata:
			err = mapEntry(tag, v, &r.Metadata)
		case reqTopicToken:
			err = mapEntry(tag, v, &r.TopicTokens)
		case reqInvokerID:
			r.InvokerID = str(v)
		case reqCorrelationID:
			r.CorrelationID = bytes(v)
		case reqExecutorID:
			r.ExecutorID = str(v)
		case reqDeadline:
			var ns int64
			ns, err = i64(tag, v)
			r.Deadline = time.Unix(0, ns)
		case reqAttempt:
			var n uint32
			n, err = u32(tag, v)
			if err == nil && n == 0 {
				err = malformed("attempt 0 (runs are numbered from 1)")
			}
			r.Attempt = int(n)
		case reqCallerUser:
			r.Caller.User = str(v)
		case reqCallerClient:
			r.Caller.ClientID = str(v)
		case reqTopic:
			r.Topic = str(v)
		}
		if err != nil {
			return nil, err
		}
	}
	if r.Command == "" {
		return nil, malformed("request has no command")
	}
	if !utf8.ValidString(r.Command) {
		return nil, malformed("command name is not UTF-8")
	}
	return r, nil
}
