package abi_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

// Raw record builders, independent of the package's own encoder, so that
// the tests check the wire format and not just encoder/decoder agreement.

func rec(tag byte, value []byte) []byte {
	out := []byte{tag}
	out = binary.LittleEndian.AppendUint32(out, uint32(len(value)))
	return append(out, value...)
}

func recStr(tag byte, s string) []byte { return rec(tag, []byte(s)) }

func recU8(tag, v byte) []byte { return rec(tag, []byte{v}) }

func recU32(tag byte, v uint32) []byte { return rec(tag, binary.LittleEndian.AppendUint32(nil, v)) }

func recI64(tag byte, v int64) []byte {
	return rec(tag, binary.LittleEndian.AppendUint64(nil, uint64(v)))
}

func recEntry(tag byte, k, v string) []byte {
	e := binary.LittleEndian.AppendUint32(nil, uint32(len(k)))
	e = append(e, k...)
	return rec(tag, append(e, v...))
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func ttl(d time.Duration) *time.Duration { return &d }

// fullRequest sets every field of a Request.
func fullRequest() *abi.Request {
	return &abi.Request{
		Command:       "echo",
		Payload:       []byte{0, 1, 2, 0xff, 'h', 'i'},
		ContentType:   "application/octet-stream",
		Format:        abi.FormatUTF8,
		Metadata:      map[string]string{"b": "2", "a": "1", "": "empty key", "ключ": "значение"},
		TopicTokens:   map[string]string{"device": "d-17", "site": "north"},
		InvokerID:     "client-42",
		CorrelationID: []byte{0xde, 0xad, 0xbe, 0xef},
		ExecutorID:    "executor-1",
		Deadline:      time.Unix(1_700_000_000, 123_456_789),
		Attempt:       3,
		Caller:        abi.Caller{User: "alice", ClientID: "alice-cli"},
		Topic:         "sensors/d-17/temp",
	}
}

// fullResponse sets every field of a Response.
func fullResponse() *abi.Response {
	return &abi.Response{
		Status:      abi.StatusBadRequest,
		Message:     "bad field",
		PropName:    "Content Type",
		PropValue:   "text/csv",
		Payload:     []byte(`{"error":"bad"}`),
		ContentType: "application/json",
		Format:      abi.FormatUTF8,
		Metadata:    map[string]string{"x-trace": "abc", "retry": "no"},
		TTL:         ttl(1500 * time.Millisecond),
	}
}

func fullDescription() *abi.Description {
	return &abi.Description{
		Version: abi.Version,
		Name:    "demo module",
		Commands: []abi.Command{
			{Name: "echo"},
			{
				Name:         "lookup",
				Idempotent:   true,
				ResponseTTL:  90 * time.Second,
				ContentTypes: []string{"application/json", "text/plain"},
				Timeout:      2500 * time.Millisecond,
				Topic:        "svc/{site}/lookup",
			},
			{Name: "slow", Timeout: time.Hour, ContentTypes: []string{"application/cbor"}},
			{Name: "cached", Idempotent: true},
			{Name: "on-temp", Trigger: "sensors/{device}/temp", Timeout: time.Second},
		},
	}
}

// sameRequest compares requests, the deadline with Equal (decoding drops
// the location and monotonic reading).
func sameRequest(t *testing.T, got, want *abi.Request) {
	t.Helper()
	if !got.Deadline.Equal(want.Deadline) {
		t.Errorf("Deadline = %v, want %v", got.Deadline, want.Deadline)
	}
	g, w := *got, *want
	g.Deadline, w.Deadline = time.Time{}, time.Time{}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("request mismatch\n got %#v\nwant %#v", g, w)
	}
}

func TestRequestRoundTrip(t *testing.T) {
	cases := map[string]*abi.Request{
		"every field":   fullRequest(),
		"command only":  {Command: "x", Attempt: 1},
		"epoch":         {Command: "x", Deadline: time.Unix(0, 0), Attempt: 1},
		"past deadline": {Command: "x", Deadline: time.Unix(-5, 0), Attempt: 1},
		"utf8 command":  {Command: "größe", Payload: []byte("ü"), Attempt: 1},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			prefix := []byte("prefix")
			buf := abi.AppendRequest(append([]byte(nil), prefix...), want)
			if !bytes.HasPrefix(buf, prefix) {
				t.Fatalf("AppendRequest clobbered dst: %q", buf)
			}
			got, err := abi.DecodeRequest(buf[len(prefix):])
			if err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			sameRequest(t, got, want)
		})
	}
}

