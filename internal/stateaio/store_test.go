package stateaio_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/state/statetest"
	"github.com/cmdhost/cmdhost/internal/stateaio"
	"github.com/cmdhost/cmdhost/internal/statestore"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
)

// The store is tested against cmdhost's own server of the protocol: a
// host with a state store and no plugins serves it on its embedded
// broker (package statestore), as an Azure IoT Operations broker does.

// protocolHost starts such a host and returns its broker.
func protocolHost(t *testing.T) *url.URL {
	t.Helper()
	srv := hosttest.Serve(t, host.Config{
		PluginsDir: t.TempDir(),
		ExecutorID: "aio-server",
		CacheDir:   testkit.CacheDir(),
		Embedded:   host.EmbeddedConfig{Listen: "127.0.0.1:0"},
		Store:      host.StoreConfig{StateDir: t.TempDir()},
	})
	return srv.Broker()
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience())
	t.Cleanup(cancel)
	return ctx
}

// open starts a store of cfg on broker u, closed when the test ends.
func open(t *testing.T, u *url.URL, cfg stateaio.Config) *stateaio.Store {
	t.Helper()
	cfg.Session.Broker = u
	s, err := stateaio.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// openOutcomes is a state folder for the outcomes, closed when the test
// ends.
func openOutcomes(t *testing.T) *state.Disk {
	t.Helper()
	d, err := state.OpenDisk(state.DiskConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// renamed is a store whose namespaces are the table's names under
// shared/PREFIX (a shared namespace of the protocol's key space: the
// store has no other), so that each store the table opens starts empty
// on one server.
type renamed struct {
	*stateaio.Store
	prefix string
}

func (r renamed) ns(ns string) string {
	if ns == "" {
		return ns
	}
	return state.SharedNamespace(r.prefix + ns)
}

func (r renamed) Get(ctx context.Context, ns string, key []byte) (state.Item, error) {
	return r.Store.Get(ctx, r.ns(ns), key)
}

func (r renamed) List(ctx context.Context, ns string, prefix, after []byte, limit int) ([][]byte, bool, error) {
	return r.Store.List(ctx, r.ns(ns), prefix, after, limit)
}

func (r renamed) Usage(ctx context.Context, ns string) (state.Usage, error) {
	return r.Store.Usage(ctx, r.ns(ns))
}

func (r renamed) Commit(ctx context.Context, c *state.Commit) ([]state.Result, error) {
	cc := *c
	cc.Ops = append([]state.Op(nil), c.Ops...)
	for i := range cc.Ops {
		cc.Ops[i].NS = r.ns(cc.Ops[i].NS)
	}
	return r.Store.Commit(ctx, &cc)
}

// What the protocol lacks, as the table's rows skip it.
var lacks = map[statetest.Lack]string{
	statetest.LacksList:       "the protocol has no SCAN",
	statetest.LacksUsage:      "the protocol has no usage: a namespace's quota is not counted",
	statetest.LacksConditions: "the protocol has no compare-and-set (a version condition), and NEX compares with the value set only",
	statetest.LacksSetExisted: "a SET's +OK does not say whether the key existed",
	statetest.LacksItemMeta:   "a GET returns neither the key's expiry nor its fence",
}

// The table every state store runs (statetest), on the rows the protocol
// can do: keys and values (binary, empty), versions from the replies'
// __ts after Commit.After, bounds, expiry (PX), fencing (__ft), outcomes
// kept in a state folder; the rest skipped, saying why.
func TestConformance(t *testing.T) {
	u := protocolHost(t)
	var n atomic.Int64
	statetest.Run(t, func(t *testing.T, limits state.Limits) *statetest.Store {
		s := open(t, u, stateaio.Config{Limits: limits, Outcomes: openOutcomes(t)})
		return &statetest.Store{Backend: renamed{s, fmt.Sprintf("t%d.", n.Add(1))},
			Now: time.Now, Advance: time.Sleep, Reap: func(string) {}, ClockSlack: time.Second, Lacks: lacks}
	})
}

// sdk is a client of the protocol as an Azure SDK application is: its
// requests carry __ts (the invoker's clock) and, given, __ft.
type sdk struct {
	t   *testing.T
	inv *rpc.Invoker
}

func dialSDK(t *testing.T, u *url.URL) *sdk {
	inv, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: session.Config{Broker: u}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inv.Close() })
	return &sdk{t: t, inv: inv}
}

// do sends a request and returns its reply's payload and __ts.
func (c *sdk) do(fence string, args ...string) (string, string) {
	c.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	call := rpc.Call{Topic: statestore.Topic, Payload: []byte(b.String()), ContentType: statestore.ContentType, Timeout: 10 * time.Second}
	if fence != "" {
		call.Metadata = map[string]string{statestore.FencingTokenProperty: fence}
	}
	r, err := c.inv.Invoke(ctxT(c.t), call)
	if err != nil || r.Status != 200 {
		c.t.Fatalf("%q: %+v %v", args, r, err)
	}
	return string(r.Payload), r.Timestamp
}

// version is the store version of a reply's __ts.
func version(t *testing.T, ts string) uint64 {
	t.Helper()
	v, ok := statestore.ParseTimestamp(ts)
	if !ok {
		t.Fatalf("__ts %q", ts)
	}
	return statestore.Version(v)
}

func set(ns, key, value string) state.Op {
	return state.Op{Kind: state.OpSet, NS: ns, Key: []byte(key), Value: []byte(value)}
}

// A namespace's key is the protocol's key an SDK application reads and
// writes (plugin/NAME/KEY, shared/NAME/KEY, the key itself in aio), with
// the version its replies name; a key that would be another namespace's,
// and a namespace the protocol has no keys for, are refused.
func TestKeysAreTheProtocols(t *testing.T) {
	u := protocolHost(t)
	s := open(t, u, stateaio.Config{})
	app := dialSDK(t, u)
	ctx := ctxT(t)
	for _, c := range []struct{ ns, key, protocol string }{
		{state.PluginNamespace("counter"), "visits", "plugin/counter/visits"},
		{state.SharedNamespace("devices"), "d/1", "shared/devices/d/1"},
		{state.ProtocolNamespace, "app/config", "app/config"},
	} {
		res, err := s.Commit(ctx, &state.Commit{Ops: []state.Op{set(c.ns, c.key, "from the store")}})
		if err != nil {
			t.Fatal(err)
		}
		payload, ts := app.do("", "GET", c.protocol)
		if payload != "$14\r\nfrom the store\r\n" || version(t, ts) != res[0].Version {
			t.Fatalf("%s read through the protocol: %q at %s, want the value at version %d", c.protocol, payload, ts, res[0].Version)
		}
		payload, ts = app.do("", "SET", c.protocol, "from the app")
		if payload != "+OK\r\n" {
			t.Fatalf("SET %s: %q", c.protocol, payload)
		}
		if it, err := s.Get(ctx, c.ns, []byte(c.key)); err != nil || string(it.Value) != "from the app" || it.Version != version(t, ts) {
			t.Fatalf("%s/%s after the app's SET: %+v %v, want its value at %s", c.ns, c.key, it, err, ts)
		}
	}
	if _, err := s.Get(ctx, state.PluginNamespace("counter"), []byte("nothing")); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("a key that is not there: %v", err)
	}
	if _, err := s.Get(ctx, state.ProtocolNamespace, []byte("plugin/counter/visits")); !errors.Is(err, state.ErrInvalid) {
		t.Fatalf("a key of aio that is a plugin's: %v", err)
	}
	var le *stateaio.LimitError
	if _, err := s.Commit(ctx, &state.Commit{Ops: []state.Op{set("cache", "k", "v")}}); !errors.As(err, &le) || !errors.Is(err, state.ErrInvalid) {
		t.Fatalf("a namespace the protocol has no keys for: %v", err)
	}
}

