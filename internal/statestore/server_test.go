package statestore

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// t0 is the tests' frozen time.
var t0 = time.Unix(1_800_000_000, 0)

// resp is a request's RESP3 array of bulk strings.
func resp(args ...string) []byte {
	var b bytes.Buffer
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	return b.Bytes()
}

// fixture is a server over a real Disk in a temp folder, on a frozen
// clock.
type fixture struct {
	t     *testing.T
	disk  *state.Disk
	clock *testkit.Clock
	srv   *Server
}

func newFixture(t *testing.T, adjust func(*Config)) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: testkit.NewClock(t0)}
	var err error
	if f.disk, err = state.OpenDisk(state.DiskConfig{Dir: t.TempDir(), Clock: f.clock, SweepEvery: time.Hour}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.disk.Close() })
	cfg := Config{Store: f.disk, Clock: f.clock,
		Publish: func(context.Context, string, []byte, string) error { return nil }}
	if adjust != nil {
		adjust(&cfg)
	}
	if f.srv, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.srv.Close)
	return f
}

// ts is an HLC d after t0.
func ts(d time.Duration) string {
	return hlc.Timestamp{Millis: t0.Add(d).UnixMilli(), NodeID: "client"}.String()
}

// call sends payload with the reserved properties props (a nil map:
// just a __ts a second before t0) as client c1 and returns the reply's
// payload and __ts.
func (f *fixture) call(payload []byte, props map[string]string) (string, string) {
	f.t.Helper()
	if props == nil {
		props = map[string]string{"__ts": ts(-time.Second)}
	}
	r, err := f.srv.Handle(context.Background(), &rpc.RawRequest{
		Request:  &abi.Request{Payload: payload, Caller: abi.Caller{ClientID: "c1"}},
		Reserved: props,
	})
	if err != nil {
		f.t.Fatalf("%q: %v", payload, err)
	}
	if r.Status != 0 && r.Status != abi.StatusOK || r.ContentType != ContentType {
		f.t.Fatalf("%q: status %d, content type %q", payload, r.Status, r.ContentType)
	}
	return string(r.Payload), r.Timestamp
}

// v is the version VersionOf(t0, n) as the replies write it.
func v(n uint16) string { return versionString(state.VersionOf(t0.UnixMilli(), n), DefaultNodeID) }

