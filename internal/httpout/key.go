package httpout

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// The Idempotency-Key of a non-idempotent command's requests. HTTP is not
// transactional: a request a call made has happened, whatever becomes of
// the call (it fails, it is cut, the host dies before its reply is
// recorded and the request runs again). What the host can do is give the
// same request the same key at every run, so that a server that honours
// Idempotency-Key does it once: the key is made of the request's
// correlation data and response topic (what the dedup store keys a
// request by, the same at every delivery and after a restart) and the
// index of the HTTP request in the call (0, 1, ...).

// requestKey is what WithRequestKey puts in a context.
type requestKey struct {
	correlation   []byte
	responseTopic string
}

type requestKeyCtx struct{}

// WithRequestKey returns ctx carrying the identity of a request of a
// non-idempotent command: its correlation data and response topic. The
// executor sets it on the handler's context; the HTTP requests of the call
// that handles that request get an Idempotency-Key (IdempotencyKey).
func WithRequestKey(ctx context.Context, correlation []byte, responseTopic string) context.Context {
	return context.WithValue(ctx, requestKeyCtx{}, &requestKey{correlation: correlation, responseTopic: responseTopic})
}

// IdempotencyKey returns the key of the i-th HTTP request (from 0) of the
// call that handles the request with correlation data correlation, when
// ctx carries that request's key (WithRequestKey). ok is false for any
// other call: an idempotent command's, or a nested call's (its
// correlation data is new at every run, and its context carries its
// caller's key).
func IdempotencyKey(ctx context.Context, correlation []byte, i int) (key string, ok bool) {
	k, _ := ctx.Value(requestKeyCtx{}).(*requestKey)
	if k == nil || !bytes.Equal(k.correlation, correlation) {
		return "", false
	}
	h := sha256.New()
	h.Write([]byte("cmdhost-http-idempotency\x00"))
	h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(k.correlation))))
	h.Write(k.correlation)
	h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(k.responseTopic))))
	h.Write([]byte(k.responseTopic))
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(i)))
	return uuid(h.Sum(nil)[:16]), true
}

// uuid formats 16 bytes of a hash as a UUID of version 8 (custom) and
// the RFC 9562 variant: the form servers that check a key's shape accept.
func uuid(b []byte) string {
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:16])
	return string(out[:])
}
