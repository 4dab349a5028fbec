package host_test

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
)

// freshMinute returns once the current minute has at least 20 s left,
// so that the calls a test makes next fall in one quota window of a
// minute: the windows are the wall clock's, and this is the one test
// that runs them on it (internal/gate's tests run theirs on a fake clock).
func freshMinute(t *testing.T) {
	t.Helper()
	next := time.Now().Truncate(time.Minute).Add(time.Minute)
	if left := time.Until(next); left < 20*time.Second {
		t.Logf("waiting %v for a fresh quota window", left.Round(time.Millisecond))
		<-time.After(left) // a wall-clock instant, not an event: nothing else to wait on
	}
}

// counterCall calls command counter on executor id as inv, with payload.
func counterCall(t *testing.T, inv *rpc.Invoker, id, payload string) *rpc.Result {
	t.Helper()
	r, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/" + id + "/counter", Payload: []byte(payload), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("%s: %v", payload, err)
	}
	return r
}

// Through the embedded broker with users, the operator file's allow
// admits its users and client id patterns and refuses anyone else with
// 400 naming them (nothing runs: the counter shows every run), and its
// quota refuses a caller's call over it with 503 and the time left; each
// refusal is logged with the caller.
func TestAllowAndQuotaThroughBroker(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	users, pw := callerUsers(t, "alice", "bob", "ops")
	dir := t.TempDir()
	testkit.InstallFile(t, "../testdata/plugins/counter.wasm", dir, "counter.wasm")
	testkit.Install(t, dir, "counter.json", []byte(`{"allow": ["alice", "client:ops-*"], "quota": "2/m"}`))
	var log testkit.LogBuffer
	srv := hosttest.Serve(t, host.Config{
		PluginsDir: dir,
		ExecutorID: "gated",
		CacheDir:   testkit.CacheDir(),
		Logger:     slog.New(slog.NewTextHandler(&log, nil)),
		Embedded:   host.EmbeddedConfig{Listen: "127.0.0.1:0", UsersFile: users},
	})
	alice, bob := loggedIn(t, srv, "alice-cli", "alice", pw), loggedIn(t, srv, "bob-cli", "bob", pw)
	ops := loggedIn(t, srv, "ops-1", "ops", pw)
	freshMinute(t)

	if r := counterCall(t, alice, "gated", "a"); r.Status != 200 || string(r.Payload) != "a:1" {
		t.Fatalf("alice: %+v", r)
	}
	r := counterCall(t, bob, "gated", "b")
	if r.Status != abi.StatusBadRequest || r.PropName != "Caller" || r.PropValue != "user bob (client bob-cli)" ||
		!strings.Contains(r.Message, "may not call command counter") {
		t.Fatalf("bob: %+v; want 400 Caller=user bob (client bob-cli)", r)
	}
	if r := counterCall(t, ops, "gated", "o"); r.Status != 200 || string(r.Payload) != "o:2" {
		t.Fatalf("ops, by its client id: %+v; want o:2 (bob's call ran nothing)", r)
	}
	if r := counterCall(t, alice, "gated", "a"); r.Status != 200 || string(r.Payload) != "a:3" {
		t.Fatalf("alice's 2nd: %+v", r)
	}
	r = counterCall(t, alice, "gated", "a")
	if r.Status != abi.StatusServiceUnavailable || r.PropName != rpc.RetryAfterProperty || !strings.HasPrefix(r.PropValue, "PT") ||
		!strings.Contains(r.Message, "user alice (client alice-cli) is over its quota of 2/m") {
		t.Fatalf("alice's 3rd in a minute at 2/m: %+v; want 503 RetryAfter", r)
	}
	if r := counterCall(t, ops, "gated", "o"); r.Status != 200 || string(r.Payload) != "o:4" {
		t.Fatalf("ops' 2nd: %+v; want o:4 (alice's 3rd ran nothing)", r)
	}
	for _, want := range []string{"user=bob", "client_id=bob-cli", `why="not in the command's allow list"`, "user=alice", `why="over its quota of 2/m"`} {
		if !log.Contains(want) {
			t.Errorf("the log lacks %s:\n%s", want, log.String())
		}
	}
}

// Two replicas sharing a real Redis (--store) count a caller's calls
// together: the second serves on the first's embedded broker and trusts
// its caller. 3/m for alice is 3 calls over both, not 3 on each.
func TestQuotaAcrossReplicasThroughBroker(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	redis := testkit.StartRedis(t)
	users, pw := callerUsers(t, "alice", "replica")
	install := func() string {
		dir := t.TempDir()
		testkit.InstallFile(t, "../testdata/plugins/counter.wasm", dir, "counter.wasm")
		testkit.Install(t, dir, "counter.json", []byte(`{"commands": {"counter": {"quota": "3/m"}}}`))
		return dir
	}
	first := hosttest.Serve(t, host.Config{
		PluginsDir: install(),
		ExecutorID: "quota-a",
		CacheDir:   testkit.CacheDir(),
		Embedded: host.EmbeddedConfig{
			Listen:    "127.0.0.1:0",
			UsersFile: users,
			ACLFile:   replicaACL(t, "alice", "replica", "quota-b"),
		},
		Store: host.StoreConfig{URL: redis.URL},
	})
	hosttest.Serve(t, host.Config{
		PluginsDir: install(),
		ExecutorID: "quota-b",
		CacheDir:   testkit.CacheDir(),
		Broker: host.BrokerConfig{
			URL:  first.Broker(),
			Auth: session.Auth{Username: "replica", PasswordFile: pw("replica")},
		},
		Callers: host.CallersConfig{TrustBrokerIdentity: true},
		Store:   host.StoreConfig{URL: redis.URL},
	})
	alice := loggedIn(t, first, "alice-cli", "alice", pw)
	freshMinute(t)
	ran, refused := 0, 0
	for i := 0; i < 6; i++ {
		id := []string{"quota-a", "quota-b"}[i%2]
		switch r := counterCall(t, alice, id, "x"); {
		case r.Status == 200:
			ran++
		case r.Status == abi.StatusServiceUnavailable && r.PropName == rpc.RetryAfterProperty:
			refused++
		default:
			t.Fatalf("call %d on %s: %+v", i+1, id, r)
		}
	}
	if ran != 3 || refused != 3 {
		t.Errorf("6 calls over two replicas at 3/m: %d ran, %d refused; want 3 and 3", ran, refused)
	}
}

