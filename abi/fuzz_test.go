package abi_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

// The fuzz targets check, for any input:
//   - decoding never panics, and a failure wraps ErrMalformed;
//   - a decoded value re-encodes to bytes that decode to an equal value,
//     and re-encoding that gives the same bytes again (a canonical form);
//   - a decoded value shares no memory with the input: the host decodes
//     straight out of guest memory, which the guest may overwrite later.

// mutate overwrites every byte of b.
func mutate(b []byte) {
	for i := range b {
		b[i] ^= 0xa5
	}
}

// seeds adds valid encodings, variants with unknown records, and broken
// ones derived from them.
func seeds(f *testing.F, valid ...[]byte) {
	unknown := cat(recStr(40, "x"), recStr(40, "y"), rec(64, nil), recI64(200, 7))
	for _, v := range valid {
		f.Add(v)
		f.Add(cat(v, unknown))
		f.Add(cat(unknown, v))
		if len(v) > 0 {
			f.Add(v[:len(v)-1])      // value cut short
			f.Add(cat(v, v[:3]))     // trailing partial header
			f.Add(cat(v, v))         // every singular tag repeated
			f.Add(cat(v[:1], v[2:])) // length field shifted
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff})
}

func normRequest(r *abi.Request) abi.Request {
	n := *r
	n.Deadline = time.Time{}
	if len(n.Payload) == 0 {
		n.Payload = nil
	}
	if len(n.CorrelationID) == 0 {
		n.CorrelationID = nil
	}
	if len(n.Metadata) == 0 {
		n.Metadata = nil
	}
	if len(n.TopicTokens) == 0 {
		n.TopicTokens = nil
	}
	return n
}

func FuzzDecodeRequest(f *testing.F) {
	seeds(f,
		abi.AppendRequest(nil, fullRequest()),
		abi.AppendRequest(nil, &abi.Request{Command: "x"}),
		abi.AppendRequest(nil, &abi.Request{Command: "wat-echo", Payload: []byte("hello"), ContentType: "text/plain"}),
		cat(recStr(1, "c"), recEntry(5, "k", "1"), recEntry(5, "k", "2")),
		cat(recStr(1, "c"), recU8(4, 2)),
		cat(recStr(1, "c"), recI64(9, -1<<63)),
		rec(2, []byte("no command")),
		cat(recStr(1, "c"), rec(5, []byte{0xff, 0xff, 0xff, 0xff})),
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		r, err := abi.DecodeRequest(in)
		if err != nil {
			if r != nil {
				t.Fatalf("value %#v returned with error %v", r, err)
			}
			if !errors.Is(err, abi.ErrMalformed) {
				t.Fatalf("error %q does not wrap ErrMalformed", err)
			}
			return
		}
		enc := abi.AppendRequest(nil, r)
		mutate(in)
		if after := abi.AppendRequest(nil, r); !bytes.Equal(after, enc) {
			t.Fatalf("decoded request aliases its input:\nbefore % x\nafter  % x", enc, after)
		}

		r2, err := abi.DecodeRequest(enc)
		if err != nil {
			t.Fatalf("re-encoded request does not decode: %v\n% x", err, enc)
		}
		if !r2.Deadline.Equal(r.Deadline) || r2.Deadline.IsZero() != r.Deadline.IsZero() {
			t.Fatalf("deadline %v became %v", r.Deadline, r2.Deadline)
		}
		if a, b := normRequest(r), normRequest(r2); !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip changed the request\nfirst  %#v\nsecond %#v", a, b)
		}
		if enc2 := abi.AppendRequest(nil, r2); !bytes.Equal(enc2, enc) {
			t.Fatalf("encoding is not canonical:\n% x\n% x", enc, enc2)
		}
	})
}

func normResponse(r *abi.Response) abi.Response {
	n := *r
	if len(n.Payload) == 0 {
		n.Payload = nil
	}
	if len(n.Metadata) == 0 {
		n.Metadata = nil
	}
	return n
}