// What the protocol cannot do is refused, naming the limit, before
// anything is sent: List, a write on a version (compare-and-set, and so
// an add to a key that exists), two conditional writes in a commit, a
// conditional write after another of its key, a set conditioned on a
// value it does not set, a delete only if absent. A Txn learns it as it
// stages the write. Usage is zero, a SET does not say the key existed.
func TestWhatTheProtocolLacks(t *testing.T) {
	u := protocolHost(t)
	s := open(t, u, stateaio.Config{})
	ctx := ctxT(t)
	ns := state.PluginNamespace("p")
	v := mustCommit(t, s, set(ns, "k", "1"))[0].Version
	var le *stateaio.LimitError
	if _, _, err := s.List(ctx, ns, nil, nil, 10); !errors.As(err, &le) || !errors.Is(err, state.ErrInvalid) || !strings.Contains(err.Error(), "SCAN") {
		t.Fatalf("list: %v", err)
	}
	cond := func(op state.Op, c state.Cond) state.Op { op.If = c; return op }
	del := state.Op{Kind: state.OpDelete, NS: ns, Key: []byte("k")}
	for name, ops := range map[string][]state.Op{
		"a version condition":               {set(ns, "other", "x"), cond(set(ns, "k", "2"), state.Cond{Version: v})},
		"a delete on a version":             {set(ns, "other", "x"), cond(del, state.Cond{Version: v})},
		"two conditional writes":            {cond(set(ns, "a", "x"), state.Cond{Absent: true}), cond(set(ns, "other", "x"), state.Cond{Absent: true})},
		"a conditional write after its key": {set(ns, "other", "x"), cond(set(ns, "other", "y"), state.Cond{Absent: true})},
		"a set on another value":            {set(ns, "other", "x"), cond(set(ns, "k", "2"), state.Cond{HasValue: true, Value: []byte("1")})},
		"a delete only if absent":           {set(ns, "other", "x"), cond(del, state.Cond{Absent: true})},
	} {
		if _, err := s.Commit(ctx, &state.Commit{Ops: ops}); !errors.As(err, &le) || !errors.Is(err, state.ErrInvalid) {
			t.Errorf("%s: %v, want a LimitError", name, err)
		}
	}
	if _, err := s.Get(ctx, ns, []byte("other")); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("a refused commit wrote: %v", err)
	}
	// A call's writes, staged: an add creates (SET NX) and adds to its own
	// write; an add to a key that exists is refused at once.
	tx := state.NewTxn(s, s.Limits(), time.Now)
	sp := state.Space{NS: ns}
	if n, err := tx.Add(ctx, sp, []byte("n"), 1); err != nil || n != 1 {
		t.Fatalf("add to a new key: %d %v", n, err)
	}
	if n, err := tx.Add(ctx, sp, []byte("n"), 1); err != nil || n != 2 {
		t.Fatalf("add to the call's own write: %d %v", n, err)
	}
	if _, err := tx.Commit(ctx, nil, 0); err != nil {
		t.Fatal(err)
	}
	tx = state.NewTxn(s, s.Limits(), time.Now)
	if _, err := tx.Add(ctx, sp, []byte("n"), 1); !errors.As(err, &le) {
		t.Fatalf("add to a key that exists: %v", err)
	}
	if err := tx.Set(ctx, sp, []byte("new"), []byte("x"), state.SetOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Set(ctx, sp, []byte("new2"), []byte("x"), state.SetOptions{IfAbsent: true}); !errors.As(err, &le) {
		t.Fatalf("a second conditional write in a call: %v", err)
	}
	if it := mustGet(t, s, ns, "n"); string(it.Value) != "2" {
		t.Fatalf("n = %q", it.Value)
	}
	if u, err := s.Usage(ctx, ns); err != nil || u != (state.Usage{}) {
		t.Fatalf("usage %+v %v", u, err)
	}
	if res := mustCommit(t, s, set(ns, "k", "3")); res[0].Existed || res[0].Version <= v {
		t.Fatalf("a SET's result %+v (Existed is not known: false)", res[0])
	}
}