// TestRequestAttempt: the attempt record is absent for a first run and
// reads as 1 then, whether absent, explicit or unset before encoding; 0 on
// the wire is malformed. (The fuzzer found an explicit 1 that decoded to 1
// and, re-encoded, to 0.)
func TestRequestAttempt(t *testing.T) {
	for name, in := range map[string][]byte{
		"absent":     recStr(1, "x"),
		"explicit 1": cat(recStr(1, "x"), recU32(11, 1)),
		"unset":      abi.AppendRequest(nil, &abi.Request{Command: "x"}),
	} {
		r, err := abi.DecodeRequest(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Attempt != 1 {
			t.Errorf("%s: Attempt = %d, want 1", name, r.Attempt)
		}
		again, err := abi.DecodeRequest(abi.AppendRequest(nil, r))
		if err != nil || again.Attempt != 1 {
			t.Errorf("%s: re-encoded Attempt = %v (%v), want 1", name, again, err)
		}
	}
	if r, err := abi.DecodeRequest(cat(recStr(1, "x"), recU32(11, 3))); err != nil || r.Attempt != 3 {
		t.Errorf("attempt 3 decoded to %v, %v", r, err)
	}
	if _, err := abi.DecodeRequest(cat(recStr(1, "x"), recU32(11, 0))); !errors.Is(err, abi.ErrMalformed) {
		t.Errorf("attempt 0: err = %v, want ErrMalformed", err)
	}
}

// TestRequestCaller: the caller's records are tags 12 (user) and 13
// (client id), absent when empty; a decoder that predates them skips them
// (the reader skips unknown tags), and each may be given once.
func TestRequestCaller(t *testing.T) {
	enc := abi.AppendRequest(nil, &abi.Request{Command: "x", Caller: abi.Caller{User: "alice", ClientID: "c-1"}})
	if want := cat(recStr(1, "x"), recStr(12, "alice"), recStr(13, "c-1")); !bytes.Equal(enc, want) {
		t.Fatalf("encoded % x\nwant    % x", enc, want)
	}
	if enc := abi.AppendRequest(nil, &abi.Request{Command: "x"}); !bytes.Equal(enc, recStr(1, "x")) {
		t.Errorf("no caller encoded % x; want the command alone", enc)
	}
	r, err := abi.DecodeRequest(cat(recStr(1, "x"), recStr(13, "c-1")))
	if err != nil || r.Caller != (abi.Caller{ClientID: "c-1"}) || !r.Caller.Verified() || r.Caller.String() != "client c-1" {
		t.Errorf("client only: %+v, %v", r, err)
	}
	if _, err := abi.DecodeRequest(cat(recStr(1, "x"), recStr(12, "a"), recStr(12, "b"))); !errors.Is(err, abi.ErrMalformed) {
		t.Errorf("user repeated: err = %v, want ErrMalformed", err)
	}
	if (abi.Caller{}).Verified() || (abi.Caller{}).String() != "no verified caller" {
		t.Error("the zero Caller is verified")
	}
}

// TestTriggerRecords: a trigger's filter is tag 7 of its command, a
// message's topic tag 14 of the request, each absent when empty and given
// once.
func TestTriggerRecords(t *testing.T) {
	enc := abi.AppendRequest(nil, &abi.Request{Command: "x", Topic: "a/b"})
	if want := cat(recStr(1, "x"), recStr(14, "a/b")); !bytes.Equal(enc, want) {
		t.Fatalf("encoded % x\nwant    % x", enc, want)
	}
	if _, err := abi.DecodeRequest(cat(recStr(1, "x"), recStr(14, "a"), recStr(14, "b"))); !errors.Is(err, abi.ErrMalformed) {
		t.Errorf("topic repeated: err = %v, want ErrMalformed", err)
	}
	d := &abi.Description{Version: abi.Version, Commands: []abi.Command{{Name: "t", Trigger: "a/+/#"}}}
	got, err := abi.DecodeDescription(abi.AppendDescription(nil, d))
	if err != nil || got.Commands[0].Trigger != "a/+/#" || !got.Commands[0].IsTrigger() {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
}

// TestTriggerValidate: a trigger's filter is checked for its form only;
// whose topics it may receive is the host's rule.
func TestTriggerValidate(t *testing.T) {
	ok := []string{"a", "a/b", "a/+/c", "a/#", "sensors/{device}/temp", "$share/g/x"}
	for _, f := range ok {
		d := &abi.Description{Version: abi.Version, Commands: []abi.Command{{Name: "t", Trigger: f}}}
		if err := d.Validate(); err != nil {
			t.Errorf("filter %q: %v", f, err)
		}
	}
	bad := map[string]abi.Command{
		"empty level":  {Name: "t", Trigger: "a//b"},
		"# not last":   {Name: "t", Trigger: "a/#/b"},
		"partial +":    {Name: "t", Trigger: "a/b+"},
		"NUL":          {Name: "t", Trigger: "a/\x00"},
		"not UTF-8":    {Name: "t", Trigger: "a/\xff"},
		"too long":     {Name: "t", Trigger: strings.Repeat("a", abi.MaxTriggerFilter+1)},
		"with a topic": {Name: "t", Trigger: "a", Topic: "rpc/{executorId}/t"},
		"with a TTL":   {Name: "t", Trigger: "a", Idempotent: true, ResponseTTL: time.Second},
		"trailing /":   {Name: "t", Trigger: "a/"},
	}
	for name, c := range bad {
		d := &abi.Description{Version: abi.Version, Commands: []abi.Command{c}}
		if err := d.Validate(); !errors.Is(err, abi.ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", name, err)
		}
	}
}

func TestRequestNoDeadline(t *testing.T) {
	got, err := abi.DecodeRequest(abi.AppendRequest(nil, &abi.Request{Command: "x"}))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Deadline.IsZero() {
		t.Errorf("absent deadline decoded as %v, want the zero time", got.Deadline)
	}
}

func TestResponseRoundTrip(t *testing.T) {
	cases := map[string]*abi.Response{
		"every field":       fullResponse(),
		"zero":              {},
		"ok explicit":       {Status: abi.StatusOK, Payload: []byte("x")},
		"no content":        {Status: abi.StatusNoContent},
		"app error":         {AppError: true, Message: "db down"},
		"app error 500":     {Status: abi.StatusInternalError, AppError: true, Message: "db down"},
		"unsupported type":  {Status: abi.StatusUnsupportedType, PropName: "Content Type", PropValue: "x/y"},
		"ttl zero":          {TTL: ttl(0)},
		"ttl large":         {TTL: ttl(1000 * time.Hour)},
		"metadata only":     {Metadata: map[string]string{"k": ""}},
		"binary payload":    {Payload: []byte{0xff, 0xfe, 0}},
		"utf8 format plain": {Format: abi.FormatUTF8, Payload: []byte("héllo")},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			buf := abi.AppendResponse(nil, want)
			got, err := abi.DecodeResponse(buf)
			if err != nil {
				t.Fatalf("DecodeResponse: %v", err)
			}
			if (got.TTL == nil) != (want.TTL == nil) {
				t.Fatalf("TTL = %v, want %v", got.TTL, want.TTL)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("response mismatch\n got %#v\nwant %#v", got, want)
			}
		})
	}
}

