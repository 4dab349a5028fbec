package broker

import (
	"strings"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// connectSAT sends a CONNECT as id with authentication method and data
// and returns the CONNACK.
func (c *rawClient) connectSAT(t *testing.T, id, method, token string) packets.Packet {
	t.Helper()
	c.write(t, packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Connect},
		Connect:     packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true, ClientIdentifier: id},
		Properties:  packets.Properties{AuthenticationMethod: method, AuthenticationData: []byte(token)},
	})
	ack, err := c.read(t)
	if err != nil || ack.FixedHeader.Type != packets.Connack {
		t.Fatalf("%s: want a CONNACK: %v (type %d)", id, err, ack.FixedHeader.Type)
	}
	return ack
}

// reauth sends an AUTH re-authenticate with token and returns the answer.
func (c *rawClient) reauth(t *testing.T, token string) packets.Packet {
	t.Helper()
	c.write(t, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Auth}, ReasonCode: reasonReauthenticate,
		Properties: packets.Properties{AuthenticationMethod: SATMethod, AuthenticationData: []byte(token)}})
	pk, err := c.read(t)
	if err != nil {
		t.Fatalf("no answer to AUTH: %v", err)
	}
	return pk
}

// K8S-SAT logins: CONNACK codes, the subject as the user, a new token on
// the live connection, and a client disconnected when its token expires
// (the broker's clock, a fake one here, decides).
func TestSAT(t *testing.T) {
	iss := testkit.NewIssuer(t)
	start := time.Now()
	clk := testkit.NewClock(start)
	e, logs := startWith(t, Config{SATKeyFile: iss.KeyFile, Clock: clk, ACLFile: aclFile(t, "user system:serviceaccount:ns:caller\ncall rpc/+/echo\n")})
	const sub = "system:serviceaccount:ns:caller"
	good := iss.Token(t, sub, DefaultSATAudience, start.Add(time.Hour), nil)

	for _, c := range []struct {
		name, method, token string
		want                byte
	}{
		{"no token", "", "", packets.ErrNotAuthorized.Code},
		{"another method", "SCRAM-SHA-1", good, packets.ErrBadAuthenticationMethod.Code},
		{"expired", SATMethod, iss.Token(t, sub, DefaultSATAudience, start.Add(-time.Second), nil), packets.ErrNotAuthorized.Code},
		{"another audience", SATMethod, iss.Token(t, sub, "api", start.Add(time.Hour), nil), packets.ErrNotAuthorized.Code},
		{"another issuer", SATMethod, testkit.NewIssuer(t).Token(t, sub, DefaultSATAudience, start.Add(time.Hour), nil), packets.ErrNotAuthorized.Code},
		{"too large", SATMethod, good + strings.Repeat("x", 16<<10), packets.ErrNotAuthorized.Code},
	} {
		if got := dialRaw(t, e.Addr()).connectSAT(t, "c-"+strings.ReplaceAll(c.name, " ", "-"), c.method, c.token); got.ReasonCode != c.want {
			t.Errorf("%s: CONNACK 0x%02x, want 0x%02x", c.name, got.ReasonCode, c.want)
		}
	}
	if got := e.SATStats().Refused; got != 4 {
		t.Errorf("refused %d tokens, want 4 (no token and another method are not token checks)", got)
	}

	c := dialRaw(t, e.Addr())
	ack := c.connectSAT(t, "caller", SATMethod, good)
	if ack.ReasonCode != 0 || ack.Properties.AuthenticationMethod != SATMethod {
		t.Fatalf("good token: CONNACK 0x%02x, method %q", ack.ReasonCode, ack.Properties.AuthenticationMethod)
	}
	// The subject is the user the ACL grants by.
	if code := c.publishCode(t, "rpc/h/echo"); code != 0 {
		t.Errorf("publish granted to the token's subject: PUBACK 0x%02x", code)
	}
	if code := c.publishCode(t, "rpc/h/other"); code != packets.ErrNotAuthorized.Code {
		t.Errorf("publish not granted: PUBACK 0x%02x, want 0x87", code)
	}
	testkit.WaitFor(t, "the token's expiry armed", func() bool { return clk.Pending() == 1 })

	// A new token for the same subject: AUTH 0x00, and the expiry moves.
	second := iss.Token(t, sub, DefaultSATAudience, start.Add(2*time.Hour), nil)
	if pk := c.reauth(t, second); pk.FixedHeader.Type != packets.Auth || pk.ReasonCode != 0 {
		t.Fatalf("re-authentication: packet type %d reason 0x%02x, want AUTH 0x00", pk.FixedHeader.Type, pk.ReasonCode)
	}
	// The same token again and again: accepted without checking it again
	// (a loop of them would hold the checks every login waits for).
	for range 20 {
		if pk := c.reauth(t, second); pk.FixedHeader.Type != packets.Auth || pk.ReasonCode != 0 {
			t.Fatalf("the same token again: packet type %d reason 0x%02x, want AUTH 0x00", pk.FixedHeader.Type, pk.ReasonCode)
		}
	}
	if got := e.SATStats().Reauthentications; got != 1 {
		t.Errorf("%d re-authentications checked, want 1 (the same token sent again is not checked again)", got)
	}
	clk.Add(90 * time.Minute) // past the first token's expiry
	if code := c.publishCode(t, "rpc/h/echo"); code != 0 {
		t.Fatalf("after the first token's expiry, with the second: PUBACK 0x%02x", code)
	}
	clk.Add(31 * time.Minute) // past the second's
	pk, err := c.read(t)
	if err != nil || pk.FixedHeader.Type != packets.Disconnect || pk.ReasonCode != packets.ErrNotAuthorized.Code {
		t.Fatalf("at the token's expiry: %v, packet type %d reason 0x%02x; want DISCONNECT 0x87", err, pk.FixedHeader.Type, pk.ReasonCode)
	}
	wantClosedByBroker(t, c, "expired token")

	// A new token of another subject, or an expired one, ends the
	// connection.
	for name, tok := range map[string]string{
		"another subject": iss.Token(t, "system:serviceaccount:ns:admin", DefaultSATAudience, clk.Now().Add(time.Hour), nil),
		"expired":         iss.Token(t, sub, DefaultSATAudience, clk.Now().Add(-time.Second), nil),
	} {
		c := dialRaw(t, e.Addr())
		if ack := c.connectSAT(t, "caller", SATMethod, iss.Token(t, sub, DefaultSATAudience, clk.Now().Add(time.Hour), nil)); ack.ReasonCode != 0 {
			t.Fatalf("%s: CONNACK 0x%02x", name, ack.ReasonCode)
		}
		if pk := c.reauth(t, tok); pk.FixedHeader.Type != packets.Disconnect || pk.ReasonCode != packets.ErrNotAuthorized.Code {
			t.Errorf("%s: packet type %d reason 0x%02x, want DISCONNECT 0x87", name, pk.FixedHeader.Type, pk.ReasonCode)
		}
		wantClosedByBroker(t, c, name)
	}
	st := e.SATStats()
	if st.Reauthentications != 1 || st.Expired != 1 || st.Logins != 3 {
		t.Errorf("stats %+v: want 3 logins, 1 re-authentication, 1 expired", st)
	}
	testkit.WaitFor(t, "the disconnected clients' timers stopped", func() bool { return clk.Pending() == 0 })
	// Refusals are logged at most one a second (a flood of bad clients
	// must not flood the log): one of each kind is.
	for _, want := range []string{"client refused: no service account token", "its service account token expired",
		"re-authenticated with a new service account token", "client disconnected: re-authentication refused"} {
		if !logs.Contains(want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	if logs.Contains("eyJ") || logs.Contains("101 121 74") { // a JWT starts with eyJ, as text or bytes
		t.Errorf("a token is in the log:\n%s", logs.String())
	}
}
