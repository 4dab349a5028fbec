package exactlyonce

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// bridgeTo is the mosquitto.conf section that bridges a broker to the
// broker at a (docs/operations.md, "Several brokers"): cmdhost's three
// topic trees both ways at QoS 1, over MQTT v5 (a 3.1.1 bridge drops the
// response topic, correlation data and expiry a request needs), a clean
// session (a backlog queued for a dead link is only duplicates of what
// the invokers send again). max_inflight_messages (the last one read
// wins) is 65534: mosquitto 2.0.11 sends a v5 bridge's CONNECT with a
// receive maximum of 0, a protocol error the other broker closes it for,
// when it is 0 (no cap, which the test brokers use) or 65535.
func bridgeTo(a *url.URL) string {
	return fmt.Sprintf(`max_inflight_messages 65534
connection cmdhost-bridge
address %s
bridge_protocol_version mqttv50
cleansession true
restart_timeout 1
topic rpc/# both 1
topic clients/# both 1
topic cmdhost/# both 1
`, a.Host)
}

// Two mosquittos, B bridged to A; two replicas (serve --share) given
// --broker A --broker B and the shared store; invokers given both, half
// of them B first (their requests cross the bridge to the replicas on A,
// the replies cross back). A is killed with kill -9 under load: the
// replicas and half the invokers move to B; every request is answered
// (re-sent, same correlation data, when its reply does not come), none
// runs twice, replays of every answered request included.
//
// The store is what holds exactly-once here: a request a replica ran on
// A whose reply A swallowed is re-sent on B, where the share group may
// give it to the other replica; only Redis knows it ran. (One serve alone
// would answer it from its own memory.)
func TestBridgedBrokerKilledRunsNothingTwice(t *testing.T) {
	const total, inFlight = 3000, 32
	a, killA := brokertest.StartKillableMosquitto(t, brokertest.MosquittoOptions{})
	b := brokertest.StartMosquittoWith(t, brokertest.MosquittoOptions{Tail: bridgeTo(a)})
	redis := testkit.StartRedis(t)
	l := newLedger(t)
	for i := 1; i <= 2; i++ {
		clitest.StartServeIn(t, l.plugins, nil, "--broker", a.String(), "--broker", b.String(),
			"--client-id", fmt.Sprintf("replica-%d", i), "--share", "g", "--store", redis.URL)
	}
	waitBridged(t, b)

	load := startLedgerLoadOn(t, func(w int) session.Config {
		if w%2 == 1 {
			return session.Config{Broker: b, Failover: []*url.URL{a}}
		}
		return session.Config{Broker: a, Failover: []*url.URL{b}}
	}, "cli-host", total, inFlight, 2*time.Second)
	load.waitAnswered(t, int64(total/3))
	killA()
	killedAt := load.answered.Load()
	load.waitAnswered(t, int64(total))
	load.wg.Wait()
	t.Logf("%d answered (%d when A was killed, %d outcome unknown), %d first sends unanswered, %d re-sends, %d refused \"send it again\"",
		load.answered.Load(), killedAt, len(load.unknown), load.firstLost.Load(), load.resent.Load(), load.sendAgain.Load())
	if len(load.unknown) > 0 {
		t.Errorf("%d requests answered \"outcome unknown\", though no replica died", len(load.unknown))
	}
	checkOnce(t, l.runs(t), total, load)
	replayed := load.replay(t)
	t.Logf("%d answered requests replayed on B", replayed)
	checkOnce(t, l.runs(t), total, load)
}

// waitBridged waits until a request sent on b is answered by a replica
// on the other side of its bridge: the bridge is up and subscribed.
func waitBridged(t *testing.T, b *url.URL) {
	t.Helper()
	inv, err := rpc.NewInvoker(context.Background(), rpc.InvokerConfig{Session: session.Config{Broker: b, ClientID: "bridge-probe"}})
	if err != nil {
		t.Fatal(err)
	}
	defer inv.Close()
	testkit.WaitFor(t, "a request on B answered across the bridge", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		res, err := inv.Invoke(ctx, rpc.Call{Topic: "rpc/cli-host/lookup", Payload: []byte("probe"),
			ContentType: "text/plain", Timeout: time.Minute, Correlation: rpc.NewCorrelation()})
		return err == nil && res.Status == 200 && strings.Contains(string(res.Payload), "probe")
	})
}

// A share group belongs to one broker: replicas of one executor on two
// bridged brokers make two groups, and each request reaches one replica
// in each. Without the shared store it runs twice (what
// docs/operations.md warns of); with it, once.
func TestShareGroupSplitAcrossBridge(t *testing.T) {
	for _, withStore := range []bool{false, true} {
		t.Run(fmt.Sprintf("store=%t", withStore), func(t *testing.T) {
			const total = 100
			a := brokertest.StartMosquitto(t)
			b := brokertest.StartMosquittoWith(t, brokertest.MosquittoOptions{Tail: bridgeTo(a)})
			l := newLedger(t)
			var store []string
			if withStore {
				store = []string{"--store", testkit.StartRedis(t).URL}
			}
			for i, u := range []*url.URL{a, b} {
				clitest.StartServeIn(t, l.plugins, nil, append([]string{"--broker", u.String(),
					"--client-id", fmt.Sprintf("replica-%d", i+1), "--share", "g"}, store...)...)
			}
			waitBridged(t, b)
			load := startLedgerLoad(t, a, "cli-host", total, 4, 2*time.Second)
			load.waitAnswered(t, total)
			load.wg.Wait()
			runs, want := l.runs(t), 1
			if !withStore {
				want = 2
			}
			for i := 1; i <= total; i++ {
				p := fmt.Sprintf("req-%06d", i)
				if !withStore && len(runs[p]) < want {
					// the second group's copy may still be running
					testkit.WaitFor(t, p+" run by both groups", func() bool { return len(l.runs(t)[p]) >= want })
					runs = l.runs(t)
				}
				if len(runs[p]) != want {
					t.Errorf("%s ran %d times, want %d", p, len(runs[p]), want)
				}
			}
		})
	}
}