func mustCommit(t *testing.T, s state.Backend, ops ...state.Op) []state.Result {
	t.Helper()
	res, err := s.Commit(context.Background(), &state.Commit{Ops: ops})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mustGet(t *testing.T, s state.Backend, ns, key string) state.Item {
	t.Helper()
	it, err := s.Get(context.Background(), ns, []byte(key))
	if err != nil {
		t.Fatalf("get %s/%s: %v", ns, key, err)
	}
	return it
}

// A commit's writes are requests one after another. Its conditional
// write goes first: a condition that does not hold leaves nothing
// applied. A later write the broker refuses leaves the ones before it
// applied: PartialError, state.ErrUnknown; with an outcome, the record
// that its commit began stays, so that the request is answered outcome
// unknown (Outcome) and its writes are never committed again. A commit
// that applied nothing takes its record back.
func TestCommitsAreNotAtomic(t *testing.T) {
	u := protocolHost(t)
	outcomes := openOutcomes(t)
	s := open(t, u, stateaio.Config{Outcomes: outcomes})
	app := dialSDK(t, u)
	ctx := ctxT(t)
	ns := state.PluginNamespace("p")
	mustCommit(t, s, set(ns, "y", "exists"))

	nx := set(ns, "y", "mine")
	nx.If.Absent = true
	_, err := s.Commit(ctx, &state.Commit{Ops: []state.Op{set(ns, "x", "1"), nx}})
	var ce *state.ConflictError
	if !errors.As(err, &ce) || ce.Op != 1 || string(ce.Key) != "y" {
		t.Fatalf("a condition that does not hold: %v, want a ConflictError on op 1", err)
	}
	if _, err := s.Get(ctx, ns, []byte("x")); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("the write before the conditional one applied: %v", err)
	}

	// A fenced key (an app's lock) refuses a write without a token.
	if payload, _ := app.do("001700000000000:00000:app", "SET", "plugin/p/fenced", "app's"); payload != "+OK\r\n" {
		t.Fatalf("fencing: %q", payload)
	}
	id := state.OutcomeID{Correlation: "c1", ResponseTopic: "r"}
	keep := time.Now().Add(time.Hour)
	_, err = s.Commit(ctx, &state.Commit{Ops: []state.Op{set(ns, "a", "1"), set(ns, "fenced", "mine")},
		Outcome: &state.Outcome{ID: id, Value: []byte("reply"), KeepUntil: keep}})
	var pe *stateaio.PartialError
	if !errors.As(err, &pe) || !errors.Is(err, state.ErrUnknown) || pe.Applied != 1 || !errors.Is(pe.Err, state.ErrFenced) {
		t.Fatalf("a write refused after one applied: %v, want a PartialError", err)
	}
	if it := mustGet(t, s, ns, "a"); string(it.Value) != "1" {
		t.Fatalf("a = %q", it.Value)
	}
	if it := mustGet(t, s, ns, "fenced"); string(it.Value) != "app's" {
		t.Fatalf("the fenced key = %q", it.Value)
	}
	if _, _, err := s.Outcome(ctx, id); !errors.Is(err, state.ErrUnknown) {
		t.Fatalf("the outcome of a commit applied in part: %v, want ErrUnknown", err)
	}
	_, err = s.Commit(ctx, &state.Commit{Ops: []state.Op{set(ns, "b", "1")}, Outcome: &state.Outcome{ID: id, Value: []byte("reply"), KeepUntil: keep}})
	if !errors.Is(err, state.ErrUnknown) {
		t.Fatalf("a second commit under the outcome: %v", err)
	}
	if _, err := s.Get(ctx, ns, []byte("b")); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("the second commit wrote: %v", err)
	}

	// A conflict applies nothing: the record goes, and the request may
	// commit again.
	id2 := state.OutcomeID{Correlation: "c2", ResponseTopic: "r"}
	if _, err := s.Commit(ctx, &state.Commit{Ops: []state.Op{set(ns, "c", "1"), nx}, Outcome: &state.Outcome{ID: id2, Value: []byte("x"), KeepUntil: keep}}); !errors.Is(err, state.ErrConflict) {
		t.Fatalf("commit: %v", err)
	}
	if _, found, err := s.Outcome(ctx, id2); found || err != nil {
		t.Fatalf("the outcome of a commit that applied nothing: found %v, %v", found, err)
	}
	if _, err := s.Commit(ctx, &state.Commit{Ops: []state.Op{set(ns, "c", "1")}, Outcome: &state.Outcome{ID: id2, Value: []byte("ok"), KeepUntil: keep}}); err != nil {
		t.Fatal(err)
	}
	if v, found, err := s.Outcome(ctx, id2); !found || err != nil || string(v) != "ok" {
		t.Fatalf("the outcome: %q %v %v", v, found, err)
	}
	// Without a state folder, no outcome is kept: one is refused.
	bare := open(t, u, stateaio.Config{})
	if _, err := bare.Commit(ctx, &state.Commit{Ops: []state.Op{set(ns, "d", "1")}, Outcome: &state.Outcome{ID: id2, KeepUntil: keep}}); !errors.Is(err, state.ErrInvalid) {
		t.Fatalf("an outcome without a state folder: %v", err)
	}
}