func TestResponseEmptyEncoding(t *testing.T) {
	if buf := abi.AppendResponse(nil, &abi.Response{}); len(buf) != 0 {
		t.Errorf("zero Response encodes to %x, want nothing", buf)
	}
	r, err := abi.DecodeResponse(nil)
	if err != nil {
		t.Fatalf("empty response: %v", err)
	}
	if r.Code() != abi.StatusOK || r.TTL != nil || len(r.Payload) != 0 {
		t.Errorf("empty response decoded as %#v", r)
	}
}

// TestResponseTTLTruncated documents that TTL travels in whole
// milliseconds: the sub-millisecond part is dropped.
func TestResponseTTLTruncated(t *testing.T) {
	got, err := abi.DecodeResponse(abi.AppendResponse(nil, &abi.Response{TTL: ttl(2*time.Millisecond + 999*time.Microsecond)}))
	if err != nil {
		t.Fatal(err)
	}
	if got.TTL == nil || *got.TTL != 2*time.Millisecond {
		t.Errorf("TTL = %v, want 2ms", got.TTL)
	}
}

func TestResponseCode(t *testing.T) {
	for _, c := range []struct {
		r    abi.Response
		want abi.Status
	}{
		{abi.Response{}, abi.StatusOK},
		{abi.Response{AppError: true}, abi.StatusInternalError},
		{abi.Response{Status: abi.StatusNoContent}, abi.StatusNoContent},
		{abi.Response{Status: abi.StatusBadRequest, AppError: true}, abi.StatusBadRequest},
	} {
		if got := c.r.Code(); got != c.want {
			t.Errorf("%+v.Code() = %d, want %d", c.r, got, c.want)
		}
	}
}

