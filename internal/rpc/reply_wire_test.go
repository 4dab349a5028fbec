package rpc

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/rpc/rpctest"
	"github.com/cmdhost/cmdhost/internal/session"
)

// dropLog is an Observer that records ReplyDropped calls.
type dropLog struct {
	mu    sync.Mutex
	drops []string // "command/reason"
}

func (d *dropLog) Request(string, int, bool, time.Duration) {}

func (d *dropLog) StoreUnavailable(string, string) {}

func (d *dropLog) ReplyDropped(command, reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.drops = append(d.drops, command+"/"+reason)
}

func (d *dropLog) all() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.drops)
}

// replyOf returns a handler that answers with resp, or fails with err.
func replyOf(resp *abi.Response, err error) Handler {
	return func(context.Context, *abi.Request) (*abi.Response, error) { return resp, err }
}

// wireClean fails unless every string of p can go on the wire and the
// status message is one line within its bound.
func wireClean(t *testing.T, p *packets.Publish) {
	t.Helper()
	for _, s := range []string{p.Topic, p.Properties.ContentType} {
		if problem := session.WireProblem(s); problem != "" {
			t.Errorf("%.60q: %s", s, problem)
		}
	}
	for _, u := range p.Properties.User {
		if problem := metadataProblem(u.Key, u.Value); problem != "" {
			t.Errorf("user property %.60q: %s", u.Key, problem)
		}
	}
	if m, _ := user(p, "__stMsg"); len(m) > MaxStatusMessage || strings.ContainsAny(m, "\r\n") {
		t.Errorf("__stMsg of %d bytes, not one line of at most %d: %.80q", len(m), MaxStatusMessage, m)
	}
}

// A host fault's 500 quotes the first line of its error and points to the
// log; the stack trace after it stays out of the reply.
func TestHostFaultIsOneLine(t *testing.T) {
	trap := errors.New("plugin panic: command panic: trap: wasm error: unreachable\nwasm stack trace:\n\t.runtime.abort(i32) i32\n\t.main.handle(i32) i32")
	h := start(t, Config{}, Command{Name: "trap", Handler: replyOf(nil, trap)})
	resp := h.roundTrip(req("rpc/exec-1/trap", 1), 1)
	wireClean(t, resp)
	m, _ := user(resp, "__stMsg")
	if want := "plugin panic: command panic: trap: wasm error: unreachable (details in the host log)"; m != want {
		t.Fatalf("__stMsg %q, want %q", m, want)
	}
}

// The host's text in a reply is cleaned and bounded, whoever wrote it: a
// handler's message, a StatusError's, a fault's first line.
func TestReplyTextCleaned(t *testing.T) {
	hostile := "two\nlines\x00 \x7f\u0085\ufdd0\uffff" + strings.Repeat("€", 1000)
	h := start(t, Config{},
		Command{Name: "app", Handler: replyOf(&abi.Response{Status: abi.StatusInternalError, AppError: true, Message: hostile}, nil)},
		Command{Name: "status", Handler: replyOf(nil, &StatusError{Status: abi.StatusServiceUnavailable, Message: hostile})},
		Command{Name: "bad", Handler: replyOf(&abi.Response{Status: abi.StatusBadRequest, Message: "bad", PropName: "x\ny", PropValue: hostile}, nil)},
		Command{Name: "fault", Handler: replyOf(nil, errors.New(strings.Repeat("\xff", 2000)))},
	)
	for i, cmd := range []string{"app", "status", "bad", "fault"} {
		resp := h.roundTrip(req("rpc/exec-1/"+cmd, byte(i+1)), i+1)
		wireClean(t, resp)
		m, _ := user(resp, "__stMsg")
		switch cmd {
		case "app", "status":
			if !strings.HasPrefix(m, "two lines\ufffd \ufffd \ufffd\ufffd€") || !strings.Contains(m, "…") {
				t.Errorf("%s: __stMsg %.80q", cmd, m)
			}
		case "bad":
			name, _ := user(resp, "__propName")
			value, _ := user(resp, "__propVal")
			if name != "x y" || len(value) > MaxPropertyValue || !strings.HasSuffix(value, "€…") {
				t.Errorf("bad: __propName %q, __propVal of %d bytes ending %q", name, len(value), value[max(len(value)-8, 0):])
			}
		case "fault":
			if !strings.HasSuffix(m, "… (details in the host log)") {
				t.Errorf("fault: __stMsg %.80q", m)
			}
		}
	}
}

