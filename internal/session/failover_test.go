package session

import (
	"errors"
	"net/url"
	"syscall"
	"testing"
)

// A round of attempts over several brokers is reported once, when every
// broker failed, with its most telling error: a refusal for who the
// client is over a broker down.
func TestFailoverRound(t *testing.T) {
	var r failoverRound
	down := syscall.ECONNREFUSED
	refused := &RefusedError{Code: 0x86, ClientID: "c"}
	if _, over := r.failed(down, 2); over {
		t.Fatal("the first of two brokers down ended the round")
	}
	if err, over := r.failed(down, 2); !over || !errors.Is(err, down) {
		t.Fatalf("both down: %v, %v", err, over)
	}
	r.failed(refused, 2)
	if err, over := r.failed(down, 2); !over || !Refused(err) {
		t.Fatalf("one refused, one down: %v, %v; want the refusal", err, over)
	}
	r.failed(down, 2)
	r.reset() // connected to the second
	if _, over := r.failed(down, 2); over {
		t.Fatal("a round after a connection counts the one before")
	}
	if err, over := r.failed(down, 1); !over || err == nil {
		t.Fatal("one broker: every failure is a round")
	}
}

// The failover brokers are resolved as Broker is: the user of a URL
// taken in, one TLS and one plain refused.
func TestFailoverResolve(t *testing.T) {
	u := func(s string) *url.URL {
		v, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	c, err := Config{Broker: u("mqtt://a:1883"), Failover: []*url.URL{u("mqtt://alice@b")}, ClientID: "c"}.Resolve()
	if err != nil || c.Auth.Username != "alice" || c.Failover[0].Host != "b:1883" || c.Failover[0].User != nil {
		t.Fatalf("%+v, %v", c, err)
	}
	if got := c.Brokers(); len(got) != 2 || got[0].Host != "a:1883" {
		t.Fatalf("Brokers: %v", got)
	}
	if _, err := (Config{Broker: u("mqtt://a"), Failover: []*url.URL{u("mqtts://b")}, ClientID: "c"}).Resolve(); err == nil {
		t.Fatal("a plain and a TLS broker: accepted")
	}
}