func TestDescriptionRoundTrip(t *testing.T) {
	cases := map[string]*abi.Description{
		"several commands": fullDescription(),
		"one command":      {Version: abi.Version, Commands: []abi.Command{{Name: "only"}}},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := abi.DecodeDescription(abi.AppendDescription(nil, want))
			if err != nil {
				t.Fatalf("DecodeDescription: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("description mismatch\n got %#v\nwant %#v", got, want)
			}
		})
	}
}

func TestDescriptionLookup(t *testing.T) {
	d := fullDescription()
	c := d.Command("lookup")
	if c == nil || c.Name != "lookup" {
		t.Fatalf("Command(lookup) = %v", c)
	}
	if d.Command("nope") != nil {
		t.Error("Command(nope) is not nil")
	}
	if !c.Accepts("text/plain") || c.Accepts("text/csv") || c.Accepts("") {
		t.Error("Accepts does not follow ContentTypes")
	}
	if echo := d.Command("echo"); !echo.Accepts("") || !echo.Accepts("whatever/else") {
		t.Error("a command without content types must accept any")
	}
}

// TestDocumentedEncodings pins the byte examples of ABI.md.
func TestDocumentedEncodings(t *testing.T) {
	hex := func(s string) []byte {
		var out []byte
		for _, f := range strings.Fields(s) {
			var b byte
			for _, c := range f {
				b <<= 4
				switch {
				case c >= '0' && c <= '9':
					b |= byte(c - '0')
				default:
					b |= byte(c-'a') + 10
				}
			}
			out = append(out, b)
		}
		return out
	}
	if got, want := recStr(3, "hi"), hex("03 02 00 00 00 68 69"); !bytes.Equal(got, want) {
		t.Errorf("string record = % x, want % x", got, want)
	}
	req := abi.AppendRequest(nil, &abi.Request{Command: "wat-echo", Payload: []byte("hello"), ContentType: "text/plain"})
	wantReq := hex(`01 08 00 00 00 77 61 74 2d 65 63 68 6f
		02 05 00 00 00 68 65 6c 6c 6f
		03 0a 00 00 00 74 65 78 74 2f 70 6c 61 69 6e`)
	if !bytes.Equal(req, wantReq) {
		t.Errorf("request example = % x\nwant % x", req, wantReq)
	}
	if got, want := abi.AppendResponse(nil, &abi.Response{Status: abi.StatusNoContent}), hex("01 04 00 00 00 cc 00 00 00"); !bytes.Equal(got, want) {
		t.Errorf("204 = % x, want % x", got, want)
	}
	desc := abi.AppendDescription(nil, &abi.Description{Version: 1, Commands: []abi.Command{{Name: "wat-echo"}}})
	wantDesc := hex(`01 04 00 00 00 01 00 00 00
		02 0d 00 00 00 01 08 00 00 00 77 61 74 2d 65 63 68 6f`)
	if !bytes.Equal(desc, wantDesc) {
		t.Errorf("wat-echo description = % x\nwant % x", desc, wantDesc)
	}
	if _, err := abi.DecodeDescription(wantDesc); err != nil {
		t.Errorf("wat-echo description: %v", err)
	}
	if r, err := abi.DecodeResponse(cat(recU8(2, 1), recStr(3, "db down"))); err != nil || r.Code() != abi.StatusInternalError {
		t.Errorf("documented app error: %v, %v", r, err)
	}
}