// A broker whose state store does not answer: a read is ErrUnavailable,
// a write sent ErrUnknown (it may have applied), and the record that its
// commit began stays in the state folder, through a restart: the
// request's outcome is unknown. Health says so. A broker gone: a write
// is not sent, ErrUnavailable.
func TestBrokerAway(t *testing.T) {
	e, err := broker.Start(broker.Config{Addr: "127.0.0.1:0"}) // no state store there
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	dir := t.TempDir()
	outcomes, err := state.OpenDisk(state.DiskConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, e.URL(), stateaio.Config{Timeout: 300 * time.Millisecond, Outcomes: outcomes})
	ctx := ctxT(t)
	ns := state.PluginNamespace("p")
	if err := s.Health(); err != nil {
		t.Fatalf("health before any request: %v", err)
	}
	if _, err := s.Get(ctx, ns, []byte("k")); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("a read not answered: %v", err)
	}
	id := state.OutcomeID{Correlation: "c", ResponseTopic: "r"}
	_, err = s.Commit(ctx, &state.Commit{Ops: []state.Op{set(ns, "k", "v")}, Outcome: &state.Outcome{ID: id, Value: []byte("ok"), KeepUntil: time.Now().Add(time.Hour)}})
	if !errors.Is(err, state.ErrUnknown) {
		t.Fatalf("a write not answered: %v", err)
	}
	if err := outcomes.Close(); err != nil { // the host restarted
		t.Fatal(err)
	}
	if outcomes, err = state.OpenDisk(state.DiskConfig{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	defer outcomes.Close()
	again := open(t, e.URL(), stateaio.Config{Timeout: 300 * time.Millisecond, Outcomes: outcomes})
	if _, _, err := again.Outcome(ctx, id); !errors.Is(err, state.ErrUnknown) {
		t.Fatalf("the outcome of a commit not answered, after a restart: %v", err)
	}
	if err := s.Health(); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("health: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "a write refused as not sent", func() bool {
		_, err := s.Commit(ctx, &state.Commit{Ops: []state.Op{set(ns, "k", "v")}})
		return errors.Is(err, state.ErrUnavailable)
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, ns, []byte("k")); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("after Close: %v", err)
	}
}
