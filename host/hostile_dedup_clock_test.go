package host_test

import (
	"encoding/binary"
	"math"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/rpc"
)

// hostileRequest sends echo request n from invoker src (its __srcId) with
// the given expiry (and __ts, when not empty) and returns the reply.
func hostileRequest(t *testing.T, c *rawClient, src string, n int, expiry uint32, ts string) *paho.Publish {
	t.Helper()
	corr := make([]byte, 16)
	binary.BigEndian.PutUint64(corr[8:], uint64(n))
	p := &paho.Publish{QoS: 1, Topic: "rpc/it-host/echo", Payload: []byte("x"), Properties: &paho.PublishProperties{
		CorrelationData: corr, ResponseTopic: c.respTopic, MessageExpiry: &expiry,
		User: paho.UserProperties{{Key: "__srcId", Value: src}},
	}}
	if ts != "" {
		p.Properties.User = append(p.Properties.User, paho.UserProperty{Key: "__ts", Value: ts})
	}
	c.Publish(t, p)
	return c.next(t)
}

// echoStillAnswers is the acceptance check after each hostile sequence:
// another invoker's echo, with a current __ts, is answered 200 (the
// timeout is a hang guard; on an idle machine it takes ~1 ms).
func echoStillAnswers(t *testing.T, e *env, after string) {
	t.Helper()
	r, err := e.call("echo", "still here", 30*time.Second, nil)
	if err != nil || r.Status != abi.StatusOK || string(r.Payload) != "still here" {
		t.Fatalf("after %s: echo got %+v, %v; want 200", after, r, err)
	}
}

// Neither the dedup store nor the clock can be locked through a real
// broker: one invoker sending 101 % of the store's bound with the maximum
// expiry, then with the expiry the host allows, and requests whose __ts
// is within the drift limit but with its counter at the maximum, renewed,
// leave echo answering other invokers.
func TestHostileRequestsCannotLockDedupOrClock(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		const store = 200
		e := newEnvConfig(t, u, func(c *rpc.Config, _ []rpc.Command) { c.MaxDedupEntries = store }, "echo")
		c := newRawClient(t, u)
		n := 0
		statusOf := func(p *paho.Publish) string { return userProp(p, "__stat") }

		for range store * 101 / 100 {
			n++
			r := hostileRequest(t, c, "hostile", n, math.MaxUint32, "")
			if statusOf(r) != "400" || userProp(r, "__propName") != "Message Expiry" || !strings.Contains(userProp(r, "__stMsg"), "3600 s") {
				t.Fatalf("maximum expiry: %s %q (%s), want 400 naming Message Expiry and 3600 s", statusOf(r), userProp(r, "__stMsg"), userProp(r, "__propName"))
			}
		}
		echoStillAnswers(t, e, "101 % of the store with the maximum expiry")

		admitted := 0
		for range store * 101 / 100 {
			n++
			r := hostileRequest(t, c, "hostile", n, 3600, "")
			switch statusOf(r) {
			case "200":
				admitted++
			case "503":
				if !strings.Contains(userProp(r, "__stMsg"), "share") {
					t.Fatalf("503 %q should name the invoker's share", userProp(r, "__stMsg"))
				}
			default:
				t.Fatalf("expiry within the maximum: %s %q", statusOf(r), userProp(r, "__stMsg"))
			}
		}
		if admitted != store/10 {
			t.Fatalf("one invoker got %d dedup entries, want its share, %d", admitted, store/10)
		}
		echoStillAnswers(t, e, "one invoker filling its share of the store")

		now := time.Now()
		poisons := []hlc.Timestamp{
			{Millis: now.Add(50 * time.Second).UnixMilli(), Counter: hlc.MaxCounter - 1, NodeID: "hostile"},
			{Millis: now.Add(55 * time.Second).UnixMilli(), Counter: hlc.MaxCounter, NodeID: "hostile"},
		}
		// From an invoker of its own: the first one's share is full.
		for i, ts := range append(poisons, poisons...) {
			n++
			if r := hostileRequest(t, c, "clock", n, 10, ts.String()); statusOf(r) != "200" {
				t.Fatalf("__ts %v: %s %q, want 200 (within the drift limit)", ts, statusOf(r), userProp(r, "__stMsg"))
			}
			echoStillAnswers(t, e, "__ts "+ts.String()+" (poison "+strconv.Itoa(i)+")")
		}
		// Far beyond the drift limit: refused before it reaches the clock.
		n++
		far := hlc.Timestamp{Millis: now.Add(time.Hour).UnixMilli(), Counter: hlc.MaxCounter, NodeID: "hostile"}
		if r := hostileRequest(t, c, "clock", n, 10, far.String()); statusOf(r) != "503" || userProp(r, "__propName") != "MaxClockDrift" {
			t.Fatalf("__ts an hour ahead: %s %q (%s), want 503 MaxClockDrift", statusOf(r), userProp(r, "__stMsg"), userProp(r, "__propName"))
		}
		echoStillAnswers(t, e, "a __ts an hour ahead")
	})
}
