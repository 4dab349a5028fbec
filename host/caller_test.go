package host_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/passwd"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
)

// callerUsers writes a users file with user (password "pw-"+user) for
// each name, and a password file per user; it returns the users file and
// a function naming a user's password file.
func callerUsers(t *testing.T, names ...string) (users string, passwordFile func(string) string) {
	t.Helper()
	dir := t.TempDir()
	users = filepath.Join(dir, "users")
	for _, n := range names {
		if err := passwd.Set(users, n, "pw-"+n); err != nil {
			t.Fatal(err)
		}
		testkit.Install(t, dir, n+".pw", []byte("pw-"+n+"\n"))
	}
	return users, func(n string) string { return filepath.Join(dir, n+".pw") }
}

// loggedIn is an invoker that logs in to srv's embedded broker as user
// with the client id clientID ("" user: anonymous).
func loggedIn(t *testing.T, srv *host.Server, clientID, user string, passwordFile func(string) string) *rpc.Invoker {
	t.Helper()
	auth := session.Auth{}
	if user != "" {
		auth = session.Auth{Username: user, PasswordFile: passwordFile(user)}
	}
	inv, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: session.Config{Broker: srv.Broker(), ClientID: clientID, Auth: auth}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inv.Close() })
	return inv
}

// A handler in each guest language reads its caller: the user the
// embedded broker authenticated (a password user) and the client id,
// through a real broker; a caller's claim in its metadata changes nothing.
func TestCallerReachesEveryGuest(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	users, pw := callerUsers(t, "alice")
	for _, lang := range []string{"go", "rust", "c", "as"} {
		t.Run(lang, func(t *testing.T) {
			dir := t.TempDir()
			testkit.InstallFile(t, "../testdata/plugins-kit/kit-"+lang+".wasm", dir, "kit-"+lang+".wasm")
			srv := hosttest.Serve(t, host.Config{
				PluginsDir: dir,
				ExecutorID: "caller-" + lang,
				CacheDir:   testkit.CacheDir(),
				Embedded:   host.EmbeddedConfig{Listen: "127.0.0.1:0", UsersFile: users},
			})
			inv := loggedIn(t, srv, "alice-cli", "alice", pw)
			r, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/caller-" + lang + "/kit-caller", Timeout: 10 * time.Second,
				Metadata: map[string]string{"user": "root", "__brokerUser": "root"}})
			if err != nil || r.Status != 200 || string(r.Payload) != "user=alice;client=alice-cli" {
				t.Fatalf("kit-caller as alice: %+v, %v; want user=alice;client=alice-cli", r, err)
			}
		})
	}
}

// A replica serving on another host's embedded broker takes the caller
// that broker stamps only when told to (TrustBrokerIdentity); otherwise
// the stamp is a user property like any other, and its handlers know no
// caller.
func TestCallerOnAnotherHostsBroker(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	users, pw := callerUsers(t, "alice", "replica")
	first := hosttest.Serve(t, host.Config{
		PluginsDir: t.TempDir(),
		ExecutorID: "first",
		CacheDir:   testkit.CacheDir(),
		Embedded: host.EmbeddedConfig{
			Listen:    "127.0.0.1:0",
			UsersFile: users,
			ACLFile:   replicaACL(t, "alice", "replica", "replica-trusting", "replica-not-trusting"),
		},
	})
	for _, c := range []struct {
		trust bool
		want  string
	}{{true, "user=alice;client=alice-cli"}, {false, "user=;client="}} {
		dir := t.TempDir()
		testkit.InstallFile(t, "../testdata/plugins-kit/kit-go.wasm", dir, "kit-go.wasm")
		id := "replica-trusting"
		if !c.trust {
			id = "replica-not-trusting"
		}
		hosttest.Serve(t, host.Config{
			PluginsDir: dir,
			ExecutorID: id,
			CacheDir:   testkit.CacheDir(),
			Broker: host.BrokerConfig{
				URL:  first.Broker(),
				Auth: session.Auth{Username: "replica", PasswordFile: pw("replica")},
			},
			Callers: host.CallersConfig{TrustBrokerIdentity: c.trust},
		})
		inv := loggedIn(t, first, "alice-cli", "alice", pw)
		r, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/" + id + "/kit-caller", Timeout: 10 * time.Second})
		if err != nil || r.Status != 200 || string(r.Payload) != c.want {
			t.Errorf("trust %v: %+v, %v; want %s", c.trust, r, err, c.want)
		}
		_ = inv.Close() // alice-cli logs in again for the next: one client per id
	}
}

// replicaACL is an ACL file of the embedded broker that lets caller call
// commands and user serve as each of executors (a replica on that
// broker): the default, without a file, lets no one serve.
func replicaACL(t *testing.T, caller, user string, executors ...string) string {
	t.Helper()
	dir := t.TempDir()
	acl := "user " + caller + "\ncall rpc/#\nuser " + user + "\n"
	for _, id := range executors {
		acl += "host " + id + "\n"
	}
	testkit.Install(t, dir, "acl", []byte(acl))
	return filepath.Join(dir, "acl")
}
