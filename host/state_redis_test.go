package host_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
)

// Two hosts on one Redis (Config.Store.URL) keep the handlers' state there:
// each sees the other's writes, a request sent again to the other host
// (same correlation data) gets its outcome and writes nothing, and a
// state folder given with a store is refused, naming the fix.
func TestReplicasShareStateInRedis(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	redis := testkit.StartRedis(t)
	install := func() string {
		dir := t.TempDir()
		testkit.InstallFile(t, "../testdata/plugins-alt/tally.wasm", dir, "tally.wasm")
		return dir
	}
	a := hosttest.Serve(t, host.Config{PluginsDir: install(), ExecutorID: "state-a", CacheDir: testkit.CacheDir(), Embedded: host.EmbeddedConfig{Listen: "127.0.0.1:0"}, Store: host.StoreConfig{URL: redis.URL}})
	hosttest.Serve(t, host.Config{PluginsDir: install(), ExecutorID: "state-b", CacheDir: testkit.CacheDir(), Broker: host.BrokerConfig{URL: a.Broker()}, Store: host.StoreConfig{URL: redis.URL}})
	inv := loggedIn(t, a, "tally-cli", "", nil)
	call := func(id, command, payload string, corr []byte) *rpc.Result {
		t.Helper()
		r, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/" + id + "/" + command, Payload: []byte(payload), ContentType: "text/plain",
			Timeout: 10 * time.Second, Correlation: corr})
		if err != nil || r.Status != 200 {
			t.Fatalf("%s on %s: %+v %v", command, id, r, err)
		}
		return r
	}
	second := rpc.NewCorrelation()
	for i, c := range []struct {
		id   string
		corr []byte
		want string
	}{{"state-a", nil, "1"}, {"state-b", second, "2"}, {"state-a", nil, "3"}, {"state-a", second, "2"}} {
		if r := call(c.id, "tally", "req-"+string(rune('a'+i)), c.corr); string(r.Payload) != c.want {
			t.Errorf("tally %d on %s: %q, want %s", i+1, c.id, r.Payload, c.want)
		}
	}
	for _, id := range []string{"state-a", "state-b"} {
		if r := call(id, "tally-read", "", nil); string(r.Payload) != "3" {
			t.Errorf("the counter read on %s: %q, want 3", id, r.Payload)
		}
	}

	_, err := host.New(host.Config{
		PluginsDir: install(),
		ExecutorID: "state-c",
		CacheDir:   testkit.CacheDir(),
		Embedded:   host.EmbeddedConfig{Listen: "127.0.0.1:0"},
		Store:      host.StoreConfig{URL: redis.URL, StateDir: t.TempDir()},
	})
	if err == nil || !strings.Contains(err.Error(), "give no state folder") {
		t.Fatalf("a state folder and a store: %v", err)
	}
}
