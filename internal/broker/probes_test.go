package broker

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/mochi-mqtt/server/v2/packets"
	"golang.org/x/crypto/bcrypt"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// Probes of the embedded broker written as an attacker would try it,
// independently of the other tests (issue 24).

// connectWithWill sends a CONNECT as user with a will message on topic
// carrying the user properties props, and returns the CONNACK.
func (c *rawClient) connectWithWill(t *testing.T, id, user, password, topic string, props []packets.UserProperty) packets.Packet {
	t.Helper()
	c.write(t, packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Connect},
		Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true, ClientIdentifier: id,
			UsernameFlag: true, Username: []byte(user), PasswordFlag: true, Password: []byte(password),
			WillFlag: true, WillTopic: topic, WillQos: 1, WillPayload: []byte("forged"),
			WillProperties: packets.Properties{User: props}},
	})
	ack, err := c.read(t)
	if err != nil || ack.FixedHeader.Type != packets.Connack {
		t.Fatalf("%s: CONNACK: %+v, %v", id, ack, err)
	}
	return ack
}

// A will message is a publish the broker makes for the client when it
// goes: it must pass the ACL as the client's own publish would (a
// CONNECT whose will topic the client may not publish to is refused
// 0x87), and lose any stamp the client forged in it.
func TestProbeWillMessage(t *testing.T) {
	ctx := testCtx(t)
	e, logs := startWith(t, Config{UsersFile: usersFile(t, "alice", "alice-pw")})
	spy := connectWith(t, ctx, e.URL(), inProcessDialer(e), "observer", "#")
	forged := []packets.UserProperty{{Key: UserProperty, Val: "admin"}, {Key: ClientIDProperty, Val: "admin-1"}, {Key: "k", Val: "v"}}

	for _, topic := range []string{"cmdhost/h/events", "cmdhost/h/replicas", "cmdhost/h/admin/remove", "clients/bob/rpc/response"} {
		c := dialRaw(t, e.Addr())
		if ack := c.connectWithWill(t, "alice-w", "alice", "alice-pw", topic, forged); ack.ReasonCode != notAuthorized {
			t.Errorf("a will on %s, where alice may not publish: CONNACK 0x%02x, want 0x87", topic, ack.ReasonCode)
		}
		_ = c.conn.Close()
	}
	if !logs.Contains("will") {
		t.Errorf("the refused wills are not logged:\n%s", logs.String())
	}

	c := dialRaw(t, e.Addr())
	if ack := c.connectWithWill(t, "alice-w", "alice", "alice-pw", "rpc/h/echo", forged); ack.ReasonCode != 0 {
		t.Fatalf("a will on a topic alice may publish to: CONNACK 0x%02x", ack.ReasonCode)
	}
	_ = c.conn.Close() // gone without a DISCONNECT: the will is sent
	for {
		p := spy.next(t, ctx)
		if p.Topic != "rpc/h/echo" {
			t.Errorf("a will reached %s", p.Topic)
			continue
		}
		if slices.ContainsFunc(p.Properties.User, func(u paho.UserProperty) bool { return u.Key == UserProperty || u.Key == ClientIDProperty }) {
			t.Errorf("the will kept the forged stamps: %v", p.Properties.User)
		}
		if p.Properties.User.Get("k") != "v" {
			t.Errorf("the will lost its other properties: %v", p.Properties.User)
		}
		return
	}
}

// A session left by one user (clean start false, an expiry) is not
// another's to resume: it holds the first user's response prefix and
// its replies not yet delivered.
func TestProbeSessionTakeoverByAnotherUser(t *testing.T) {
	e, _ := startWith(t, Config{UsersFile: usersFile(t, "alice", "alice-pw", "bob", "bob-pw")})
	c := dialRaw(t, e.Addr())
	c.write(t, packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Connect},
		Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), ClientIdentifier: "inv-1",
			UsernameFlag: true, Username: []byte("alice"), PasswordFlag: true, Password: []byte("alice-pw")},
		Properties: packets.Properties{SessionExpiryInterval: 600, SessionExpiryIntervalFlag: true},
	})
	if ack, err := c.read(t); err != nil || ack.ReasonCode != 0 {
		t.Fatalf("alice: %+v, %v", ack, err)
	}
	if got := c.subscribeCode(t, "clients/inv-1/rpc/response"); got != 1 {
		t.Fatalf("alice's own prefix: SUBACK 0x%02x", got)
	}
	_ = c.conn.Close()
	b := dialRaw(t, e.Addr())
	if ack := b.connectAs(t, "inv-1", "bob", "bob-pw"); ack.ReasonCode != packets.ErrClientIdentifierNotValid.Code {
		t.Errorf("bob resuming alice's session: CONNACK 0x%02x, want 0x85", ack.ReasonCode)
	}
}