// A metadata pair that cannot be sent as it is, is left out; the others
// go out.
func TestUnsendableMetadataLeftOut(t *testing.T) {
	md := map[string]string{
		"ok": "fine", "ctl-value": "a\nb", "bad\x01key": "v", "not-utf8": "\xff",
		"long-value": strings.Repeat("x", MaxMetadataValue+1), strings.Repeat("k", MaxMetadataKey+1): "v",
		"max-value": strings.Repeat("x", MaxMetadataValue),
	}
	h := start(t, Config{}, Command{Name: "md", Handler: replyOf(&abi.Response{Payload: []byte("x"), Metadata: md}, nil)})
	resp := h.roundTrip(req("rpc/exec-1/md", 1), 1)
	wireClean(t, resp)
	if s, _ := user(resp, "__stat"); s != "200" {
		t.Fatalf("__stat %s", s)
	}
	var keys []string
	for _, u := range resp.Properties.User {
		if !strings.HasPrefix(u.Key, "__") && u.Key != propHighPriority { // the host's own
			keys = append(keys, u.Key)
		}
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"max-value", "ok"}) {
		t.Fatalf("metadata sent: %q", keys)
	}
}

// A reply the broker would refuse (a content type it refuses) or that
// breaks the protocol (a payload marked UTF-8 that is not) is replaced by
// a short 500, counted; the request is acked.
func TestUnsendableReplyReplaced(t *testing.T) {
	drops := &dropLog{}
	h := start(t, Config{Observer: drops},
		Command{Name: "ctype", Handler: replyOf(&abi.Response{Payload: []byte("x"), ContentType: "text/plain\nX-Injected: 1"}, nil)},
		Command{Name: "format", Handler: replyOf(&abi.Response{Payload: []byte("caf\xe9"), Format: abi.FormatUTF8}, nil)},
	)
	for i, c := range []struct{ cmd, want string }{
		{"ctype", `the reply cannot be sent: content type "text/plain\nX-Injected: 1": character U+000A at offset 10`},
		{"format", "the reply cannot be sent: the payload is marked UTF-8 (payload format indicator 1) but is not"},
	} {
		resp := h.roundTrip(req("rpc/exec-1/"+c.cmd, byte(i+1)), i+1)
		wireClean(t, resp)
		s, _ := user(resp, "__stat")
		m, _ := user(resp, "__stMsg")
		if s != "500" || !strings.HasPrefix(m, c.want) || len(resp.Payload) != 0 || resp.Properties.ContentType != "" || resp.Properties.PayloadFormat != nil {
			t.Errorf("%s: __stat %s __stMsg %q, payload %q, content type %q", c.cmd, s, m, resp.Payload, resp.Properties.ContentType)
		}
	}
	if _, err := h.broker.WaitAcks(ctx(t), 2); err != nil {
		t.Fatal(err)
	}
	if got := drops.all(); !slices.Equal(got, []string{"ctype/invalid", "format/invalid"}) {
		t.Fatalf("drops counted: %v", got)
	}
}

