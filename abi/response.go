package abi

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Response tags.
const (
	respStatus      = 1  // u32: Status; absent = StatusOK
	respAppError    = 2  // u8 boolean: the handler itself failed
	respMessage     = 3  // string
	respPropName    = 4  // string
	respPropValue   = 5  // string
	respPayload     = 6  // bytes
	respContentType = 7  // string
	respFormat      = 8  // u8: FormatIndicator
	respMetadata    = 9  // map entry, repeated
	respTTL         = 10 // i64: milliseconds this reply may be reused; absent = the command's declared TTL
)

// Status is a protocol status code (PROTOCOL.md). A guest may return only
// the ones GuestMayReturn accepts; the others belong to the host.
type Status uint32

// Status values.
const (
	StatusOK                 Status = 200
	StatusAccepted           Status = 202 // host only (extension): accepted, the reply follows
	StatusNoContent          Status = 204
	StatusBadRequest         Status = 400 // a header or the payload is invalid
	StatusRequestTimeout     Status = 408 // host only: execution timeout
	StatusUnsupportedType    Status = 415 // content type or format indicator refused
	StatusCancelled          Status = 499 // host only (extension): cancelled by the invoker
	StatusInternalError      Status = 500 // with AppError: the handler failed
	StatusServiceUnavailable Status = 503 // host only
	StatusVersionUnsupported Status = 505 // host only
)

// GuestMayReturn reports whether a guest may put s in a Response.
func GuestMayReturn(s Status) bool {
	switch s {
	case StatusOK, StatusNoContent, StatusBadRequest, StatusUnsupportedType, StatusInternalError:
		return true
	}
	return false
}

// Response is what a handler returns for one Request.
//
// A zero Status means StatusOK. AppError marks an application error: the
// handler ran and failed; the host answers 500 with `__apErr` and Message.
// A protocol status (400, 415) says the request itself was unacceptable;
// PropName/PropValue name the offending property when there is one.
type Response struct {
	Status      Status
	AppError    bool
	Message     string
	PropName    string
	PropValue   string
	Payload     []byte
	ContentType string
	Format      FormatIndicator
	Metadata    map[string]string
	// TTL overrides, for this reply only, how long it may be reused. Nil
	// means the command's declared response TTL; a pointer to 0 means not at
	// all.
	TTL *time.Duration
}

// Code returns the response's status with the zero value read as StatusOK.
func (r *Response) Code() Status {
	if r.Status == 0 {
		if r.AppError {
			return StatusInternalError
		}
		return StatusOK
	}
	return r.Status
}

// AppendResponse appends the encoding of r to dst and returns the result.
func AppendResponse(dst []byte, r *Response) []byte {
	if r.Status != 0 {
		dst = appendU32(dst, respStatus, uint32(r.Status))
	}
	if r.AppError {
		dst = appendU8(dst, respAppError, 1)
	}
	if r.Message != "" {
		dst = appendString(dst, respMessage, r.Message)
	}
	if r.PropName != "" {
		dst = appendString(dst, respPropName, r.PropName)
	}
	if r.PropValue != "" {
		dst = appendString(dst, respPropValue, r.PropValue)
	}
	if len(r.Payload) > 0 {
		dst = appendRecord(dst, respPayload, r.Payload)
	}
	if r.ContentType != "" {
		dst = appendString(dst, respContentType, r.ContentType)
	}
	if r.Format != FormatBytes {
		dst = appendU8(dst, respFormat, byte(r.Format))
	}
	dst = appendMap(dst, respMetadata, r.Metadata)
	if r.TTL != nil {
		dst = appendI64(dst, respTTL, r.TTL.Milliseconds())
	}
	return dst
}

// DecodeResponse decodes an encoded Response and checks it with
// Response.Validate. The result shares no memory with buf.
func DecodeResponse(buf []byte) (*Response, error) {
	r := &Response{}
	rd := reader{buf: buf, singular: bits(respStatus, respAppError, respMessage, respPropName,
		respPropValue, respPayload, respContentType, respFormat, respTTL)}
	for {
		tag, v, ok, err := rd.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch tag {
		case respStatus:
			var s uint32
			s, err = u32(tag, v)
			r.Status = Status(s)
		case respAppError:
			r.AppError, err = boolean(tag, v)
		case respMessage:
			r.Message = string(v)
		case respPropName:
			r.PropName = string(v)
		case respPropValue:
			r.PropValue = string(v)
		case respPayload:
			r.Payload = append([]byte(nil), v...)
		case respContentType:
			r.ContentType = string(v)
		case respFormat:
			var b byte
			b, err = u8(tag, v)
			r.Format = FormatIndicator(b)
		case respMetadata:
			err = mapEntry(tag, v, &r.Metadata)
		case respTTL:
			var ms int64
			ms, err = durationMillis(tag, v)
			d := time.Duration(ms) * time.Millisecond
			r.TTL = &d
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

// Validate reports the first way r breaks the rules a guest's response must
// follow.
func (r *Response) Validate() error {
	code := r.Code()
	switch {
	case !GuestMayReturn(code):
		return malformed("status %d is reserved for the host; a handler may return 200, 204, 400, 415 or 500", code)
	case r.AppError && code != StatusInternalError:
		return malformed("an application error must have status 500, not %d", code)
	case code == StatusInternalError && !r.AppError:
		return malformed("status 500 needs the application-error flag (a handler cannot report a host fault)")
	case code == StatusNoContent && len(r.Payload) > 0:
		return malformed("status 204 with a %d-byte payload", len(r.Payload))
	case r.Format > FormatUTF8:
		return malformed("payload format indicator %d (want 0 or 1)", r.Format)
	case r.TTL != nil && *r.TTL < 0:
		return malformed("negative TTL %v", *r.TTL)
	}
	switch {
	case !utf8.ValidString(r.Message):
		return malformed("message is not UTF-8")
	case !utf8.ValidString(r.ContentType):
		return malformed("content type is not UTF-8")
	case !utf8.ValidString(r.PropName):
		return malformed("property name is not UTF-8")
	case !utf8.ValidString(r.PropValue):
		return malformed("property value is not UTF-8")
	}
	if r.Format == FormatUTF8 && !utf8.Valid(r.Payload) {
		return malformed("payload is marked UTF-8 but is not")
	}
	if len(r.Metadata) == 0 { // a range over an empty map costs a guest ~1 µs
		return nil
	}
	for k, v := range r.Metadata {
		if k == "" || strings.HasPrefix(k, "__") {
			return malformed("metadata key %q: keys must be non-empty and not start with \"__\"", k)
		}
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return malformed("metadata %q: keys and values must be UTF-8", k)
		}
	}
	return nil
}

// String is a short description for logs.
func (r *Response) String() string {
	return fmt.Sprintf("status=%d apErr=%t payload=%dB", r.Code(), r.AppError, len(r.Payload))
}