// A user the embedded broker's ACL grants `admin` uses the admin ops that
// change state without the token, logged with who; without an ACL file
// the default ACL grants no one the admin ops: the broker refuses the
// publish, logged with who.
func TestAdminByIdentity(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	users, pw := callerUsers(t, "alice")
	aclDir := t.TempDir()
	testkit.Install(t, aclDir, "acl", []byte("user alice\ncall rpc/#\nadmin\n"))
	for _, c := range []struct {
		acl  string
		want abi.Status
	}{{filepath.Join(aclDir, "acl"), abi.StatusOK}, {"", admin.StatusForbidden}} {
		dir := t.TempDir()
		testkit.InstallFile(t, "../testdata/plugins/counter.wasm", dir, "counter.wasm")
		testkit.Install(t, dir, "token", []byte("the-admin-token\n"))
		var log testkit.LogBuffer
		srv := hosttest.Serve(t, host.Config{
			PluginsDir: dir,
			ExecutorID: "admin-id",
			CacheDir:   testkit.CacheDir(),
			Logger:     slog.New(slog.NewTextHandler(&log, nil)),
			Embedded: host.EmbeddedConfig{
				Listen:    "127.0.0.1:0",
				UsersFile: users,
				ACLFile:   c.acl,
			},
			Admin: host.AdminConfig{TokenFile: filepath.Join(dir, "token")},
		})
		alice := loggedIn(t, srv, "alice-cli", "alice", pw)
		r, err := alice.Invoke(ctxT(t), rpc.Call{Topic: admin.Topic("admin-id", admin.OpReload), Payload: []byte(`{"name":"counter"}`),
			ContentType: "application/json", Timeout: 10 * time.Second})
		if c.acl == "" {
			if err == nil || !strings.Contains(err.Error(), "not authorized (0x87)") {
				t.Fatalf("no ACL file: reload as alice: %+v, %v; want the broker's refusal 0x87", r, err)
			}
			if !log.Contains("alice") {
				t.Errorf("the refusal is not logged with the caller:\n%s", log.String())
			}
			continue
		}
		if err != nil || r.Status != c.want {
			t.Fatalf("acl %q: reload without a token as alice: %+v, %v; want %d", c.acl, r, err, c.want)
		}
		if c.want == abi.StatusOK && !log.Contains(`msg="admin op allowed by identity" op=reload user=alice client_id=alice-cli`) {
			t.Errorf("the op is not logged with who:\n%s", log.String())
		}
		if c.want == abi.StatusOK && !log.HasLine(`msg="admin op" op=reload verdict=done`, "user=alice client_id=alice-cli") {
			t.Errorf("the audit does not name the verified caller:\n%s", log.String())
		}
		if c.want != abi.StatusOK && !log.Contains("user=alice") {
			t.Errorf("the refusal is not logged with the caller:\n%s", log.String())
		}
	}
}

// A plugin's nested call to a command of its own host is made on behalf
// of its request's caller, and judged by the called command's allow list:
// kit-nest (anyone) calling kit-echo (alice only) works for alice and is
// refused for bob.
func TestAllowOnNestedCalls(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	users, pw := callerUsers(t, "alice", "bob")
	dir := t.TempDir()
	testkit.InstallFile(t, "../testdata/plugins-kit/kit-go.wasm", dir, "kit-go.wasm")
	testkit.Install(t, dir, "kit-go.json", []byte(`{"commands": {"kit-echo": {"allow": ["alice"]}}}`))
	srv := hosttest.Serve(t, host.Config{
		PluginsDir: dir,
		ExecutorID: "nest-gate",
		CacheDir:   testkit.CacheDir(),
		Embedded:   host.EmbeddedConfig{Listen: "127.0.0.1:0", UsersFile: users},
	})
	for _, c := range []struct {
		user, want string
	}{{"alice", "through kit-echo"}, {"bob", "kit: kit-echo answered 400: user bob (client bob-cli) may not call command kit-echo"}} {
		inv := loggedIn(t, srv, c.user+"-cli", c.user, pw)
		r, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/nest-gate/kit-nest", Payload: []byte("through kit-echo"), Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(r.Payload) + r.Message; !strings.Contains(got, c.want) {
			t.Errorf("%s: %+v; want %q", c.user, r, c.want)
		}
	}
}