// A reply larger than the broker's Maximum Packet Size (from its CONNACK)
// is replaced by a short 500 that fits; when not even that fits, nothing
// is published. Both are counted, and both requests are acked.
func TestReplyOverMaximumPacketSize(t *testing.T) {
	b := rpctest.NewBroker()
	b.SetMaximumPacketSize(1000)
	drops := &dropLog{}
	h := startOn(t, b, Config{Observer: drops}, Command{Name: "echo", Handler: echoHandler})
	big := req("rpc/exec-1/echo", 1, func(p *packets.Publish) { p.Payload = make([]byte, 1000) })
	resp := h.roundTrip(big, 1)
	wireClean(t, resp)
	s, _ := user(resp, "__stat")
	m, _ := user(resp, "__stMsg")
	if s != "500" || !strings.Contains(m, "more than the broker's maximum packet size of 1000") || len(resp.Payload) != 0 {
		t.Fatalf("__stat %s __stMsg %q, %d-byte payload", s, m, len(resp.Payload))
	}
	var encoded bytes.Buffer
	if _, err := paho.PublishFromPacketPublish(resp).Packet().WriteTo(&encoded); err != nil {
		t.Fatal(err)
	}
	if n := encoded.Len(); n > 1000 {
		t.Fatalf("the 500 is %d bytes", n)
	}
	// A response topic so long that no reply fits: none is sent.
	long := req("rpc/exec-1/echo", 2, func(p *packets.Publish) { p.Properties.ResponseTopic = "r/" + strings.Repeat("t", 1000) })
	if _, err := b.Deliver(long); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitAcks(ctx(t), 2); err != nil {
		t.Fatal(err)
	}
	if n := len(b.Published()); n != 1 {
		t.Fatalf("%d replies published, want only the first", n)
	}
	if got := drops.all(); !slices.Equal(got, []string{"echo/too_large", "echo/too_large"}) {
		t.Fatalf("drops counted: %v", got)
	}
}

// Request side: a payload marked UTF-8 that is not gets 400 before it
// reaches the handler; an over-long version or timestamp is quoted cut.
func TestRequestHeaderValuesBounded(t *testing.T) {
	ran := make(chan struct{}, 1)
	h := start(t, Config{}, Command{Name: "echo", Handler: func(ctx context.Context, r *abi.Request) (*abi.Response, error) {
		ran <- struct{}{}
		return echoHandler(ctx, r)
	}})
	one := byte(1)
	resp := h.roundTrip(req("rpc/exec-1/echo", 1, func(p *packets.Publish) {
		p.Payload, p.Properties.PayloadFormat = []byte("caf\xe9"), &one
	}), 1)
	s, _ := user(resp, "__stat")
	name, _ := user(resp, "__propName")
	if _, apErr := user(resp, "__apErr"); s != "400" || name != "Payload Format Indicator" || apErr {
		t.Fatalf("__stat %s __propName %q __apErr %t", s, name, apErr)
	}
	if len(ran) != 0 {
		t.Fatal("the handler ran")
	}

	long := strings.Repeat("€", 65535/3)
	resp = h.roundTrip(req("rpc/exec-1/echo", 2, func(p *packets.Publish) {
		p.Properties.User = []packets.User{{Key: "__protVer", Value: long}}
	}), 2)
	wireClean(t, resp)
	if s, _ := user(resp, "__stat"); s != "505" {
		t.Fatalf("__stat %s", s)
	}
	if v, _ := user(resp, "__requestProtVer"); len(v) > MaxPropertyValue || !strings.HasSuffix(v, "€…") {
		t.Errorf("__requestProtVer of %d bytes", len(v))
	}
	if m, _ := user(resp, "__stMsg"); !strings.HasPrefix(m, "protocol version €") || !strings.HasSuffix(m, "€ is not supported") {
		t.Errorf("__stMsg %.60q…", m)
	}

	resp = h.roundTrip(req("rpc/exec-1/echo", 3, func(p *packets.Publish) {
		p.Properties.User = []packets.User{{Key: "__ts", Value: long}}
	}), 3)
	wireClean(t, resp)
	if s, _ := user(resp, "__stat"); s != "400" {
		t.Fatalf("__stat %s", s)
	}
	if v, _ := user(resp, "__propVal"); len(v) > MaxPropertyValue || !strings.HasSuffix(v, "€…") {
		t.Errorf("__propVal of %d bytes", len(v))
	}
}
