package broker

import (
	"slices"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// publishRequest publishes a QoS 0 request on topic from a raw client,
// with forged stamps among its user properties and a response topic under
// the client's own prefix (the only one an ACL lets it name).
func (c *rawClient) publishRequest(t *testing.T, topic, clientID string) {
	t.Helper()
	c.write(t, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish}, TopicName: topic,
		Mods: packets.Mods{AllowResponseInfo: true},
		Properties: packets.Properties{ResponseTopic: "clients/" + clientID + "/x", User: []packets.UserProperty{
			{Key: UserProperty, Val: "root"}, {Key: "k", Val: "v"}, {Key: ClientIDProperty, Val: "victim"}}},
		Payload: []byte("hi")})
}

// The broker stamps a request with the user name it verified, beside the
// client id: the password user with a users file, the certificate's name
// with mTLS, none for an anonymous client whatever user name it claims;
// any stamp a client sent is removed.
func TestCallerStamp(t *testing.T) {
	pki := testkit.NewPKI(t)
	cert, key := pki.Server(t, "broker")
	ctx := testCtx(t)
	withUsers, _ := startWith(t, Config{TLSAddr: "127.0.0.1:0", TLSCertFile: cert, TLSKeyFile: key,
		TLSClientCAFile: pki.CAFile, UsersFile: usersFile(t, "alice", "alice-pw")})
	sub := connectWith(t, ctx, withUsers.URL(), inProcessDialer(withUsers), "host-exec", "rpc/#")
	want := func(what, id, user string) {
		t.Helper()
		got := sub.next(t, ctx).Properties.User
		w := paho.UserProperties{{Key: "k", Value: "v"}, {Key: ClientIDProperty, Value: id}}
		if user != "" {
			w = append(w, paho.UserProperty{Key: UserProperty, Value: user})
		}
		if !slices.Equal(got, w) {
			t.Errorf("%s: the request arrived with %v, want %v", what, got, w)
		}
	}

	alice := dialRaw(t, withUsers.Addr())
	if ack := alice.connectAs(t, "alice-1", "alice", "alice-pw"); ack.ReasonCode != 0 {
		t.Fatalf("alice: CONNACK 0x%02x", ack.ReasonCode)
	}
	alice.publishRequest(t, "rpc/x/a", "alice-1")
	want("password user", "alice-1", "alice")

	bobCert, bobKey := pki.Client(t, "bob")
	bob, err := dialTLS(t, withUsers.TLSAddr(), pki, bobCert, bobKey)
	if err != nil {
		t.Fatal(err)
	}
	if ack := bob.connectAs(t, "bob-1", "", ""); ack.ReasonCode != 0 {
		t.Fatalf("bob: CONNACK 0x%02x", ack.ReasonCode)
	}
	bob.publishRequest(t, "rpc/x/b", "bob-1")
	want("client certificate", "bob-1", "bob")

	open := startBroker(t)
	sub = connectWith(t, ctx, open.URL(), inProcessDialer(open), "host-exec", "rpc/#")
	anon := dialRaw(t, open.Addr())
	if ack := anon.connectAs(t, "anon-1", "root", "anything"); ack.ReasonCode != 0 {
		t.Fatalf("anonymous: CONNACK 0x%02x", ack.ReasonCode)
	}
	anon.publishRequest(t, "rpc/x/c", "anon-1")
	want("anonymous client claiming a user name", "anon-1", "")
}

// GrantsAdmin is the ACL file's `admin` line for a user; without an ACL
// file no one has it (everyone may publish everywhere, which grants
// nothing).
func TestGrantsAdmin(t *testing.T) {
	users := usersFile(t, "alice", "alice-pw")
	e, _ := startWith(t, Config{UsersFile: users, ACLFile: aclFile(t, "user root\ncall rpc/#\nadmin\nuser alice\ncall rpc/#\n")})
	for user, want := range map[string]bool{"root": true, "alice": false, "mallory": false, "": false} {
		if got := e.GrantsAdmin(user); got != want {
			t.Errorf("GrantsAdmin(%q) = %v, want %v", user, got, want)
		}
	}
	open, _ := startWith(t, Config{UsersFile: users})
	if open.GrantsAdmin("root") {
		t.Error("without an ACL file root is granted admin")
	}
}

