package host_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
)

// callerTopicACL is the mosquitto ACL of the caller-topic recipe
// (docs/security.md): the host reads the requests and answers on every
// client's response topic; each user may publish a request only where the
// topic's last level is its own name, and read its own responses.
const callerTopicACL = `user cmdhost
topic read rpc/ID/#
topic read cmdhost/ID/admin/#
topic write clients/+/rpc/response
topic write cmdhost/ID/events

pattern write rpc/ID/+/%u
pattern read clients/%c/rpc/response
`

// On mosquitto with a password file and that ACL, a host told that the
// topic level {caller} is the user's (CallerTopicToken) has a verified
// caller: the command's allow list admits alice under her own level and
// refuses bob under his; bob cannot publish under alice's (the broker
// refuses it), nor can users named + or #; a host not told so knows no caller and refuses everyone.
func TestCallerTopicTokenOnMosquitto(t *testing.T) {
	testkit.Needs(t, testkit.Mosquitto)
	testkit.Needs(t, testkit.Plugins)
	passwords := map[string]string{"cmdhost": "pw-cmdhost", "alice": "pw-alice", "bob": "pw-bob", "+": "pw-plus", "#": "pw-hash"}
	aclDir := t.TempDir()
	testkit.Install(t, aclDir, "acl", []byte(strings.ReplaceAll(callerTopicACL, "ID", "+")))
	u := brokertest.StartMosquittoWith(t, brokertest.MosquittoOptions{PasswordFile: brokertest.WritePasswordFile(t, passwords),
		ACLFile: filepath.Join(aclDir, "acl")})
	pwDir := t.TempDir()
	for name, pw := range passwords {
		testkit.Install(t, pwDir, name, []byte(pw+"\n"))
	}
	login := func(name string) session.Auth {
		return session.Auth{Username: name, PasswordFile: filepath.Join(pwDir, name)}
	}
	serve := func(id, token string) {
		dir := t.TempDir()
		testkit.InstallFile(t, "../testdata/plugins-alt/topics.wasm", dir, "who.wasm")
		testkit.Install(t, dir, "who.json", []byte(`{"config": {"commands": "who=rpc/{executorId}/{commandName}/{caller}"},
			"commands": {"who": {"allow": ["alice"]}}}`))
		hosttest.Serve(t, host.Config{
			PluginsDir: dir,
			ExecutorID: id,
			CacheDir:   testkit.CacheDir(),
			Broker:     host.BrokerConfig{URL: u, Auth: login("cmdhost")},
			Callers:    host.CallersConfig{TopicToken: token},
		})
	}
	serve("told", "caller")
	serve("untold", "")
	invoker := func(name string) *rpc.Invoker {
		inv, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: session.Config{Broker: u, ClientID: name + "-cli", Auth: login(name)}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = inv.Close() })
		return inv
	}
	alice, bob := invoker("alice"), invoker("bob")
	call := func(inv *rpc.Invoker, topic string) (*rpc.Result, error) {
		return inv.Invoke(ctxT(t), rpc.Call{Topic: topic, Payload: []byte("hi"), Timeout: 10 * time.Second})
	}

	if r, err := call(alice, "rpc/told/who/alice"); err != nil || r.Status != 200 || string(r.Payload) != "who:hi" {
		t.Fatalf("alice under her own level: %+v, %v", r, err)
	}
	if r, err := call(bob, "rpc/told/who/bob"); err != nil || r.Status != abi.StatusBadRequest || r.PropValue != "user bob" {
		t.Fatalf("bob under his own level: %+v, %v; want 400 Caller=user bob", r, err)
	}
	if r, err := call(bob, "rpc/told/who/alice"); err == nil || !strings.Contains(err.Error(), "not authorized") {
		t.Fatalf("bob under alice's level: %+v, %v; want the broker's refusal", r, err)
	}
	// A user whose name is a wildcard does not match every level:
	// mosquitto refuses pattern grants to such names (CVE-2017-7650).
	for _, name := range []string{"+", "#"} {
		inv, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: session.Config{Broker: u, ClientID: "wild-cli", Auth: login(name)}})
		if err != nil && strings.Contains(err.Error(), "not authorized") {
			continue // refused at CONNECT (mosquitto 2.0.11 does so for #)
		}
		if err != nil {
			t.Fatal(err)
		}
		if r, err := call(inv, "rpc/told/who/alice"); err == nil || !strings.Contains(err.Error(), "not authorized") {
			t.Errorf("user %s under alice's level: %+v, %v; want the broker's refusal", name, r, err)
		}
		_ = inv.Close()
	}
	if r, err := call(alice, "rpc/untold/who/alice"); err != nil || r.Status != abi.StatusBadRequest || r.PropName != "Caller" || r.PropValue != "" {
		t.Fatalf("alice on a host not told: %+v, %v; want 400 Caller, no caller known", r, err)
	}
}
