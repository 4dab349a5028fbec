package adminops_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/adminops"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/wasmtest"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// openState opens a state store in a temporary folder.
func openState(t *testing.T) *state.Disk {
	t.Helper()
	d, err := state.OpenDisk(state.DiskConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// audits collects the admin events of the ops.
type audits struct {
	mu  sync.Mutex
	evs []events.Event
}

func (a *audits) Emit(ev events.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.evs = append(a.evs, ev)
}

func (a *audits) last() events.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.evs) == 0 {
		return events.Event{}
	}
	return a.evs[len(a.evs)-1]
}

// stateCall runs a state op with req as its payload and the token tok
// ("": none), and returns its response.
func stateCall(t *testing.T, a *adminops.Ops, op, tok string, req any) *abi.Response {
	t.Helper()
	payload, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	r := &abi.Request{Payload: payload, InvokerID: "operator-cli"}
	if tok != "" {
		r.Metadata = map[string]string{admin.TokenKey: tok}
	}
	resp, err := adminOp(t, a, op)(context.Background(), r)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return resp
}

// stateOK runs a state op that must succeed and reads its reply into out.
func stateOK(t *testing.T, a *adminops.Ops, op string, req, out any) {
	t.Helper()
	resp := stateCall(t, a, op, "tok", req)
	if resp.Status != 0 && resp.Status != abi.StatusOK {
		t.Fatalf("%s %+v: status %d %s", op, req, resp.Status, resp.Message)
	}
	if err := json.Unmarshal(resp.Payload, out); err != nil {
		t.Fatalf("%s: %v: %s", op, err, resp.Payload)
	}
}

func text(s string) *string { return &s }

