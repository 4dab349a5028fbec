package rpc

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/session"
)

// rawEcho is a raw handler that answers with the reserved properties it
// got (JSON) and, as its __ts, the value of its request's "give-ts" user
// property ("": none).
func rawEcho(runs *atomic.Int64) RawHandler {
	return func(_ context.Context, req *RawRequest) (*RawResponse, error) {
		runs.Add(1)
		b, _ := json.Marshal(req.Reserved)
		return &RawResponse{Response: abi.Response{Payload: b}, Timestamp: req.Metadata["give-ts"]}, nil
	}
}

// A raw command gets the request's reserved properties (the broker's
// stamps left out), judges its __ts itself (a malformed or drifting one
// reaches the handler: no 400, no 503), and its reply's __ts is the
// handler's, absent when it gives none; a duplicate gets that same reply
// without running it again. A header the envelope refuses is still the
// executor's status.
func TestRawCommand(t *testing.T) {
	var runs atomic.Int64
	h := start(t, Config{}, Command{Name: "raw", Raw: rawEcho(&runs)})
	far := hlc.Timestamp{Millis: time.Unix(1_800_000_000, 0).Add(time.Hour).UnixMilli(), NodeID: "inv"}.String()
	cases := []struct {
		name   string
		props  []packets.User
		status string
		ts     string // the reply's __ts; "": none
	}{
		{"no timestamp, none given back", nil, "200", ""},
		{"malformed timestamp", []packets.User{{Key: "__ts", Value: "NotValid"}}, "200", ""},
		{"drifting timestamp", []packets.User{{Key: "__ts", Value: far}}, "200", ""},
		{"the handler's timestamp", []packets.User{{Key: "__ft", Value: "f"}, {Key: "give-ts", Value: "000000000000042:00007:store"}}, "200", "000000000000042:00007:store"},
		{"stamps hidden", []packets.User{{Key: BrokerClientIDProperty, Value: "forged"}, {Key: BrokerUserProperty, Value: "forged"}}, "200", ""},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			resp := h.roundTrip(req("rpc/exec-1/raw", byte(i), func(p *packets.Publish) { p.Properties.User = append(p.Properties.User, c.props...) }), i+1)
			if got, _ := user(resp, "__stat"); got != c.status {
				t.Fatalf("__stat %q, want %s", got, c.status)
			}
			if ts, ok := user(resp, "__ts"); ts != c.ts || ok != (c.ts != "") {
				t.Errorf("__ts %q (present %v), want %q", ts, ok, c.ts)
			}
			var got map[string]string
			if err := json.Unmarshal(resp.Payload, &got); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"__protVer": "1.0", "__srcId": "inv-1"}
			for _, p := range c.props {
				if len(p.Key) > 2 && p.Key[:2] == "__" && !isStamp(p.Key) {
					want[p.Key] = p.Value
				}
			}
			if len(got) != len(want) {
				t.Errorf("reserved %v, want %v", got, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("reserved %s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
	h.t = t
	n := len(cases)
	// A duplicate: the first reply, its __ts included, and no second run.
	dup := h.roundTrip(req("rpc/exec-1/raw", 3, func(p *packets.Publish) { p.Properties.User = append(p.Properties.User, cases[3].props...) }), n+1)
	if ts, _ := user(dup, "__ts"); ts != cases[3].ts || runs.Load() != int64(n) {
		t.Errorf("duplicate: __ts %q, %d runs; want %q and %d", ts, runs.Load(), cases[3].ts, n)
	}
	// The envelope's rules hold: no expiry is 400, with the executor's __ts.
	bad := h.roundTrip(req("rpc/exec-1/raw", 99, func(p *packets.Publish) { p.Properties.MessageExpiry = nil }), n+2)
	if st, _ := user(bad, "__stat"); st != "400" {
		t.Errorf("no expiry: __stat %q, want 400", st)
	}
	if ts, _ := user(bad, "__ts"); ts == "" {
		t.Error("the executor's own refusal carries its __ts")
	}
	if runs.Load() != int64(n) {
		t.Errorf("%d runs, want %d", runs.Load(), n)
	}
}

// A raw reply kept for duplicates in a shared store keeps its __ts, or
// its absence.
func TestRawReplyEncodes(t *testing.T) {
	for _, r := range []*reply{{status: 200, payload: []byte("+OK\r\n"), raw: true, ts: "000000000000042:00007:store"}, {status: 200, raw: true}} {
		b, err := encodeReply(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeReply(b)
		if err != nil || got.raw != r.raw || got.ts != r.ts {
			t.Errorf("decoded %+v, %v; want raw %v ts %q", got, err, r.raw, r.ts)
		}
	}
}

// A command gives a handler or a raw handler, one of the two.
func TestRawOrHandler(t *testing.T) {
	var runs atomic.Int64
	for _, c := range []Command{{Name: "none"}, {Name: "both", Handler: echoHandler, Raw: rawEcho(&runs)}} {
		c.Topic = DefaultTopic
		u, _ := url.Parse("mqtt://fake:1883")
		if _, err := NewExecutor(Config{ExecutorID: "x", Session: session.Config{Broker: u}}, []Command{c}); err == nil ||
			!strings.Contains(err.Error(), "one of the two") {
			t.Errorf("command %s: %v", c.Name, err)
		}
	}
}