// A client that logged in with a service account token is stamped with
// the token's subject, the user the broker verified.
func TestCallerStampSAT(t *testing.T) {
	iss := testkit.NewIssuer(t)
	const sub = "system:serviceaccount:ns:caller"
	e, _ := startWith(t, Config{SATKeyFile: iss.KeyFile, ACLFile: aclFile(t, "user "+sub+"\ncall rpc/#\n")})
	ctx := testCtx(t)
	s := connectWith(t, ctx, e.URL(), inProcessDialer(e), "host-exec", "rpc/#")
	c := dialRaw(t, e.Addr())
	if ack := c.connectSAT(t, "sa-1", SATMethod, iss.Token(t, sub, DefaultSATAudience, time.Now().Add(time.Hour), nil)); ack.ReasonCode != 0 {
		t.Fatalf("CONNACK 0x%02x", ack.ReasonCode)
	}
	c.publishRequest(t, "rpc/x/a", "sa-1")
	got := s.next(t, ctx).Properties.User
	want := paho.UserProperties{{Key: "k", Value: "v"}, {Key: ClientIDProperty, Value: "sa-1"}, {Key: UserProperty, Value: sub}}
	if !slices.Equal(got, want) {
		t.Errorf("the request arrived with %v, want %v", got, want)
	}
}

// publishTelemetry publishes a QoS 0 message without a response topic
// from a raw client, with forged stamps among its user properties.
func (c *rawClient) publishTelemetry(t *testing.T, topic string) {
	t.Helper()
	c.write(t, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish}, TopicName: topic,
		Properties: packets.Properties{User: []packets.UserProperty{
			{Key: UserProperty, Val: "root"}, {Key: "k", Val: "v"}, {Key: ClientIDProperty, Val: "victim"}}},
		Payload: []byte("21.5")})
}

// A client the host named with StampFor (its trigger session) is told
// who sent every message, not only requests; no other subscriber is, in
// process or over TCP; forged stamps reach no one; and before StampFor
// a message that is not a request is not stamped at all.
func TestStampFor(t *testing.T) {
	ctx := testCtx(t)
	e, _ := startWith(t, Config{UsersFile: usersFile(t, "alice", "alice-pw", "watcher", "watcher-pw"),
		ACLFile: aclFile(t, "user alice\npublish sensors/#\nuser watcher\nsubscribe sensors/#\n")})
	unstamped := paho.UserProperties{{Key: "k", Value: "v"}}
	exec := connectWith(t, ctx, e.URL(), inProcessDialer(e), "host-exec", "sensors/#")
	alice := dialRaw(t, e.Addr())
	if ack := alice.connectAs(t, "alice-1", "alice", "alice-pw"); ack.ReasonCode != 0 {
		t.Fatalf("alice: CONNACK 0x%02x", ack.ReasonCode)
	}
	alice.publishTelemetry(t, "sensors/d1/temp")
	if got := exec.next(t, ctx).Properties.User; !slices.Equal(got, unstamped) {
		t.Fatalf("before StampFor, a message arrived with %v, want %v", got, unstamped)
	}

	e.StampFor("host-triggers")
	triggers := connectWith(t, ctx, e.URL(), inProcessDialer(e), "host-triggers", "sensors/#")
	watcher := dialRaw(t, e.Addr())
	if ack := watcher.connectAs(t, "watcher-1", "watcher", "watcher-pw"); ack.ReasonCode != 0 {
		t.Fatalf("watcher: CONNACK 0x%02x", ack.ReasonCode)
	}
	if code := watcher.subscribeCode(t, "sensors/#"); code >= 0x80 {
		t.Fatalf("watcher: SUBACK 0x%02x", code)
	}
	alice.publishTelemetry(t, "sensors/d1/temp")
	want := paho.UserProperties{{Key: "k", Value: "v"}, {Key: ClientIDProperty, Value: "alice-1"}, {Key: UserProperty, Value: "alice"}}
	if got := triggers.next(t, ctx).Properties.User; !slices.Equal(got, want) {
		t.Errorf("the trigger session got %v, want %v", got, want)
	}
	if got := exec.next(t, ctx).Properties.User; !slices.Equal(got, unstamped) {
		t.Errorf("another client in process got %v, want %v", got, unstamped)
	}
	pk, err := watcher.read(t)
	if err != nil {
		t.Fatal(err)
	}
	var got paho.UserProperties
	for _, u := range pk.Properties.User {
		got = append(got, paho.UserProperty{Key: u.Key, Value: u.Val})
	}
	if pk.FixedHeader.Type != packets.Publish || !slices.Equal(got, unstamped) {
		t.Errorf("a subscriber over TCP got %v %v, want %v", pk.FixedHeader.Type, got, unstamped)
	}
	// A client over TCP cannot take the name.
	thief := dialRaw(t, e.Addr())
	if ack := thief.connectAs(t, "host-triggers", "alice", "alice-pw"); ack.ReasonCode != packets.ErrClientIdentifierNotValid.Code {
		t.Errorf("a TCP client with the trigger session's id: CONNACK 0x%02x, want 0x85", ack.ReasonCode)
	}
}