// A token check at CONNECT costs a signature check, as a password check
// costs a hash: both take their turns in one queue, and a CONNECT whose
// turn does not come within loginWait is refused busy (0x89) before its
// token is read.
func TestProbeSATLoginsBounded(t *testing.T) {
	iss := testkit.NewIssuer(t)
	clk := testkit.NewClock(time.Now())
	e, _ := startWith(t, Config{SATKeyFile: iss.KeyFile, Clock: clk})
	tok := iss.Token(t, "system:serviceaccount:ns:a", DefaultSATAudience, clk.Now().Add(time.Hour), nil)
	var releases []func()
	for range e.guard.checks.slots { // every slot taken, as by slow checks
		release, why := e.guard.checks.turn(sourceOf(&net.TCPAddr{IP: net.ParseIP("192.0.2.1")}), false)
		if release == nil {
			t.Fatal(why)
		}
		releases = append(releases, release)
	}
	busy := dialRaw(t, e.Addr())
	acked := make(chan packets.Packet, 1)
	go func() { acked <- busy.connectSAT(t, "busy", SATMethod, tok) }()
	timer := clk.NextTimer(t) // the login waits for its turn
	if timer.Duration() != loginWait {
		t.Fatalf("the login waits %v for its turn, want %v", timer.Duration(), loginWait)
	}
	timer.Fire()
	if ack := <-acked; ack.ReasonCode != packets.ErrServerBusy.Code {
		t.Errorf("a token login whose turn did not come: CONNACK 0x%02x, want 0x89", ack.ReasonCode)
	}
	for _, release := range releases {
		release()
	}
	if ack := dialRaw(t, e.Addr()).connectSAT(t, "free", SATMethod, tok); ack.ReasonCode != 0 {
		t.Errorf("a token login with the slots free: CONNACK 0x%02x", ack.ReasonCode)
	}
}

// Refused re-authentications are a refusal a client can repeat at will
// (log in, send a bad AUTH, be disconnected, again): they are logged at
// most once a second, as the other refusals.
func TestProbeReauthRefusalsRateLimited(t *testing.T) {
	iss := testkit.NewIssuer(t)
	clk := testkit.NewClock(time.Now())
	e, logs := startWith(t, Config{SATKeyFile: iss.KeyFile, Clock: clk})
	const sub = "system:serviceaccount:ns:a"
	for i := range 20 {
		c := dialRaw(t, e.Addr())
		if ack := c.connectSAT(t, "flood", SATMethod, iss.Token(t, sub, DefaultSATAudience, clk.Now().Add(time.Hour), nil)); ack.ReasonCode != 0 {
			t.Fatalf("login %d: CONNACK 0x%02x", i, ack.ReasonCode)
		}
		if pk := c.reauth(t, "not-a-token"); pk.FixedHeader.Type != packets.Disconnect {
			t.Fatalf("bad re-authentication %d: packet type %d, want DISCONNECT", i, pk.FixedHeader.Type)
		}
		wantClosedByBroker(t, c, "bad re-authentication")
	}
	if got := e.SATStats().Refused; got != 20 {
		t.Errorf("refused %d re-authentications, want 20", got)
	}
	if n := strings.Count(logs.String(), "re-authentication refused"); n != 1 {
		t.Errorf("%d lines for 20 refused re-authentications within a second, want 1:\n%s", n, logs.String())
	}
}

// A session outlives its connection for as long as its client asks (136
// years at most, forever for a v3 client), and a client may leave one
// behind under a new client id at each CONNECT: the broker keeps at most
// Config.MaxClients sessions of disconnected clients, dropping the one
// that left first, so the newest can still be resumed.
func TestProbeLeftSessionsBounded(t *testing.T) {
	const maxClients = 3
	e, logs := startWith(t, Config{MaxClients: maxClients})
	leave := func(id string) {
		c := dialRaw(t, e.Addr())
		c.write(t, packets.Packet{
			FixedHeader: packets.FixedHeader{Type: packets.Connect},
			Connect:     packets.ConnectParams{ProtocolName: []byte("MQTT"), ClientIdentifier: id},
			Properties:  packets.Properties{SessionExpiryInterval: 0xFFFFFFFF, SessionExpiryIntervalFlag: true},
		})
		if ack, err := c.read(t); err != nil || ack.ReasonCode != 0 {
			t.Fatalf("%s: %+v, %v", id, ack, err)
		}
		c.subscribe(t, "clients/"+id+"/rpc/response", 1)
		_ = c.conn.Close()
		testkit.WaitFor(t, id+" disconnected", func() bool {
			cl, ok := e.srv.Clients.Get(id)
			return ok && cl.Closed() && cl.StopTime() > 0
		})
	}
	const left = 12
	for i := range left {
		leave("left-" + strconv.Itoa(i))
	}
	kept := 0
	for _, cl := range e.srv.Clients.GetAll() {
		if cl.Net.Listener != inProcessListener {
			kept++
		}
	}
	if kept > maxClients {
		t.Errorf("%d sessions of disconnected clients kept, want at most %d", kept, maxClients)
	}
	if _, ok := e.srv.Clients.Get("left-" + strconv.Itoa(left-1)); !ok {
		t.Errorf("the newest session was dropped")
	}
	if got := e.Stats().SessionsDropped; got < left-maxClients {
		t.Errorf("SessionsDropped %d, want at least %d", got, left-maxClients)
	}
	if !logs.Contains("session dropped") {
		t.Errorf("the dropped sessions are not logged:\n%s", logs.String())
	}
}