// Exact reply bytes and __ts, present or absent, for every command and
// outcome, in order on one store: versions are the store's, t0 and a
// counter on the frozen clock.
func TestReplies(t *testing.T) {
	f := newFixture(t, func(c *Config) {
		c.Authorize = func(_ abi.Caller, key []byte, write bool) bool { return !write || !bytes.HasPrefix(key, []byte("ro/")) }
		c.Quota = func(ns string) state.Quota {
			if ns == "shared/tiny" {
				return state.Quota{MaxKeys: 1}
			}
			return state.Quota{}
		}
	})
	ft := func(d time.Duration) map[string]string {
		return map[string]string{"__ts": ts(-time.Second), "__ft": ts(d)}
	}
	bin := "k\x00\r\n$3\r\n"
	for i, c := range []struct {
		payload []byte
		props   map[string]string
		want    string
		ts      string // "" : no __ts
	}{
		{resp("SET", "k", "v"), nil, "+OK\r\n", v(0)},
		{resp("GET", "k"), nil, "$1\r\nv\r\n", v(0)},
		{resp("get", "k"), map[string]string{}, "$1\r\nv\r\n", v(0)}, // any case; GET needs no __ts
		{resp("SET", "k", "v", "NX"), nil, ":-1\r\n", v(0)},
		{resp("SET", "k", "w", "NEX"), nil, ":-1\r\n", v(0)},
		{resp("SET", "k", "v", "NEX"), nil, "+OK\r\n", v(1)}, // the same value: renewed, a new version
		{resp("SET", "k2", "x", "PX", "60000", "nx"), nil, "+OK\r\n", v(2)},
		{resp("DEL", "k2"), nil, ":1\r\n", v(3)},
		{resp("DEL", "k2"), nil, ":0\r\n", ""},
		{resp("VDEL", "k", "nope"), nil, ":-1\r\n", v(1)},
		{resp("VDEL", "k", "v"), nil, ":1\r\n", v(4)},
		{resp("VDEL", "k", "v"), nil, ":0\r\n", ""},
		{resp("GET", "k"), nil, "$-1\r\n", ""},
		{resp("SET", "e", ""), nil, "+OK\r\n", v(5)},
		{resp("GET", "e"), nil, "$0\r\n\r\n", v(5)},
		{resp("SET", bin, "a\r\nb"), nil, "+OK\r\n", v(6)},
		{resp("GET", bin), nil, "$4\r\na\r\nb\r\n", v(6)},
		{resp("KEYNOTIFY", "k"), nil, "+OK\r\n", ""},
		{resp("KEYNOTIFY", "k"), nil, "+OK\r\n", ""},
		{resp("KEYNOTIFY", "k", "STOP"), nil, "+OK\r\n", ""},
		{resp("KEYNOTIFY", "k", "STOP"), nil, ":0\r\n", ""},
		// Fencing: the first token stays with the key; a write needs one,
		// not older; the key's end ends the fence.
		{resp("SET", "f", "1"), ft(-10 * time.Second), "+OK\r\n", v(7)},
		{resp("SET", "f", "2"), nil, "-ERR a fencing token is required for this request\r\n", ""},
		{resp("SET", "f", "2"), ft(-11 * time.Second), "-ERR the request fencing token is a lower version than the fencing token protecting the resource\r\n", ""},
		{resp("SET", "f", "2"), ft(-10 * time.Second), "+OK\r\n", v(8)},
		{resp("SET", "f", "3"), ft(-5 * time.Second), "+OK\r\n", v(9)},
		{resp("DEL", "f"), ft(-10 * time.Second), "-ERR the request fencing token is a lower version than the fencing token protecting the resource\r\n", ""},
		{resp("DEL", "f"), nil, "-ERR a fencing token is required for this request\r\n", ""},
		{resp("VDEL", "f", "1"), ft(-5 * time.Second), ":-1\r\n", v(9)},
		{resp("GET", "f"), nil, "$1\r\n3\r\n", v(9)}, // GET needs no token
		{resp("DEL", "f"), ft(-5 * time.Second), ":1\r\n", v(10)},
		{resp("SET", "f", "4"), nil, "+OK\r\n", v(11)},
		{resp("SET", "f", "5"), ft(-time.Second), "+OK\r\n", v(12)}, // an unfenced key takes a token
		// Keys mapped onto namespaces; grants; quotas; bounds.
		{resp("SET", "plugin/kit-go/x", "p"), nil, "+OK\r\n", v(13)},
		{resp("SET", "shared/tiny/a", "1"), nil, "+OK\r\n", v(14)},
		{resp("SET", "shared/tiny/b", "1"), nil, "-ERR the quota has been exceeded\r\n", ""},
		{resp("SET", "ro/x", "1"), nil, "-ERR not authorized\r\n", ""},
		{resp("DEL", "ro/x"), nil, "-ERR not authorized\r\n", ""},
		{resp("GET", "ro/x"), nil, "$-1\r\n", ""},
		{resp("SET", "plugin/x", "1"), nil, "-ERR invalid: key \"plugin/x\" starts with plugin/ but names no namespace and key: write plugin/NAME/KEY\r\n", ""},
		{resp("SET", strings.Repeat("K", 1025), "1"), nil, "-ERR too large: a key of 1025 bytes is over the bound of 1024\r\n", ""},
		// A version is later than the request's __ts, even one ahead of
		// the store's clock.
		{resp("SET", "later", "1"), map[string]string{"__ts": ts(30 * time.Second)}, "+OK\r\n",
			versionString(state.VersionOf(t0.Add(30*time.Second).UnixMilli(), 1), DefaultNodeID)},
		// The protocol's errors.
		{resp("FOO", "k"), nil, "-ERR unknown command\r\n", ""},
		{resp("KEYNOTIFYX", "k"), nil, "-ERR unknown command\r\n", ""},
		{resp("GET"), nil, "-ERR wrong number of arguments\r\n", ""},
		{resp("GET", "a", "b"), nil, "-ERR wrong number of arguments\r\n", ""},
		{resp("DEL"), nil, "-ERR wrong number of arguments\r\n", ""},
		{resp("SET", "k"), nil, "-ERR wrong number of arguments\r\n", ""},
		{resp("VDEL", "k"), nil, "-ERR wrong number of arguments\r\n", ""},
		{resp("KEYNOTIFY", "k", "STOP", "x"), nil, "-ERR wrong number of arguments\r\n", ""},
		{resp("KEYNOTIFY", "k", "GO"), nil, "-ERR syntax error\r\n", ""},
		{resp("SET", "k", "v", "XX"), nil, "-ERR syntax error\r\n", ""},
		{resp("SET", "k", "v", "NX", "NEX"), nil, "-ERR syntax error\r\n", ""},
		{resp("SET", "k", "v", "PX"), nil, "-ERR syntax error\r\n", ""},
		{resp("SET", "k", "v", "PX", "-1"), nil, "-ERR syntax error\r\n", ""},
		{resp("SET", "k", "v", "PX", "1e3"), nil, "-ERR syntax error\r\n", ""},
		{resp("SET", "k", "v", "PX", "10", "PX", "10"), nil, "-ERR syntax error\r\n", ""},
		{resp("GET", ""), nil, "-ERR the key length is zero\r\n", ""},
		{resp("SET", "k", "v"), map[string]string{}, "-ERR missing timestamp\r\n", ""},
		{resp("SET", "k", "v"), map[string]string{"__ts": "yesterday"}, "-ERR malformed timestamp\r\n", ""},
		{resp("GET", "k"), map[string]string{"__ts": "1:2"}, "-ERR malformed timestamp\r\n", ""},
		{resp("SET", "k", "v"), map[string]string{"__ts": ts(2 * time.Minute)}, "-ERR the request timestamp is too far in the future; ensure that the client and broker system clocks are synchronized\r\n", ""},
		{resp("SET", "k", "v"), map[string]string{"__ts": ts(0), "__ft": "1:x:y"}, "-ERR malformed timestamp\r\n", ""},
		{resp("SET", "new", "v"), map[string]string{"__ts": ts(0), "__ft": ts(10 * 365 * 24 * time.Hour)},
			"-ERR the request fencing token timestamp is too far in the future; ensure that the client and broker system clocks are synchronized\r\n", ""},
		{[]byte("hello"), nil, "-ERR syntax error\r\n", ""},
		{[]byte(""), nil, "-ERR syntax error\r\n", ""},
		{[]byte("*2\r\n$3\r\nGET\r\n$5\r\nab\r\n"), nil, "-ERR syntax error\r\n", ""},
		{append(resp("GET", "k"), 'x'), nil, "-ERR syntax error\r\n", ""},
		{[]byte("*0\r\n"), nil, "-ERR syntax error\r\n", ""},
		{[]byte("*17\r\n"), nil, "-ERR syntax error\r\n", ""},
		{[]byte("*1\r\n$99999999999\r\n"), nil, "-ERR syntax error\r\n", ""},
		{[]byte("*1\r\n:1\r\n"), nil, "-ERR syntax error\r\n", ""},
	} {
		got, gotTS := f.call(c.payload, c.props)
		if got != c.want || gotTS != c.ts {
			t.Errorf("%d: %q: got %q __ts %q; want %q __ts %q", i, c.payload, got, gotTS, c.want, c.ts)
		}
	}
}

