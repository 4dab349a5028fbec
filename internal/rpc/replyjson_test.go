package rpc

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

// storedReplyOf is what encodeReply gave encoding/json before
// appendStoredReply.
func storedReplyOf(r *reply) storedReply {
	return storedReply{None: r.none, Status: r.status, AppError: r.appError, Message: r.message,
		PropName: r.propName, PropValue: r.propValue, Extra: r.extra, Payload: r.payload,
		ContentType: r.contentType, Format: r.format, Metadata: r.metadata, TTL: r.ttl, Raw: r.raw, Timestamp: r.ts}
}

func checkStoredReply(t *testing.T, r *reply) {
	t.Helper()
	want, err := json.Marshal(storedReplyOf(r))
	if err != nil {
		t.Fatal(err)
	}
	if got := appendStoredReply(nil, r); !bytes.Equal(got, want) {
		t.Fatalf("appendStoredReply:\n got %s\nwant %s", got, want)
	}
}

// TestStoredReplyAsEncodingJSON: the hand-written encoding is
// encoding/json's, byte for byte, so that outcomes written before and
// after it read alike (and an older host reads this one's).
func TestStoredReplyAsEncodingJSON(t *testing.T) {
	ttl := 90 * time.Second
	for _, r := range []*reply{
		noReply,
		{status: abi.StatusOK},
		{status: abi.StatusOK, payload: []byte("hello"), contentType: "text/plain", format: 1, handled: true},
		{status: 400, appError: true, message: "bad <input> & \"quotes\" \\ \n\t\r\b\f \x01 \x7f", propName: "p", propValue: "v"},
		{status: 505, extra: map[string]string{"b": "2", "a": "1", "": "empty"}, metadata: map[string]string{"z": "\u2028\u2029", "k": "é∑😀"}},
		{status: 200, ttl: &ttl, raw: true, ts: "1700000000000:00001:node"},
		{status: 500, message: "invalid \xff\xfe utf-8 \xe2\x82", payload: bytes.Repeat([]byte{0, 255, 7}, 100)},
	} {
		checkStoredReply(t, r)
	}
}

func FuzzStoredReplyAsEncodingJSON(f *testing.F) {
	f.Add(uint32(200), "msg", "k", "v", []byte("payload"), uint8(1), int64(0), true)
	f.Add(uint32(0), "\xff<>&\u2028", "\x00", "", []byte{}, uint8(0), int64(-5), false)
	f.Fuzz(func(t *testing.T, status uint32, msg, k, v string, payload []byte, format uint8, ttl int64, flag bool) {
		d := time.Duration(ttl)
		r := &reply{none: flag, status: abi.Status(status), appError: !flag, message: msg, propName: k, propValue: v,
			payload: payload, contentType: v, format: abi.FormatIndicator(format), metadata: map[string]string{k: v, msg: k},
			raw: flag, ts: msg}
		if ttl != 0 {
			r.ttl = &d
		}
		if flag {
			r.extra = map[string]string{v: msg}
		}
		checkStoredReply(t, r)
	})
}

// BenchmarkEncodeReply is the outcome of an echo of 64 bytes encoded for
// the store: by hand (encodeReply) and by encoding/json, as before.
func BenchmarkEncodeReply(b *testing.B) {
	r := &reply{status: abi.StatusOK, payload: bytes.Repeat([]byte("x"), 64), contentType: "text/plain", format: 1, handled: true}
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeReply(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(storedReplyOf(r)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