// TestZeroRecordsAccepted: a guest may include records holding zero values.
func TestZeroRecordsAccepted(t *testing.T) {
	r, err := abi.DecodeResponse(cat(recU32(1, 0), recU8(2, 0), rec(6, nil), recU8(8, 0), recStr(3, "")))
	if err != nil {
		t.Fatalf("explicit zero records: %v", err)
	}
	if r.Code() != abi.StatusOK || r.AppError || len(r.Payload) != 0 || r.TTL != nil {
		t.Errorf("decoded %#v", r)
	}
	if _, err := abi.DecodeResponse(cat(recU32(1, 204), rec(6, nil))); err != nil {
		t.Errorf("204 with an empty payload record: %v", err)
	}
	cmd := cat(recStr(1, "c"), recU8(2, 0), recI64(3, 0), recI64(5, 0), recStr(6, ""))
	if _, err := abi.DecodeDescription(cat(recU32(1, 1), rec(2, cmd), recStr(3, ""))); err != nil {
		t.Errorf("description with zero records: %v", err)
	}
}

type decoder struct {
	name   string
	decode func([]byte) (any, error)
}

var (
	decReq  = decoder{"request", func(b []byte) (any, error) { return abi.DecodeRequest(b) }}
	decResp = decoder{"response", func(b []byte) (any, error) { return abi.DecodeResponse(b) }}
	decDesc = decoder{"description", func(b []byte) (any, error) { return abi.DecodeDescription(b) }}
)

