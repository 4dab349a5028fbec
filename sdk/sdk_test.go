//go:build !wasip1

package sdk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

// register adds a command for the duration of one test or benchmark and
// removes it afterwards, so tests can run with -count > 1 and do not
// depend on each other. The registry is package-global: every test uses
// its own command names and none runs in parallel.
func register(tb testing.TB, name string, h Handler, opts ...Option) {
	tb.Helper()
	if registry.err != nil {
		tb.Fatalf("registry already failed: %v", registry.err)
	}
	Handle(name, h, opts...)
	if registry.err != nil {
		err := registry.err
		registry.err = nil
		tb.Fatalf("Handle(%q): %v", name, err)
	}
	tb.Cleanup(func() {
		registry.commands = slices.DeleteFunc(registry.commands, func(c command) bool { return c.decl.Name == name })
	})
}

// isolateRegistry gives a test an empty registry and puts the previous
// one back when it ends.
func isolateRegistry(t *testing.T) {
	t.Helper()
	saved := registry
	saved.commands = slices.Clone(registry.commands)
	registry.commands, registry.err = nil, nil
	t.Cleanup(func() { registry = saved })
}

// clearVars removes stand-in variables a test uses, before and after it.
func clearVars(t *testing.T, keys ...string) {
	t.Helper()
	drop := func() {
		standin.mu.Lock()
		defer standin.mu.Unlock()
		for _, k := range keys {
			delete(standin.vars, k)
		}
	}
	drop()
	t.Cleanup(drop)
}

func echo(ctx context.Context, req *Request) (*Response, error) {
	return &Response{Payload: req.Payload, ContentType: req.ContentType, Format: req.Format}, nil
}

func invoke(t *testing.T, req *Request) *Response {
	t.Helper()
	resp, err := Invoke(req)
	if err != nil {
		t.Fatalf("Invoke(%q): %v", req.Command, err)
	}
	// Whatever Invoke returns went through abi.DecodeResponse; check anyway.
	if err := resp.Validate(); err != nil {
		t.Fatalf("Invoke returned an invalid response: %v", err)
	}
	return resp
}

func TestInvokeEchoRoundTrip(t *testing.T) {
	register(t, "test-echo", echo)
	payload := []byte{0, 1, 2, 0xff, 'x'}
	resp := invoke(t, &Request{Command: "test-echo", Payload: payload, ContentType: "application/x-test"})
	if resp.Code() != abi.StatusOK || resp.AppError {
		t.Errorf("status %d apErr %t, want 200", resp.Code(), resp.AppError)
	}
	if !bytes.Equal(resp.Payload, payload) || resp.ContentType != "application/x-test" {
		t.Errorf("got payload %x content type %q", resp.Payload, resp.ContentType)
	}

	text := invoke(t, &Request{Command: "test-echo", Payload: []byte("größe"), ContentType: "text/plain", Format: abi.FormatUTF8})
	if string(text.Payload) != "größe" || text.Format != abi.FormatUTF8 {
		t.Errorf("got %q format %d", text.Payload, text.Format)
	}

	empty := invoke(t, &Request{Command: "test-echo"})
	if len(empty.Payload) != 0 || empty.ContentType != "" {
		t.Errorf("empty request echoed as %#v", empty)
	}
}

func TestInvokeRequestFields(t *testing.T) {
	want := &Request{
		Command:       "test-fields",
		Payload:       []byte("p"),
		ContentType:   "text/plain",
		Format:        abi.FormatUTF8,
		Metadata:      map[string]string{"a": "1", "b": "2"},
		TopicTokens:   map[string]string{"site": "north"},
		InvokerID:     "client",
		CorrelationID: []byte{1, 2, 3},
		ExecutorID:    "exec",
		Attempt:       1, // a first run
	}
	var got *Request
	register(t, "test-fields", func(ctx context.Context, req *Request) (*Response, error) {
		got = req
		return &Response{Metadata: map[string]string{"seen": req.Metadata["a"]}}, nil
	})
	resp := invoke(t, want)
	if got == nil {
		t.Fatal("handler not called")
	}
	if got == want {
		t.Error("handler got the caller's Request, not a decoded copy")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("handler saw\n%#v\nwant\n%#v", *got, *want)
	}
	if resp.Metadata["seen"] != "1" {
		t.Errorf("response metadata %v", resp.Metadata)
	}
}