func FuzzDecodeResponse(f *testing.F) {
	seeds(f,
		abi.AppendResponse(nil, fullResponse()),
		abi.AppendResponse(nil, &abi.Response{}),
		abi.AppendResponse(nil, &abi.Response{AppError: true, Message: "db down"}),
		abi.AppendResponse(nil, &abi.Response{Status: abi.StatusNoContent, TTL: ttl(0)}),
		abi.AppendResponse(nil, &abi.Response{Format: abi.FormatUTF8, Payload: []byte("größe"), Metadata: map[string]string{"a": "b"}}),
		recU32(1, 503),
		recU8(2, 2),
		recI64(10, -1),
		cat(recU32(1, 204), rec(6, []byte("x"))),
		cat(recEntry(9, "__apErr", "true")),
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		r, err := abi.DecodeResponse(in)
		if err != nil {
			if r != nil {
				t.Fatalf("value %#v returned with error %v", r, err)
			}
			if !errors.Is(err, abi.ErrMalformed) {
				t.Fatalf("error %q does not wrap ErrMalformed", err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("decoded response fails Validate: %v", err)
		}
		enc := abi.AppendResponse(nil, r)
		mutate(in)
		if after := abi.AppendResponse(nil, r); !bytes.Equal(after, enc) {
			t.Fatalf("decoded response aliases its input:\nbefore % x\nafter  % x", enc, after)
		}

		r2, err := abi.DecodeResponse(enc)
		if err != nil {
			t.Fatalf("re-encoded response does not decode: %v\n% x", err, enc)
		}
		if (r.TTL == nil) != (r2.TTL == nil) || (r.TTL != nil && *r.TTL != *r2.TTL) {
			t.Fatalf("TTL %v became %v", r.TTL, r2.TTL)
		}
		// Status 0 and an explicit 200 (or 500 with the app error flag)
		// are the same response; compare the effective code.
		a, b := normResponse(r), normResponse(r2)
		if a.Code() != b.Code() {
			t.Fatalf("status %d became %d", a.Code(), b.Code())
		}
		a.Status, b.Status = a.Code(), b.Code()
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip changed the response\nfirst  %#v\nsecond %#v", a, b)
		}
		if enc2 := abi.AppendResponse(nil, r2); !bytes.Equal(enc2, enc) {
			t.Fatalf("encoding is not canonical:\n% x\n% x", enc, enc2)
		}
	})
}

func normDescription(d *abi.Description) abi.Description {
	n := *d
	n.Commands = append([]abi.Command(nil), d.Commands...)
	for i := range n.Commands {
		if len(n.Commands[i].ContentTypes) == 0 {
			n.Commands[i].ContentTypes = nil
		}
	}
	return n
}

func FuzzDecodeDescription(f *testing.F) {
	seeds(f,
		abi.AppendDescription(nil, fullDescription()),
		abi.AppendDescription(nil, &abi.Description{Version: 1, Commands: []abi.Command{{Name: "wat-echo"}}}),
		abi.AppendDescription(nil, validDescription()),
		cat(recU32(1, 2), rec(2, recStr(1, "a"))),
		cat(recU32(1, 1), rec(2, recStr(1, "a")), rec(2, recStr(1, "a"))),
		cat(recU32(1, 1), rec(2, cat(recStr(1, "a"), recI64(3, 1000)))),
		cat(recU32(1, 1), rec(2, cat(recStr(1, "a"), recStr(6, "x/+")))),
		cat(recU32(1, 1), rec(2, cat(recStr(1, "a"), recU8(2, 2)))),
		cat(recU32(1, 1), rec(2, nil)),
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		d, err := abi.DecodeDescription(in)
		if err != nil {
			if d != nil {
				t.Fatalf("value %#v returned with error %v", d, err)
			}
			if !errors.Is(err, abi.ErrMalformed) {
				t.Fatalf("error %q does not wrap ErrMalformed", err)
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("decoded description fails Validate: %v", err)
		}
		enc := abi.AppendDescription(nil, d)
		mutate(in)
		if after := abi.AppendDescription(nil, d); !bytes.Equal(after, enc) {
			t.Fatalf("decoded description aliases its input:\nbefore % x\nafter  % x", enc, after)
		}

		d2, err := abi.DecodeDescription(enc)
		if err != nil {
			t.Fatalf("re-encoded description does not decode: %v\n% x", err, enc)
		}
		if a, b := normDescription(d), normDescription(d2); !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip changed the description\nfirst  %#v\nsecond %#v", a, b)
		}
		if enc2 := abi.AppendDescription(nil, d2); !bytes.Equal(enc2, enc) {
			t.Fatalf("encoding is not canonical:\n% x\n% x", enc, enc2)
		}
	})
}