func TestDecodeRejects(t *testing.T) {
	cmd := recStr(1, "echo")
	version := recU32(1, 1)
	desc := func(cmdRecords ...[]byte) []byte { return cat(version, rec(2, cat(cmdRecords...))) }
	cases := []struct {
		name string
		dec  decoder
		in   []byte
	}{
		// Framing.
		{"truncated header after a record", decReq, cat(cmd, []byte{2, 1})},
		{"truncated header of four bytes", decReq, []byte{1, 4, 0, 0}},
		{"truncated header single byte", decResp, []byte{1}},
		{"truncated header in description", decDesc, cat(desc(cmd), []byte{9, 0, 0})},
		{"truncated header inside command", decDesc, desc(cmd, []byte{2, 1, 0})},
		{"length past the end", decReq, cat(cmd, []byte{2, 10, 0, 0, 0, 'a', 'b', 'c'})},
		{"length past the end by one", decReq, cmd[:len(cmd)-1]},
		{"length 0xffffffff", decResp, []byte{6, 0xff, 0xff, 0xff, 0xff, 1, 2}},
		{"length past the end in description", decDesc, cat(version, []byte{2, 200, 0, 0, 0})},
		{"length past the end inside command", decDesc, desc(cmd, []byte{6, 9, 0, 0, 0, 'x'})},

		// Repeated singular tags.
		{"repeated command", decReq, cat(cmd, recStr(1, "echo"))},
		{"repeated payload", decReq, cat(cmd, rec(2, []byte("a")), rec(2, []byte("b")))},
		{"repeated deadline", decReq, cat(cmd, recI64(9, 1), recI64(9, 1))},
		{"repeated status", decResp, cat(recU32(1, 200), recU32(1, 200))},
		{"repeated response ttl", decResp, cat(recI64(10, 1), recI64(10, 1))},
		{"repeated app error", decResp, cat(recU8(2, 1), recU8(2, 1))},
		{"repeated version", decDesc, cat(version, version, rec(2, cmd))},
		{"repeated module name", decDesc, cat(version, recStr(3, "a"), recStr(3, "b"), rec(2, cmd))},
		{"repeated name inside command", decDesc, desc(cmd, recStr(1, "other"))},
		{"repeated idempotent inside command", decDesc, desc(cmd, recU8(2, 1), recU8(2, 1))},
		{"repeated topic inside command", decDesc, desc(cmd, recStr(6, "a"), recStr(6, "a"))},

		// Maps.
		{"repeated metadata key", decReq, cat(cmd, recEntry(5, "k", "1"), recEntry(5, "k", "2"))},
		{"repeated empty metadata key", decReq, cat(cmd, recEntry(5, "", "1"), recEntry(5, "", "1"))},
		{"repeated topic token", decReq, cat(cmd, recEntry(6, "site", "a"), recEntry(6, "site", "a"))},
		{"repeated response metadata key", decResp, cat(recEntry(9, "k", "1"), recEntry(9, "k", "1"))},
		{"map entry shorter than key length", decReq, cat(cmd, rec(5, []byte{1, 0, 0}))},
		{"map key length past entry", decReq, cat(cmd, rec(5, []byte{5, 0, 0, 0, 'a', 'b'}))},
		{"map key length 0xffffffff", decResp, rec(9, []byte{0xff, 0xff, 0xff, 0xff, 'a'})},

		// Fixed widths.
		{"request format two bytes", decReq, cat(cmd, rec(4, []byte{1, 0}))},
		{"request format empty", decReq, cat(cmd, rec(4, nil))},
		{"request deadline four bytes", decReq, cat(cmd, recU32(9, 1))},
		{"response status one byte", decResp, recU8(1, 200)},
		{"response status eight bytes", decResp, recI64(1, 200)},
		{"response app error four bytes", decResp, recU32(2, 1)},
		{"response format four bytes", decResp, recU32(8, 1)},
		{"response ttl four bytes", decResp, recU32(10, 1)},
		{"description version eight bytes", decDesc, cat(recI64(1, 1), rec(2, cmd))},
		{"command idempotent empty", decDesc, desc(cmd, rec(2, nil))},
		{"command ttl four bytes", decDesc, desc(cmd, recU8(2, 1), recU32(3, 1000))},
		{"command timeout one byte", decDesc, desc(cmd, recU8(5, 1))},

		// Booleans and enumerations.
		{"response app error 2", decResp, recU8(2, 2)},
		{"response app error 0xff", decResp, recU8(2, 0xff)},
		{"command idempotent 2", decDesc, desc(cmd, recU8(2, 2))},
		{"request format indicator 2", decReq, cat(cmd, recU8(4, 2))},
		{"request format indicator 0xff", decReq, cat(cmd, recU8(4, 0xff))},
		{"response format indicator 2", decResp, recU8(8, 2)},

		// Durations.
		{"negative response ttl", decResp, recI64(10, -1)},
		{"response ttl past time.Duration", decResp, recI64(10, 9223372036855)},
		{"negative command timeout", decDesc, desc(cmd, recI64(5, -1))},
		{"negative command ttl", decDesc, desc(cmd, recU8(2, 1), recI64(3, -1000))},

		// Required content.
		{"request without command", decReq, rec(2, []byte("payload"))},
		{"empty request", decReq, nil},
		{"request with empty command", decReq, recStr(1, "")},
		{"request with non-UTF-8 command", decReq, rec(1, []byte{0xff, 'x'})},
		{"description without version", decDesc, rec(2, cmd)},
		{"empty description", decDesc, nil},
		{"response refused by Validate", decResp, recU32(1, 503)},
	}
	for _, c := range cases {
		t.Run(c.dec.name+"/"+c.name, func(t *testing.T) {
			v, err := c.dec.decode(c.in)
			if err == nil {
				t.Fatalf("decoded % x as %#v, want an error", c.in, v)
			}
			if !errors.Is(err, abi.ErrMalformed) {
				t.Errorf("error %q does not wrap ErrMalformed", err)
			}
			if !reflect.ValueOf(v).IsNil() {
				t.Errorf("returned %#v together with an error", v)
			}
		})
	}
}