func TestInvokePlainError(t *testing.T) {
	register(t, "test-plain-error", func(ctx context.Context, req *Request) (*Response, error) {
		return &Response{Payload: []byte("ignored")}, errors.New("db down")
	})
	resp := invoke(t, &Request{Command: "test-plain-error"})
	if resp.Status != abi.StatusInternalError || !resp.AppError || resp.Message != "db down" {
		t.Errorf("got status %d apErr %t message %q, want 500 app error %q", resp.Status, resp.AppError, resp.Message, "db down")
	}
	if len(resp.Payload) != 0 {
		t.Errorf("error response kept the handler's payload %q", resp.Payload)
	}
}

func TestInvokeProtocolErrors(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		status    abi.Status
		appError  bool
		message   string // substring
		propName  string
		propValue string
	}{
		{"invalid payload", InvalidPayload("not JSON"), abi.StatusBadRequest, false, "not JSON", "", ""},
		{"wrapped invalid payload", fmt.Errorf("parsing: %w", InvalidPayload("bad field")), abi.StatusBadRequest, false, "bad field", "", ""},
		{"unsupported content type", UnsupportedContentType("text/csv"), abi.StatusUnsupportedType, false, "unsupported content type", "Content Type", "text/csv"},
		{"error with property", &Error{Status: abi.StatusBadRequest, Message: "m", PropName: "p", PropValue: "v"}, abi.StatusBadRequest, false, "m", "p", "v"},
		// Statuses an *Error cannot carry fall back to an application error.
		{"NewError 500", NewError(abi.StatusInternalError, "exploded"), abi.StatusInternalError, true, "exploded", "", ""},
		{"NewError reserved 503", NewError(abi.StatusServiceUnavailable, "busy"), abi.StatusInternalError, true, "busy", "", ""},
		{"NewError 200", NewError(abi.StatusOK, "fine?"), abi.StatusInternalError, true, "fine?", "", ""},
		{"NewError 204", NewError(abi.StatusNoContent, "none"), abi.StatusInternalError, true, "none", "", ""},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("test-protocol-error-%d", i)
			register(t, name, func(ctx context.Context, req *Request) (*Response, error) { return nil, c.err })
			resp := invoke(t, &Request{Command: name})
			if resp.Code() != c.status || resp.AppError != c.appError {
				t.Errorf("status %d apErr %t, want %d apErr %t", resp.Code(), resp.AppError, c.status, c.appError)
			}
			if !strings.Contains(resp.Message, c.message) {
				t.Errorf("message %q does not contain %q", resp.Message, c.message)
			}
			if resp.PropName != c.propName || resp.PropValue != c.propValue {
				t.Errorf("property %q=%q, want %q=%q", resp.PropName, resp.PropValue, c.propName, c.propValue)
			}
		})
	}
}

func TestInvokeNilResponse(t *testing.T) {
	register(t, "test-nil-response", func(ctx context.Context, req *Request) (*Response, error) { return nil, nil })
	resp := invoke(t, &Request{Command: "test-nil-response", Payload: []byte("x")})
	if resp.Code() != abi.StatusOK || resp.Status != 0 || resp.AppError || len(resp.Payload) != 0 || resp.TTL != nil {
		t.Errorf("nil response became %#v, want an empty 200", resp)
	}
}

func TestInvokeResponseTTL(t *testing.T) {
	var next *time.Duration
	register(t, "test-ttl", func(ctx context.Context, req *Request) (*Response, error) { return &Response{TTL: next}, nil })
	for _, d := range []*time.Duration{nil, TTL(0), TTL(90 * time.Second)} {
		next = d
		resp := invoke(t, &Request{Command: "test-ttl"})
		if (resp.TTL == nil) != (d == nil) || (d != nil && *resp.TTL != *d) {
			t.Errorf("TTL %v came back as %v", d, resp.TTL)
		}
	}
}