// The state ops: the namespaces open, every other op behind the token
// (403 and audited without it); writes are commits with their
// conditions, audited done or refused with what they changed; reads see
// them; a bad namespace, key or TTL is 400 saying what is wrong.
func TestStateOps(t *testing.T) {
	m, dir := newManager(t)
	st := openState(t)
	var audit audits
	clk := testkit.NewClock(time.Now())
	a := newOps(t, adminops.Config{Manager: m, Dir: dir, Token: "tok", State: st, Events: &audit, Clock: clk})
	const ns = "plugin/kit"

	// Writes and reads need the token.
	for _, op := range []string{admin.OpStateGet, admin.OpStateList, admin.OpStateSet, admin.OpStateDelete, admin.OpStateImport} {
		clk.Add(time.Second) // refusals are audited at most once a second
		resp := stateCall(t, a, op, "", admin.StateKeyRequest{Namespace: ns, StateKey: admin.StateKey{Key: "k"}})
		if resp.Status != admin.StatusForbidden {
			t.Errorf("%s without the token: status %d %q, want 403", op, resp.Status, resp.Message)
		}
		if ev := audit.last(); ev.Op != op || ev.Verdict != events.VerdictForbidden {
			t.Errorf("%s without the token: audit %+v", op, ev)
		}
	}
	if _, err := st.Get(context.Background(), ns, []byte("k")); err == nil {
		t.Fatal("a set refused for its token was written")
	}

	var set admin.StateSetResult
	stateOK(t, a, admin.OpStateSet, admin.StateSetRequest{Namespace: ns, StateKey: admin.StateKey{Key: "k"}, StateValue: admin.StateValue{Value: text("v1")}}, &set)
	if ev := audit.last(); ev.Op != admin.OpStateSet || ev.Verdict != events.VerdictDone || ev.Plugin != "kit" || ev.Target != `plugin/kit key "k"` || ev.Invoker != "operator-cli" {
		t.Errorf("set: audit %+v", ev)
	}
	kVersion := set.Version
	var got admin.StateItem
	stateOK(t, a, admin.OpStateGet, admin.StateKeyRequest{Namespace: ns, StateKey: admin.StateKey{Key: "k"}}, &got)
	if got.Value == nil || *got.Value != "v1" || got.Version != set.Version || got.Key != "k" {
		t.Fatalf("get after set: %+v, version %d", got, set.Version)
	}
	// A value that is not UTF-8 goes in base64, both ways.
	binary := []byte{0xff, 0, 1}
	stateOK(t, a, admin.OpStateSet, admin.StateSetRequest{Namespace: ns, StateKey: admin.StateKey{KeyBase64: binary}, StateValue: admin.ValueOf(binary), TTL: "1h"}, &set)
	got = admin.StateItem{}
	stateOK(t, a, admin.OpStateGet, admin.StateKeyRequest{Namespace: ns, StateKey: admin.KeyOf(binary)}, &got)
	if string(got.ValueBase64) != string(binary) || got.Value != nil || got.Expires.IsZero() {
		t.Fatalf("a binary key and value with a TTL: %+v", got)
	}

	for _, c := range []struct {
		op     string
		req    any
		status abi.Status
		want   string
	}{
		{admin.OpStateSet, admin.StateSetRequest{Namespace: ns, StateKey: admin.StateKey{Key: "k"}, StateValue: admin.StateValue{Value: text("v2")}, IfAbsent: true},
			admin.StatusConflict, `condition failed on key "k" in namespace plugin/kit: the key exists; nothing was written`},
		{admin.OpStateDelete, admin.StateKeyRequest{Namespace: ns, StateKey: admin.StateKey{Key: "k"}, IfVersion: 1},
			admin.StatusConflict, "not 1; nothing was written"},
		{admin.OpStateGet, admin.StateKeyRequest{Namespace: ns, StateKey: admin.StateKey{Key: "nothing"}},
			admin.StatusNotFound, `no key "nothing" in namespace plugin/kit`},
		{admin.OpStateGet, admin.StateKeyRequest{Namespace: "devices", StateKey: admin.StateKey{Key: "k"}},
			abi.StatusBadRequest, `namespace "devices" is none of the forms the state store has: a plugin's, plugin/NAME, a shared one an operator file grants, shared/NAME, or the Azure IoT Operations protocol's own keys, aio`},
		{admin.OpStateGet, admin.StateKeyRequest{Namespace: "aio", StateKey: admin.StateKey{Key: "k"}},
			admin.StatusNotFound, `no key "k" in namespace aio`},
		{admin.OpStateGet, admin.StateKeyRequest{Namespace: "shared/a b", StateKey: admin.StateKey{Key: "k"}},
			abi.StatusBadRequest, `shared namespace "a b"`},
		{admin.OpStateGet, admin.StateKeyRequest{Namespace: ns}, abi.StatusBadRequest, `no key: give "key" (text) or "keyBase64"`},
		{admin.OpStateSet, admin.StateSetRequest{Namespace: ns, StateKey: admin.StateKey{Key: "k"}}, abi.StatusBadRequest, `no value`},
		{admin.OpStateSet, admin.StateSetRequest{Namespace: ns, StateKey: admin.StateKey{Key: "k"}, StateValue: admin.StateValue{Value: text("v")}, TTL: "-1s"},
			abi.StatusBadRequest, `ttl "-1s": give a positive Go duration`},
		{admin.OpStateSet, admin.StateSetRequest{Namespace: ns, StateKey: admin.StateKey{Key: strings.Repeat("k", 2000)}, StateValue: admin.StateValue{Value: text("v")}},
			abi.StatusBadRequest, "a key of 2000 bytes is over the bound of 1024"},
	} {
		resp := stateCall(t, a, c.op, "tok", c.req)
		if resp.Status != c.status || !strings.Contains(resp.Message, c.want) {
			t.Errorf("%s %+v: %d %q, want %d %q", c.op, c.req, resp.Status, resp.Message, c.status, c.want)
		}
	}
	if ev := audit.last(); ev.Verdict != events.VerdictRefused || !strings.Contains(ev.Reason, "over the bound") {
		t.Errorf("a set refused by the store: audit %+v", ev)
	}
	if it, _ := st.Get(context.Background(), ns, []byte("k")); string(it.Value) != "v1" {
		t.Errorf("after the refused writes, k holds %q", it.Value)
	}

	var del admin.StateDeleteResult
	stateOK(t, a, admin.OpStateDelete, admin.StateKeyRequest{Namespace: ns, StateKey: admin.StateKey{Key: "k"}, IfVersion: kVersion}, &del)
	if !del.Existed {
		t.Fatal("a delete of k at its version: existed false")
	}
	if ev := audit.last(); ev.Op != admin.OpStateDelete || ev.Verdict != events.VerdictDone {
		t.Errorf("delete: audit %+v", ev)
	}
	if stateOK(t, a, admin.OpStateDelete, admin.StateKeyRequest{Namespace: ns, StateKey: admin.StateKey{Key: "k"}}, &del); del.Existed {
		t.Fatal("a delete of a key deleted: existed true")
	}
}