// PX: the key expires; GET answers $-1 with no __ts. A PX of 0 (what a
// Go client sends for less than a millisecond) and a fraction (what .NET
// may send) are milliseconds too.
func TestExpiry(t *testing.T) {
	f := newFixture(t, nil)
	for _, c := range []struct{ key, px string }{{"a", "100"}, {"b", "0"}, {"c", "100.75"}} {
		if got, _ := f.call(resp("SET", c.key, "v", "PX", c.px), nil); got != "+OK\r\n" {
			t.Fatalf("SET PX %s: %q", c.px, got)
		}
	}
	if got, _ := f.call(resp("GET", "a"), nil); got != "$1\r\nv\r\n" {
		t.Fatalf("before its expiry: %q", got)
	}
	f.clock.Add(100 * time.Millisecond)
	for _, k := range []string{"a", "b", "c"} {
		if got, gotTS := f.call(resp("GET", k), nil); got != "$-1\r\n" || gotTS != "" {
			t.Errorf("%s after its expiry: %q __ts %q", k, got, gotTS)
		}
	}
}

// A key set through the protocol is the namespace's key the plugin (or
// the store's other users) see, and the other way round.
func TestKeysMapOntoNamespaces(t *testing.T) {
	f := newFixture(t, nil)
	f.call(resp("SET", "plugin/kit-go/greeting", "hi"), nil)
	it, err := f.disk.Get(context.Background(), state.PluginNamespace("kit-go"), []byte("greeting"))
	if err != nil || string(it.Value) != "hi" {
		t.Fatalf("the plugin's namespace holds %q, %v", it.Value, err)
	}
	if _, err := f.disk.Commit(context.Background(), &state.Commit{Ops: []state.Op{{Kind: state.OpSet, NS: state.SharedNamespace("devices"), Key: []byte("d1"), Value: []byte("on")}}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.call(resp("GET", "shared/devices/d1"), nil); got != "$2\r\non\r\n" {
		t.Fatalf("GET shared/devices/d1: %q", got)
	}
	f.call(resp("SET", "app", "1"), nil)
	if _, err := f.disk.Get(context.Background(), state.ProtocolNamespace, []byte("app")); err != nil {
		t.Fatalf("another key is namespace aio's: %v", err)
	}
}

// The ACL line a refusal names.
func TestGrant(t *testing.T) {
	for _, c := range []struct {
		key   string
		write bool
		want  string
	}{
		{"plugin/kit-go/counter", true, "state write plugin/kit-go/"},
		{"shared/devices/a/b", false, "state read shared/devices/"},
		{"app/config", true, "state write app/"},
		{"SOMEKEY", false, "state read SOMEKEY"},
		{"a b", false, `state read "a b"`},
	} {
		if got := Grant([]byte(c.key), c.write); got != c.want {
			t.Errorf("Grant(%q, %v) = %q, want %q", c.key, c.write, got, c.want)
		}
	}
}