// TestUnknownTagsSkipped: tags a version does not know are skipped, and
// may repeat, whether below 64 (tracked by the singular bitmask) or not.
func TestUnknownTagsSkipped(t *testing.T) {
	unknown := cat(
		recStr(40, "a"), recStr(40, "b"), rec(40, nil),
		recU8(63, 1), recU8(63, 1),
		rec(64, []byte{1, 2, 3}), rec(64, nil),
		recI64(200, -1), recI64(200, -1),
		rec(255, bytes.Repeat([]byte{0xff}, 300)),
		rec(0, nil), rec(0, []byte{0}),
	)

	t.Run("request", func(t *testing.T) {
		want := fullRequest()
		enc := abi.AppendRequest(nil, want)
		for _, in := range [][]byte{cat(unknown, enc), cat(enc, unknown), cat(enc[:9], unknown, enc[9:])} {
			got, err := abi.DecodeRequest(in)
			if err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			sameRequest(t, got, want)
		}
	})
	t.Run("response", func(t *testing.T) {
		want := fullResponse()
		got, err := abi.DecodeResponse(cat(unknown, abi.AppendResponse(nil, want), unknown))
		if err != nil {
			t.Fatalf("DecodeResponse: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %#v, want %#v", got, want)
		}
	})
	t.Run("description", func(t *testing.T) {
		want := &abi.Description{Version: 1, Commands: []abi.Command{{Name: "a", ContentTypes: []string{"text/plain"}}}}
		cmd := cat(recStr(1, "a"), unknown, recStr(4, "text/plain"))
		got, err := abi.DecodeDescription(cat(unknown, recU32(1, 1), unknown, rec(2, cmd), unknown))
		if err != nil {
			t.Fatalf("DecodeDescription: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %#v, want %#v", got, want)
		}
	})
}

// TestMapOrderAccepted: decoders accept map entries in any order.
func TestMapOrderAccepted(t *testing.T) {
	got, err := abi.DecodeRequest(cat(recEntry(5, "z", "26"), recStr(1, "c"), recEntry(5, "a", "1"), recEntry(6, "t", "v"), recEntry(5, "m", "13")))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "1", "m": "13", "z": "26"}
	if !reflect.DeepEqual(got.Metadata, want) || got.TopicTokens["t"] != "v" {
		t.Errorf("metadata %v tokens %v", got.Metadata, got.TopicTokens)
	}
}

func TestDeterministicEncoding(t *testing.T) {
	keys := []string{"zeta", "alpha", "", "mu", "Beta", "alpha2", "ä", "0"}
	forward, backward := map[string]string{}, map[string]string{}
	for i, k := range keys {
		forward[k] = k + "-value"
		backward[keys[len(keys)-1-i]] = keys[len(keys)-1-i] + "-value"
	}
	// Grow and shrink one map so that its internal layout differs too.
	for i := range 100 {
		backward[string(rune('A'+i%26))+"tmp"] = "x"
	}
	for i := range 100 {
		delete(backward, string(rune('A'+i%26))+"tmp")
	}

	reqA := &abi.Request{Command: "c", Metadata: forward, TopicTokens: backward}
	reqB := &abi.Request{Command: "c", Metadata: backward, TopicTokens: forward}
	respA := &abi.Response{Metadata: forward}
	respB := &abi.Response{Metadata: backward}
	firstReq := abi.AppendRequest(nil, reqA)
	firstResp := abi.AppendResponse(nil, respA)
	for range 50 {
		if got := abi.AppendRequest(nil, reqB); !bytes.Equal(got, firstReq) {
			t.Fatalf("request encodings differ:\n% x\n% x", got, firstReq)
		}
		if got := abi.AppendRequest(nil, reqA); !bytes.Equal(got, firstReq) {
			t.Fatalf("request encoding not stable")
		}
		if got := abi.AppendResponse(nil, respB); !bytes.Equal(got, firstResp) {
			t.Fatalf("response encodings differ:\n% x\n% x", got, firstResp)
		}
	}

	// Entries are written sorted by key.
	wantOrder := cat()
	sorted := []string{"", "0", "Beta", "alpha", "alpha2", "mu", "zeta", "ä"}
	for _, k := range sorted {
		wantOrder = append(wantOrder, recEntry(9, k, k+"-value")...)
	}
	if !bytes.Equal(firstResp, wantOrder) {
		t.Errorf("response metadata not sorted by key:\n got % x\nwant % x", firstResp, wantOrder)
	}
}