// Names a client chooses are hostile input: a 60 KiB user name and
// client id are refused (bad user name or password) and cut in the log;
// a client id or user name that is not UTF-8 gets no session; a user name
// with MQTT wildcards is only a name (it logs in as what the users file
// says, and its grants are its own).
func TestProbeHostileNames(t *testing.T) {
	e, logs := startWith(t, Config{UsersFile: usersFile(t, "alice", "alice-pw")})
	long := strings.Repeat("n", 60<<10)
	if ack := dialRaw(t, e.Addr()).connectAs(t, long, long, "pw"); ack.ReasonCode != packets.ErrBadUsernameOrPassword.Code {
		t.Errorf("a 60 KiB user name: CONNACK 0x%02x, want 0x86", ack.ReasonCode)
	}
	if strings.Contains(logs.String(), strings.Repeat("n", logMax+1)) {
		t.Errorf("a client's name is logged whole")
	}
	for _, c := range []struct{ id, user string }{{"bad\xff\xfeid", "alice"}, {"ok-id", "ali\xffce"}} {
		cl := dialRaw(t, e.Addr())
		cl.write(t, packets.Packet{
			FixedHeader: packets.FixedHeader{Type: packets.Connect},
			Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true, ClientIdentifier: c.id,
				UsernameFlag: true, Username: []byte(c.user), PasswordFlag: true, Password: []byte("alice-pw")},
		})
		if ack, err := cl.read(t); err == nil && ack.FixedHeader.Type == packets.Connack && ack.ReasonCode == 0 {
			t.Errorf("client id %q, user %q (not UTF-8): admitted", c.id, c.user)
		}
	}
	for i, name := range []string{"#", "+", "a/b", "alice/#"} {
		// Each from an address of its own: five failures from one would
		// have its next logins refused without a check (throttle.go).
		if ack := dialFrom(t, "127.0.1."+itoa(i+1), e.Addr()).connectAs(t, "w-"+strings.NewReplacer("#", "h", "+", "p", "/", "s").Replace(name), name, "alice-pw"); ack.ReasonCode != packets.ErrBadUsernameOrPassword.Code {
			t.Errorf("user name %q with alice's password: CONNACK 0x%02x, want 0x86", name, ack.ReasonCode)
		}
	}
}

// A reply outlives its caller's connection: a user who connects with the
// client id another user just left (a fixed id, as the Azure SDK's
// clients have) would get that user's response prefix, and the replies
// still on their way to it. The id stays the leaving user's for
// leftIDHold.
func TestProbeLeftClientIDNotAnotherUsers(t *testing.T) {
	ctx := testCtx(t)
	clk := testkit.NewClock(time.Now())
	e, logs := startWith(t, Config{UsersFile: usersFile(t, "alice", "alice-pw", "bob", "bob-pw"), Clock: clk})
	host := connectWith(t, ctx, e.URL(), inProcessDialer(e), "host", "rpc/h/#")

	a := dialRaw(t, e.Addr())
	if ack := a.connectAs(t, "app-1", "alice", "alice-pw"); ack.ReasonCode != 0 {
		t.Fatalf("alice: CONNACK 0x%02x", ack.ReasonCode)
	}
	if code := a.publishWithResponseTopic(t, "rpc/h/echo", "clients/app-1/rpc/response"); code != 0 {
		t.Fatalf("alice's request: PUBACK 0x%02x", code)
	}
	req := host.next(t, ctx)
	_ = a.conn.Close() // alice leaves before the reply (clean start: her session ends)
	testkit.WaitFor(t, "alice's session ended", func() bool { _, ok := e.srv.Clients.Get("app-1"); return !ok })

	b := dialRaw(t, e.Addr())
	if ack := b.connectAs(t, "app-1", "bob", "bob-pw"); ack.ReasonCode != packets.ErrClientIdentifierNotValid.Code {
		b.subscribe(t, "clients/app-1/rpc/response", 1)
		if _, err := host.cm.Publish(ctx, &paho.Publish{QoS: 1, Topic: req.Properties.ResponseTopic, Payload: []byte("alice's reply"),
			Properties: &paho.PublishProperties{CorrelationData: req.Properties.CorrelationData}}); err != nil {
			t.Fatal(err)
		}
		if pk, err := b.read(t); err == nil && pk.FixedHeader.Type == packets.Publish {
			t.Errorf("bob, with the client id alice left, got her reply %q", pk.Payload)
		}
		t.Fatalf("bob taking the client id alice just left: CONNACK 0x%02x, want 0x85", ack.ReasonCode)
	}
	if !logs.Contains("another user left") {
		t.Errorf("the refusal is not logged:\n%s", logs.String())
	}
	if ack := dialRaw(t, e.Addr()).connectAs(t, "app-1", "alice", "alice-pw"); ack.ReasonCode != 0 {
		t.Errorf("alice coming back with her id: CONNACK 0x%02x", ack.ReasonCode)
	}
	clk.Add(leftIDHold + time.Second)
	if ack := dialRaw(t, e.Addr()).connectAs(t, "app-2", "bob", "bob-pw"); ack.ReasonCode != 0 {
		t.Errorf("bob with another id: CONNACK 0x%02x", ack.ReasonCode)
	}
}