// list pages through a namespace with or without values; namespaces
// (open) shows each namespace's size; an import is one commit, all or
// none, leaving out what expired.
func TestStateListImportNamespaces(t *testing.T) {
	m, dir := newManager(t)
	st := openState(t)
	a := newOps(t, adminops.Config{Manager: m, Dir: dir, Token: "tok", State: st, Events: &audits{}})
	const ns = "shared/devices"
	items := []admin.StateItem{
		{StateKey: admin.StateKey{Key: "a"}, StateValue: admin.ValueOf([]byte("1"))},
		{StateKey: admin.StateKey{Key: "b"}, StateValue: admin.ValueOf([]byte("22")), Expires: time.Now().Add(time.Hour)},
		{StateKey: admin.StateKey{Key: "c"}, StateValue: admin.ValueOf([]byte("333")), Version: 7},
		{StateKey: admin.StateKey{Key: "gone"}, StateValue: admin.ValueOf([]byte("x")), Expires: time.Now().Add(-time.Hour)},
	}
	var imported admin.StateImported
	stateOK(t, a, admin.OpStateImport, admin.StateImportRequest{Namespace: ns, Items: items}, &imported)
	if imported.Keys != 3 || imported.Expired != 1 {
		t.Fatalf("import: %+v, want 3 keys and 1 expired", imported)
	}

	var page admin.StatePage
	stateOK(t, a, admin.OpStateList, admin.StateListRequest{Namespace: ns, Limit: 2}, &page)
	if len(page.Items) != 2 || !page.More || page.Items[0].Key != "a" || page.Items[1].ValueBytes != 2 || page.Items[1].Value != nil || page.Items[1].Expires.IsZero() {
		t.Fatalf("the first page of 2: %+v", page)
	}
	stateOK(t, a, admin.OpStateList, admin.StateListRequest{Namespace: ns, After: &page.Items[1].StateKey, Values: true}, &page)
	if len(page.Items) != 1 || page.More || page.Items[0].Key != "c" || *page.Items[0].Value != "333" || page.Items[0].Version == 7 {
		t.Fatalf("the page after b, with values: %+v", page)
	}

	// A batch that passes a bound is refused whole.
	bad := []admin.StateItem{{StateKey: admin.StateKey{Key: "d"}, StateValue: admin.ValueOf([]byte("4"))},
		{StateKey: admin.StateKey{Key: strings.Repeat("e", 2000)}, StateValue: admin.ValueOf([]byte("5"))}}
	if resp := stateCall(t, a, admin.OpStateImport, "tok", admin.StateImportRequest{Namespace: ns, Items: bad}); resp.Status != abi.StatusBadRequest {
		t.Fatalf("an import with a key over the bound: %d %q", resp.Status, resp.Message)
	}
	if resp := stateCall(t, a, admin.OpStateImport, "tok", admin.StateImportRequest{Namespace: ns, Items: []admin.StateItem{{StateKey: admin.StateKey{Key: "f"}}}}); resp.Status != abi.StatusBadRequest || resp.Message != `item 1: no value: give "value" (text) or "valueBase64"` {
		t.Fatalf("an import of an item without a value: %d %q", resp.Status, resp.Message)
	}
	if _, err := st.Get(context.Background(), ns, []byte("d")); err == nil {
		t.Fatal("a refused import wrote its first key")
	}

	resp := stateCall(t, a, admin.OpStateNamespaces, "", nil)
	var all admin.StateNamespaces
	if err := json.Unmarshal(resp.Payload, &all); err != nil || resp.Status != 0 {
		t.Fatalf("namespaces without a token: %d %q %v", resp.Status, resp.Message, err)
	}
	if len(all.Namespaces) != 1 || all.Namespaces[0] != (admin.StateNamespace{Namespace: ns, Keys: 3, Bytes: 9}) || all.Keys != 3 || all.Bytes != 9 || all.MaxBytes != state.DefaultMaxTotalBytes {
		t.Fatalf("namespaces: %+v", all)
	}

	// A host without a state store says so.
	none := newOps(t, adminops.Config{Manager: m, Dir: dir, Token: "tok"})
	if resp := stateCall(t, none, admin.OpStateNamespaces, "", nil); resp.Status != abi.StatusServiceUnavailable || !strings.Contains(resp.Message, "--state-dir off") {
		t.Fatalf("namespaces without a store: %d %q", resp.Status, resp.Message)
	}
}

