package gate

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/plugins"
)

// command resolves the module's command name of plugin shop under the
// operator file text.
func command(t testing.TB, name, file string) plugins.Command {
	t.Helper()
	op, err := plugins.ParseOperator("/p/shop.json", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	return plugins.Resolve("shop", abi.Command{Name: name}, op, plugins.Defaults{})
}

// counting is a handler that counts its calls.
func counting(n *atomic.Int32) rpc.Handler {
	return func(context.Context, *abi.Request) (*abi.Response, error) {
		n.Add(1)
		return &abi.Response{}, nil
	}
}

func statusOf(err error) *rpc.StatusError {
	se, _ := err.(*rpc.StatusError)
	return se
}

// Admit lets the allow list's callers through; a caller not in it gets
// 400 Caller=<who>, a request without a verified caller 400 Caller with
// no value; each refusal is logged with the caller, at most once a second.
func TestAdmit(t *testing.T) {
	var log testkit.LogBuffer
	clock := testkit.NewClock(time.Unix(1_800_000_000, 0))
	g := New(Config{Clock: clock, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if g.Admit(command(t, "buy", `{}`)) != nil {
		t.Fatal("a command without allow has an admission")
	}
	admit := g.Admit(command(t, "buy", `{"allow": ["alice"]}`))
	if se := admit(&abi.Request{Caller: abi.Caller{User: "alice", ClientID: "a-1"}}); se != nil {
		t.Errorf("alice refused: %v", se)
	}
	se := admit(&abi.Request{Caller: abi.Caller{User: "bob", ClientID: "b-1"}, InvokerID: "alice"})
	if se == nil || se.Status != abi.StatusBadRequest || se.PropName != "Caller" || se.PropValue != "user bob (client b-1)" ||
		!strings.Contains(se.Message, "user bob (client b-1) may not call command buy") {
		t.Errorf("bob: %+v", se)
	}
	if !log.Contains("call refused") || !log.Contains("user=bob") || !log.Contains("client_id=b-1") || !log.Contains("src_id=alice") {
		t.Errorf("the refusal is not logged with who:\n%s", log.String())
	}
	se = admit(&abi.Request{InvokerID: "alice"})
	if se == nil || se.Status != abi.StatusBadRequest || se.PropName != "Caller" || se.PropValue != "" ||
		!strings.Contains(se.Message, "admits verified callers only") {
		t.Errorf("no caller: %+v", se)
	}
	if strings.Count(log.String(), "call refused") != 1 {
		t.Errorf("two refusals in a second logged twice:\n%s", log.String())
	}
	clock.Add(time.Second)
	admit(&abi.Request{})
	if !log.Contains("refusals_not_logged=1") {
		t.Errorf("the next line does not count the one left out:\n%s", log.String())
	}
}

// A quota of N/s runs N calls of a caller in a second and refuses the
// next with 503 and the time left, without running it; other callers
// count apart, unverified callers together; the next second counts anew.
// The clock is the test's.
func TestLimitInMemory(t *testing.T) {
	clock := testkit.NewClock(time.Unix(1_800_000_000, 400_000_000))
	g := New(Config{Clock: clock})
	var ran atomic.Int32
	h := g.Limit(command(t, "buy", `{"commands": {"buy": {"quota": "3/s"}}}`), counting(&ran))
	call := func(c abi.Caller) error {
		_, err := h(context.Background(), &abi.Request{Command: "buy", Caller: c})
		return err
	}
	alice := abi.Caller{User: "alice", ClientID: "a-1"}
	for i := 0; i < 3; i++ {
		if err := call(alice); err != nil {
			t.Fatalf("alice #%d: %v", i+1, err)
		}
	}
	se := statusOf(call(alice))
	if se == nil || se.Status != abi.StatusServiceUnavailable || se.RetryAfter != 600*time.Millisecond ||
		!strings.Contains(se.Message, "user alice (client a-1) is over its quota of 3/s for command buy: send it again in 600ms") {
		t.Fatalf("alice's 4th: %+v", se)
	}
	if ran.Load() != 3 {
		t.Fatalf("ran %d, want 3: the refused call ran", ran.Load())
	}
	if err := call(abi.Caller{User: "bob"}); err != nil {
		t.Errorf("bob, beside alice: %v", err)
	}
	// Another client id of alice's is still alice.
	if se := statusOf(call(abi.Caller{User: "alice", ClientID: "a-2"})); se == nil {
		t.Error("alice on another connection escaped her quota")
	}
	for i := 0; i < 3; i++ {
		_ = call(abi.Caller{})
	}
	if se := statusOf(call(abi.Caller{})); se == nil || !strings.Contains(se.Message, "unverified caller") {
		t.Errorf("the 4th unverified call: %+v", se)
	}
	clock.Add(600 * time.Millisecond)
	if err := call(alice); err != nil {
		t.Errorf("alice in the next second: %v", err)
	}
	if g.Limit(command(t, "buy", `{}`), counting(&ran)) == nil {
		t.Error("no quota: no handler")
	}
}

// A plugin's quota counts all its commands together.
func TestLimitPerPlugin(t *testing.T) {
	g := New(Config{Clock: testkit.NewClock(time.Unix(1_800_000_000, 0))})
	var ran atomic.Int32
	file := `{"quota": "2/m"}`
	buy, list := g.Limit(command(t, "buy", file), counting(&ran)), g.Limit(command(t, "list", file), counting(&ran))
	req := &abi.Request{Caller: abi.Caller{User: "alice"}}
	_, e1 := buy(context.Background(), req)
	_, e2 := list(context.Background(), req)
	_, e3 := list(context.Background(), req)
	if e1 != nil || e2 != nil || statusOf(e3) == nil || !strings.Contains(e3.Error(), "plugin shop's commands") {
		t.Fatalf("buy, list, list at 2/m for the plugin: %v, %v, %v", e1, e2, e3)
	}
}

// Two replicas (two gates, each with its own client) sharing a real
// Redis count a caller's calls together: N in all, not N each. A Redis
// that cannot be reached refuses with 503 and runs nothing.
func TestLimitAcrossReplicas(t *testing.T) {
	r := testkit.StartRedis(t)
	opt, err := redis.ParseURL(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	clock := testkit.NewClock(time.Unix(1_800_000_000, 0))
	var ran atomic.Int32
	cmd := command(t, "buy", `{"commands": {"buy": {"quota": "4/s"}}}`)
	var replicas []rpc.Handler
	for i := 0; i < 2; i++ {
		rdb := redis.NewClient(opt)
		t.Cleanup(func() { _ = rdb.Close() })
		replicas = append(replicas, New(Config{Clock: clock, Quotas: cache.NewRedisQuota(rdb)}).Limit(cmd, counting(&ran)))
	}
	refused := 0
	for i := 0; i < 6; i++ {
		_, err := replicas[i%2](context.Background(), &abi.Request{Caller: abi.Caller{User: "carol"}})
		if se := statusOf(err); se != nil && se.Status == abi.StatusServiceUnavailable && se.RetryAfter == time.Second {
			refused++
		} else if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	if ran.Load() != 4 || refused != 2 {
		t.Errorf("6 calls over two replicas at 4/s: %d ran, %d refused; want 4, 2", ran.Load(), refused)
	}

	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() { _ = down.Close() })
	h := New(Config{Clock: clock, Quotas: cache.NewRedisQuota(down)}).Limit(cmd, counting(&ran))
	_, err = h(context.Background(), &abi.Request{Caller: abi.Caller{User: "carol"}})
	if se := statusOf(err); se == nil || se.Status != abi.StatusServiceUnavailable || !strings.Contains(se.Message, "quota store is unreachable") || ran.Load() != 4 {
		t.Errorf("no Redis: %v (ran %d)", err, ran.Load())
	}
}

// A caller's name in a quota key is bounded: a 64 KiB client id is
// counted by its digest, and still counted as itself.
func TestCallerKeyBounded(t *testing.T) {
	long := strings.Repeat("x", 65535)
	k := callerKey(abi.Caller{ClientID: long})
	if len(k) > maxKeyName || k == callerKey(abi.Caller{ClientID: long + "y"}) || k != callerKey(abi.Caller{ClientID: long}) {
		t.Errorf("key %q (%d bytes)", k[:min(len(k), 40)], len(k))
	}
	if callerKey(abi.Caller{User: "alice", ClientID: long}) != "user:alice" || callerKey(abi.Caller{}) != "anonymous" {
		t.Error("short names changed")
	}
}