// A handler that returns a response the host would refuse gets, instead,
// an application error that names the broken rule: the caller learns why,
// and the instance is not lost to a host fault.
func TestInvokeInvalidResponse(t *testing.T) {
	cases := []struct {
		bad  *Response
		rule string
	}{
		{&Response{Status: abi.StatusServiceUnavailable}, "reserved for the host"},
		{&Response{Status: abi.StatusNoContent, Payload: []byte("x")}, "status 204"},
		{&Response{Metadata: map[string]string{"__apErr": "x"}}, "__apErr"},
		{&Response{TTL: TTL(-time.Second)}, "negative TTL"},
	}
	for i, c := range cases {
		name := fmt.Sprintf("test-invalid-response-%d", i)
		register(t, name, func(ctx context.Context, req *Request) (*Response, error) { return c.bad, nil })
		resp, err := Invoke(&Request{Command: name})
		if err != nil || resp.Code() != abi.StatusInternalError || !resp.AppError ||
			!strings.Contains(resp.Message, "invalid response") || !strings.Contains(resp.Message, c.rule) {
			t.Errorf("%+v: got %+v, %v; want a 500 application error naming %q", c.bad, resp, err, c.rule)
		}
	}
}

// A typed nil *Error is still an error, not a crash.
func TestInvokeTypedNilError(t *testing.T) {
	register(t, "test-typed-nil", func(ctx context.Context, req *Request) (*Response, error) {
		var e *Error
		return nil, e
	})
	resp, err := Invoke(&Request{Command: "test-typed-nil"})
	if err != nil || !resp.AppError {
		t.Fatalf("got %+v, %v; want an application error", resp, err)
	}
}

func TestInvokeUnknownCommand(t *testing.T) {
	_, err := Invoke(&Request{Command: "test-not-registered"})
	if err == nil || !strings.Contains(err.Error(), "test-not-registered") {
		t.Errorf("unknown command: %v", err)
	}
	if _, err := Invoke(&Request{}); err == nil {
		t.Error("a request without a command was accepted")
	}
}

func TestInvokeDeadline(t *testing.T) {
	type seen struct {
		deadline  time.Time
		ok        bool
		remaining time.Duration
		reqDL     time.Time
		ctxErr    error
	}
	var s seen
	register(t, "test-deadline", func(ctx context.Context, req *Request) (*Response, error) {
		s.deadline, s.ok = ctx.Deadline()
		s.remaining = Remaining(ctx)
		s.reqDL = req.Deadline
		s.ctxErr = ctx.Err()
		return nil, nil
	})

	t.Run("future", func(t *testing.T) {
		deadline := time.Now().Add(time.Minute)
		invoke(t, &Request{Command: "test-deadline", Deadline: deadline})
		if !s.ok || !s.deadline.Equal(deadline) {
			t.Errorf("ctx deadline %v (set %t), want %v", s.deadline, s.ok, deadline)
		}
		if !s.reqDL.Equal(deadline) {
			t.Errorf("req.Deadline %v, want %v", s.reqDL, deadline)
		}
		if s.remaining <= 50*time.Second || s.remaining > time.Minute {
			t.Errorf("Remaining = %v, want just under 1m", s.remaining)
		}
		if s.ctxErr != nil {
			t.Errorf("ctx already done: %v", s.ctxErr)
		}
	})
	t.Run("nanoseconds kept", func(t *testing.T) {
		deadline := time.Unix(4_000_000_000, 123_456_789)
		invoke(t, &Request{Command: "test-deadline", Deadline: deadline})
		if !s.deadline.Equal(deadline) {
			t.Errorf("ctx deadline %v, want %v", s.deadline, deadline)
		}
	})
	t.Run("past", func(t *testing.T) {
		invoke(t, &Request{Command: "test-deadline", Deadline: time.Now().Add(-time.Second)})
		if !errors.Is(s.ctxErr, context.DeadlineExceeded) {
			t.Errorf("ctx.Err() = %v, want DeadlineExceeded", s.ctxErr)
		}
		if s.remaining > 0 {
			t.Errorf("Remaining = %v past the deadline", s.remaining)
		}
	})
	t.Run("none", func(t *testing.T) {
		invoke(t, &Request{Command: "test-deadline"})
		if s.ok {
			t.Errorf("ctx has deadline %v, want none", s.deadline)
		}
		if !s.reqDL.IsZero() {
			t.Errorf("req.Deadline = %v, want zero", s.reqDL)
		}
		if s.remaining < 100*365*24*time.Hour {
			t.Errorf("Remaining without a deadline = %v, want a large value", s.remaining)
		}
	})
}

func TestRemainingWithoutInvoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if r := Remaining(ctx); r <= 59*time.Minute || r > time.Hour {
		t.Errorf("Remaining = %v", r)
	}
}

func TestVars(t *testing.T) {
	const key, counter, text, big = "test-vars-key", "test-vars-counter", "test-vars-text", "test-vars-big"
	clearVars(t, key, counter, text, big)

	if v, ok, err := GetVar(key); ok || err != nil || v != nil {
		t.Fatalf("GetVar of an unset key = %q, %t, %v", v, ok, err)
	}
	if err := SetVar(key, []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := GetVar(key); !ok || err != nil || string(v) != "v1" {
		t.Fatalf("GetVar = %q, %t, %v", v, ok, err)
	}
	if err := SetVar(key, nil); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := GetVar(key); !ok || err != nil || len(v) != 0 {
		t.Errorf("empty value: GetVar = %q, %t, %v", v, ok, err)
	}

	// Larger than readSized's first buffer.
	large := bytes.Repeat([]byte("0123456789"), 100)
	if err := SetVar(big, large); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := GetVar(big); !ok || err != nil || !bytes.Equal(v, large) {
		t.Errorf("large value: got %d bytes, %t, %v", len(v), ok, err)
	}

	// SetVar copies the value.
	val := []byte("orig")
	if err := SetVar(key, val); err != nil {
		t.Fatal(err)
	}
	val[0] = 'X'
	if v, _, _ := GetVar(key); string(v) != "orig" {
		t.Errorf("SetVar kept the caller's slice: %q", v)
	}

	for i, want := range []int64{5, 3, 1003} {
		delta := []int64{5, -2, 1000}[i]
		n, err := AddVar(counter, delta)
		if err != nil || n != want {
			t.Fatalf("AddVar(%d) = %d, %v, want %d", delta, n, err, want)
		}
	}
	if v, _, _ := GetVar(counter); string(v) != "1003" {
		t.Errorf("counter stored as %q, want decimal 1003", v)
	}
	if err := SetVar(counter, []byte("-7")); err != nil {
		t.Fatal(err)
	}
	if n, err := AddVar(counter, 0); err != nil || n != -7 {
		t.Errorf("AddVar on \"-7\" = %d, %v", n, err)
	}

	if err := SetVar(text, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if _, err := AddVar(text, 1); !errors.Is(err, ErrVarNotInteger) {
		t.Errorf("AddVar on a non-integer: %v, want ErrVarNotInteger", err)
	}
	if v, _, _ := GetVar(text); string(v) != "abc" {
		t.Errorf("failed AddVar changed the value to %q", v)
	}
}

// Variables used from inside a handler, through Invoke.
func TestVarsFromHandler(t *testing.T) {
	const key = "test-vars-handler-hits"
	clearVars(t, key)
	register(t, "test-counter", func(ctx context.Context, req *Request) (*Response, error) {
		n, err := AddVar(key, 1)
		if err != nil {
			return nil, err
		}
		return &Response{Payload: fmt.Appendf(nil, "%d", n)}, nil
	})
	for want := 1; want <= 3; want++ {
		if resp := invoke(t, &Request{Command: "test-counter"}); string(resp.Payload) != fmt.Sprint(want) {
			t.Errorf("hit %d: payload %q", want, resp.Payload)
		}
	}
	if err := SetVar(key, []byte("not a number")); err != nil {
		t.Fatal(err)
	}
	resp := invoke(t, &Request{Command: "test-counter"})
	if !resp.AppError || resp.Message != ErrVarNotInteger.Error() {
		t.Errorf("got %#v, want an app error %q", resp, ErrVarNotInteger)
	}
}

func TestConfig(t *testing.T) {
	long := strings.Repeat("z", 1000)
	SetTestConfig(map[string]string{"url": "mqtt://broker:1883", "empty": "", "long": long})
	t.Cleanup(func() { SetTestConfig(nil) })

	for key, want := range map[string]string{"url": "mqtt://broker:1883", "empty": "", "long": long} {
		if got, ok := Config(key); !ok || got != want {
			t.Errorf("Config(%q) = %q, %t, want %q", key, got, ok, want)
		}
	}
	if got, ok := Config("missing"); ok || got != "" {
		t.Errorf("Config(missing) = %q, %t", got, ok)
	}

	SetTestConfig(nil)
	if _, ok := Config("url"); ok {
		t.Error("Config after SetTestConfig(nil) still finds url")
	}
}

func TestLogDoesNotPanic(t *testing.T) {
	Debugf("debug %d", 1)
	Infof("info %s", "x")
	Warnf("warn")
	Errorf("error %v", errors.New("e"))
	Log(abi.LevelInfo, "")
}

func TestDescription(t *testing.T) {
	isolateRegistry(t)
	Handle("d-echo", echo)
	Handle("d-lookup", echo, Idempotent(), ResponseTTL(time.Minute), ContentTypes("application/json"),
		ContentTypes("text/plain"), Timeout(3*time.Second), Topic("svc/{site}/lookup"))
	if registry.err != nil {
		t.Fatal(registry.err)
	}
	buf, err := description()
	if err != nil {
		t.Fatalf("description: %v", err)
	}
	d, err := abi.DecodeDescription(buf)
	if err != nil {
		t.Fatalf("description does not decode: %v", err)
	}
	want := []abi.Command{
		{Name: "d-echo"},
		{Name: "d-lookup", Idempotent: true, ResponseTTL: time.Minute, ContentTypes: []string{"application/json", "text/plain"},
			Timeout: 3 * time.Second, Topic: "svc/{site}/lookup"},
	}
	if d.Version != abi.Version || !reflect.DeepEqual(d.Commands, want) {
		t.Errorf("description %#v\nwant commands %#v", d, want)
	}
}

func TestDescriptionErrors(t *testing.T) {
	cases := []struct {
		name     string
		register func()
		want     []string // substrings of description()'s error
	}{
		{"no commands", func() {}, []string{"no commands registered", "in an init function"}},
		{"duplicate", func() {
			Handle("dup-cmd", echo)
			Handle("dup-cmd", echo)
		}, []string{`"dup-cmd"`, "twice"}},
		{"invalid name", func() { Handle("bad/name", echo) }, []string{`"bad/name"`}},
		{"invalid name after a good one", func() {
			Handle("fine", echo)
			Handle("bad+name", echo)
			Handle("later", echo) // ignored: the first error sticks
		}, []string{`"bad+name"`}},
		{"nil handler", func() { Handle("no-handler", nil) }, []string{`"no-handler"`, "nil handler"}},
		{"ttl without idempotent", func() { Handle("ttl-cmd", echo, ResponseTTL(time.Second)) }, []string{`"ttl-cmd"`, "idempotent"}},
		{"wildcard topic", func() { Handle("topic-cmd", echo, Topic("a/+")) }, []string{`"topic-cmd"`}},
		{"empty content type", func() { Handle("ct-cmd", echo, ContentTypes("")) }, []string{`"ct-cmd"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			isolateRegistry(t)
			c.register()
			buf, err := description()
			if err == nil {
				t.Fatalf("description() = % x, want an error", buf)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "envelope") {
				t.Errorf("error %q talks of the envelope; an author registered a command", err)
			}
		})
	}
	// The registry the other tests use is back and usable.
	register(t, "test-after-description-errors", echo)
	if resp := invoke(t, &Request{Command: "test-after-description-errors", Payload: []byte("ok")}); string(resp.Payload) != "ok" {
		t.Errorf("registry not restored: %#v", resp)
	}
}

func BenchmarkInvokeEcho(b *testing.B) {
	register(b, "bench-echo", echo)
	req := &Request{
		Command:     "bench-echo",
		Payload:     bytes.Repeat([]byte("x"), 1024),
		ContentType: "application/octet-stream",
		Metadata:    map[string]string{"trace": "abc"},
		Deadline:    time.Now().Add(time.Hour),
	}
	b.SetBytes(int64(len(req.Payload)))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := Invoke(req)
		if err != nil || len(resp.Payload) != len(req.Payload) {
			b.Fatalf("Invoke: %v", err)
		}
	}
}

// TestOnMessage: a trigger is a command of the description with its
// filter, named by Name or after its filter; its handler's nil is a 204
// and its error an application error (the host runs it again).
func TestOnMessage(t *testing.T) {
	isolateRegistry(t)
	var got *Request
	OnMessage("sensors/{device}/temp", func(ctx context.Context, m *Request) error {
		got = m
		if string(m.Payload) == "bad" {
			return errors.New("bad reading")
		}
		return nil
	}, Name("on-temp"), Timeout(2*time.Second))
	OnMessage("alarms/+/#", func(context.Context, *Request) error { return nil })
	Handle("t-echo", echo)
	if registry.err != nil {
		t.Fatal(registry.err)
	}
	buf, err := description()
	if err != nil {
		t.Fatalf("description: %v", err)
	}
	d, err := abi.DecodeDescription(buf)
	if err != nil {
		t.Fatal(err)
	}
	want := []abi.Command{
		{Name: "on-temp", Trigger: "sensors/{device}/temp", Timeout: 2 * time.Second},
		{Name: "alarms.any.all", Trigger: "alarms/+/#"},
		{Name: "t-echo"},
	}
	if !reflect.DeepEqual(d.Commands, want) {
		t.Fatalf("commands %#v\nwant %#v", d.Commands, want)
	}
	msg := &Request{Command: "on-temp", Topic: "sensors/d1/temp", TopicTokens: map[string]string{"device": "d1"}, Payload: []byte("21.5")}
	if resp := invoke(t, msg); resp.Status != abi.StatusNoContent || got.Topic != "sensors/d1/temp" || got.TopicTokens["device"] != "d1" {
		t.Errorf("handled: %#v, the handler saw %#v", resp, got)
	}
	msg.Payload = []byte("bad")
	if resp := invoke(t, msg); resp.Status != abi.StatusInternalError || !resp.AppError || resp.Message != "bad reading" {
		t.Errorf("failed: %#v", resp)
	}
}

func TestOnMessageErrors(t *testing.T) {
	cases := map[string]struct {
		register func()
		want     string
	}{
		"nil handler": {func() { OnMessage("a/b", nil) }, "nil handler"},
		"twice": {func() {
			OnMessage("a/b", func(context.Context, *Request) error { return nil })
			OnMessage("a/b", func(context.Context, *Request) error { return nil })
		}, `trigger "a.b" registered twice`},
		"a bad filter": {func() { OnMessage("a/#/b", func(context.Context, *Request) error { return nil }, Name("t")) }, "# must be the last level"},
		"a bad name":   {func() { OnMessage("a/b", func(context.Context, *Request) error { return nil }, Name("x/y")) }, "sdk.Name"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			isolateRegistry(t)
			c.register()
			if _, err := description(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("description error %v, want %q", err, c.want)
			}
		})
	}
}