// A plugin's view shows what its namespace holds, and a write to its
// namespace is bounded by its operator file's quota, as its calls are.
func TestStatePluginViewAndQuota(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	dir := t.TempDir()
	bin, err := os.ReadFile(filepath.Join(pluginDir, "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "echo.wasm"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "echo.json"), []byte(`{"state": {"maxKeys": 2}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := wasmtest.NewEngine(wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	m := plugins.NewManager(plugins.Config{Dir: dir, Engine: e, Plugin: wasm.PluginConfig{PoolSize: 1}})
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatal(errs)
	}
	st := openState(t)
	a := newOps(t, adminops.Config{Manager: m, Dir: dir, Token: "tok", State: st, Events: &audits{}})
	for _, k := range []string{"one", "two"} {
		var set admin.StateSetResult
		stateOK(t, a, admin.OpStateSet, admin.StateSetRequest{Namespace: "plugin/echo", StateKey: admin.StateKey{Key: k}, StateValue: admin.ValueOf([]byte("12345"))}, &set)
	}
	resp := stateCall(t, a, admin.OpStateSet, "tok", admin.StateSetRequest{Namespace: "plugin/echo", StateKey: admin.StateKey{Key: "three"}, StateValue: admin.ValueOf([]byte("x"))})
	if resp.Status != abi.StatusBadRequest || !strings.Contains(resp.Message, "namespace plugin/echo is full: its keys would pass 2") {
		t.Fatalf("a third key in a namespace of 2: %d %q", resp.Status, resp.Message)
	}
	resp, err = adminOp(t, a, admin.OpList)(context.Background(), &abi.Request{})
	if err != nil {
		t.Fatal(err)
	}
	var views []admin.PluginView
	if err := json.Unmarshal(resp.Payload, &views); err != nil || len(views) != 1 || views[0].StateKeys != 2 || views[0].StateBytes != 16 {
		t.Fatalf("list: %v %+v", err, views)
	}
	if !strings.Contains(string(resp.Payload), `"stateKeys":2,"stateBytes":16`) {
		t.Errorf("list's JSON: %s", resp.Payload)
	}
}

// A caller the embedded broker's ACL grants admin writes without the
// token, as it installs; another verified caller does not.
func TestStateOpsByIdentity(t *testing.T) {
	m, dir := newManager(t)
	st := openState(t)
	a := newOps(t, adminops.Config{Manager: m, Dir: dir, Token: "tok", State: st, Events: &audits{},
		Admin: func(c abi.Caller) bool { return c.User == "root" }})
	set := func(user string) abi.Status {
		payload, _ := json.Marshal(admin.StateSetRequest{Namespace: "shared/jobs", StateKey: admin.StateKey{Key: user}, StateValue: admin.ValueOf([]byte("x"))})
		resp, err := adminOp(t, a, admin.OpStateSet)(context.Background(), &abi.Request{Payload: payload, Caller: abi.Caller{User: user, ClientID: user + "-cli"}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Status
	}
	if s := set("root"); s != 0 && s != abi.StatusOK {
		t.Errorf("root, granted admin: status %d", s)
	}
	if s := set("alice"); s != admin.StatusForbidden {
		t.Errorf("alice: status %d, want 403", s)
	}
	if _, err := st.Get(context.Background(), "shared/jobs", []byte("alice")); err == nil {
		t.Error("alice's set was written")
	}
}