// A user cannot obtain another user's held client id by churning ids:
// mallory connecting and leaving under new ids, many more than the
// broker holds, evicts her own holds only; alice's id, left with a
// request running, stays hers, and mallory connecting with it is refused
// (0x85) and gets no reply. Before, the holds were one table of
// 4 × MaxClients that dropped the oldest, whoever's: 4,062 connections in
// 29 s flushed it, and mallory took alice's id and her reply.
func TestProbeLeftIDChurnCannotFlushHolds(t *testing.T) {
	ctx := testCtx(t)
	clk := testkit.NewClock(time.Now())
	const maxClients = 4 // 16 holds in all
	e, _ := startWith(t, Config{MaxClients: maxClients, Clock: clk,
		UsersFile: usersFileCost(t, bcrypt.MinCost, "alice", "alice-pw", "mallory", "mallory-pw")})
	host := connectWith(t, ctx, e.URL(), inProcessDialer(e), "host", "rpc/h/#")

	a := dialRaw(t, e.Addr())
	if ack := a.connectAs(t, "app-1", "alice", "alice-pw"); ack.ReasonCode != 0 {
		t.Fatalf("alice: CONNACK 0x%02x", ack.ReasonCode)
	}
	if code := a.publishWithResponseTopic(t, "rpc/h/echo", "clients/app-1/rpc/response"); code != 0 {
		t.Fatalf("alice's request: PUBACK 0x%02x", code)
	}
	req := host.next(t, ctx)
	_ = a.conn.Close()
	testkit.WaitFor(t, "alice's session ended", func() bool { _, ok := e.srv.Clients.Get("app-1"); return !ok })

	for i := range 20 * maxClients { // five times the holds
		id := "churn-" + strconv.Itoa(i)
		m := dialRaw(t, e.Addr())
		if ack := m.connectAs(t, id, "mallory", "mallory-pw"); ack.ReasonCode != 0 {
			t.Fatalf("mallory as %s: CONNACK 0x%02x", id, ack.ReasonCode)
		}
		_ = m.conn.Close()
		testkit.WaitFor(t, id+" gone", func() bool { _, ok := e.srv.Clients.Get(id); return !ok })
		clk.Add(time.Millisecond)
	}
	m := dialRaw(t, e.Addr())
	if ack := m.connectAs(t, "app-1", "mallory", "mallory-pw"); ack.ReasonCode != packets.ErrClientIdentifierNotValid.Code {
		m.subscribe(t, "clients/app-1/rpc/response", 1)
		if _, err := host.cm.Publish(ctx, &paho.Publish{QoS: 1, Topic: req.Properties.ResponseTopic, Payload: []byte("alice's reply"),
			Properties: &paho.PublishProperties{CorrelationData: req.Properties.CorrelationData}}); err != nil {
			t.Fatal(err)
		}
		if pk, err := m.read(t); err == nil && pk.FixedHeader.Type == packets.Publish {
			t.Errorf("mallory, with the client id alice left, got her reply %q", pk.Payload)
		}
		t.Fatalf("mallory taking alice's id after churning %d ids: CONNACK 0x%02x, want 0x85", 20*maxClients, ack.ReasonCode)
	}
	if ack := dialRaw(t, e.Addr()).connectAs(t, "app-1", "alice", "alice-pw"); ack.ReasonCode != 0 {
		t.Errorf("alice coming back with her id: CONNACK 0x%02x", ack.ReasonCode)
	}
}
