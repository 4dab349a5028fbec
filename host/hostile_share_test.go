package host_test

import (
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// On the embedded broker an invoker flooding with another's __srcId
// fills its own dedup share, not the other's: the share is keyed by the
// client id the broker stamped (rpc.Config.TrustBrokerClientID, set by
// the host on the embedded broker). The flood gets 503 past its share;
// the invoker it posed as is served. Before, the victim got 503 "share"
// for the attacker's chosen expiry.
func TestForgedSourceIDCannotExhaustAnothersShare(t *testing.T) {
	const share = 20
	u := brokertest.StartEmbedded(t)
	e := newEnvConfig(t, u, func(c *rpc.Config, _ []rpc.Command) {
		c.MaxDedupEntries, c.MaxDedupPerInvoker, c.TrustBrokerClientID = 10*share, share, true
	}, "echo")
	attacker := newRawClient(t, u)
	name := strings.ReplaceAll(t.Name(), "/", "-")
	victim := &rawClient{Client: testkit.Dial(t, u, "victim-"+name), respTopic: "victim/" + name}
	victim.Subscribe(t, victim.respTopic)

	refused := 0
	for n := range 5 * share {
		r := hostileRequest(t, attacker, "victim", n, 3600, "")
		switch stat := userProp(r, "__stat"); {
		case stat == "503" && strings.Contains(userProp(r, "__stMsg"), "share"):
			refused++
		case stat != "200":
			t.Fatalf("flood request %d: %s %q", n, stat, userProp(r, "__stMsg"))
		}
	}
	if refused != 4*share {
		t.Errorf("the flood got %d refusals, want %d (all past its own share)", refused, 4*share)
	}
	for n := range share {
		if r := hostileRequest(t, victim, "victim", 1000+n, 3600, ""); userProp(r, "__stat") != "200" {
			t.Fatalf("the victim's request %d: %s %q, want 200", n, userProp(r, "__stat"), userProp(r, "__stMsg"))
		}
	}
	echoStillAnswers(t, e, "a flood with another's __srcId")
}

// The executor's name of the property is the broker's.
func TestBrokerClientIDPropertyAgrees(t *testing.T) {
	if broker.ClientIDProperty != rpc.BrokerClientIDProperty {
		t.Fatalf("broker stamps %q, the executor reads %q", broker.ClientIDProperty, rpc.BrokerClientIDProperty)
	}
	if broker.UserProperty != rpc.BrokerUserProperty {
		t.Fatalf("broker stamps %q, the executor reads %q", broker.UserProperty, rpc.BrokerUserProperty)
	}
}
