package broker

import (
	"errors"
	"strings"
	"testing"

	"github.com/eclipse/paho.golang/paho"
	"github.com/mochi-mqtt/server/v2/packets"
)

// notifyFilterOf is the state store's notify filter of clientID.
func notifyFilterOf(clientID string) string {
	return stateNotifyRoot + hexUpper(clientID) + "/command/notify/+"
}

// nextPublish reads c until a PUBLISH and returns its topic.
func (c *rawClient) nextPublish(t *testing.T) string {
	t.Helper()
	for {
		pk, err := c.read(t)
		if err != nil {
			t.Fatalf("%s: reading a PUBLISH: %v", c, err)
		}
		if pk.FixedHeader.Type == packets.Publish {
			return pk.TopicName
		}
	}
}

// On a secured broker (users, ACL file), every user the file names may
// publish to the state store's request topic (the store refuses ops
// itself); the Go SDK's response topic, clients/<HEX>/…/response with HEX
// the upper-case hex of the client id, is its client's own and no one
// else's, not even the client whose id is that HEX (whose clients/HEX/#
// does not receive it); each client may subscribe to its own notify
// topics and not another's, whatever its id.
func TestStateStoreTopics(t *testing.T) {
	users := usersFile(t, "alice", "alice-pw", "bob", "bob-pw", "nobody", "nobody-pw")
	e, _ := startWith(t, Config{UsersFile: users, ACLFile: aclFile(t, "user alice\nstate write app/\nuser bob\n")})
	alice := dialRaw(t, e.Addr())
	if ack := alice.connectAs(t, "alice-1", "alice", "alice-pw"); ack.ReasonCode != 0 {
		t.Fatalf("alice: CONNACK 0x%02x", ack.ReasonCode)
	}
	goTopic := "clients/616C6963652D31/" + StateStoreTopic + "/response"
	if hexResponseTopic("alice-1") != goTopic {
		t.Fatalf("hexResponseTopic: %s", hexResponseTopic("alice-1"))
	}
	for rt, want := range map[string]byte{
		goTopic:                              0,
		"clients/alice-1/" + StateStoreTopic: 0, // .NET's
		"clients/alice-1/services/" + StateStoreTopic + "/response":         0, // Rust's
		hexResponseTopic("bob-1"):                                           notAuthorized,
		"clients/616c6963652d31/" + StateStoreTopic + "/response":           notAuthorized, // lower case is another prefix
		notifyFilterOf("alice-1")[:len(notifyFilterOf("alice-1"))-1] + "4B": notAuthorized,
	} {
		if code := alice.publishWithResponseTopic(t, StateStoreTopic, rt); code != want {
			t.Errorf("alice's request answered on %s: PUBACK 0x%02x, want 0x%02x", rt, code, want)
		}
	}
	if code := alice.subscribeCode(t, goTopic); code != 1 {
		t.Errorf("alice subscribing to her Go response topic: SUBACK 0x%02x", code)
	}
	if code := alice.subscribeCode(t, notifyFilterOf("alice-1")); code != 1 {
		t.Errorf("alice subscribing to her notify topics: SUBACK 0x%02x", code)
	}
	if code := alice.subscribeCode(t, notifyFilterOf("bob-1")); code != notAuthorized {
		t.Errorf("alice subscribing to bob's notify topics: SUBACK 0x%02x", code)
	}

	// bob takes alice's hex as his client id.
	bob := dialRaw(t, e.Addr())
	if ack := bob.connectAs(t, "616C6963652D31", "bob", "bob-pw"); ack.ReasonCode != 0 {
		t.Fatalf("bob: CONNACK 0x%02x", ack.ReasonCode)
	}
	if code := bob.publishWithResponseTopic(t, StateStoreTopic, goTopic); code != notAuthorized {
		t.Errorf("bob's request answered on alice's Go response topic: PUBACK 0x%02x", code)
	}
	if code := bob.subscribeCode(t, goTopic); code != notAuthorized {
		t.Errorf("bob subscribing to alice's Go response topic: SUBACK 0x%02x", code)
	}
	if code := bob.subscribeCode(t, "clients/616C6963652D31/#"); code != 1 {
		t.Fatalf("bob subscribing to his own prefix: SUBACK 0x%02x", code)
	}
	// A client named statestore has no claim on the notify topics.
	snoop := dialRaw(t, e.Addr())
	if ack := snoop.connectAs(t, "statestore", "bob", "bob-pw"); ack.ReasonCode != 0 {
		t.Fatalf("snoop: CONNACK 0x%02x", ack.ReasonCode)
	}
	if code := snoop.subscribeCode(t, notifyFilterOf("alice-1")); code != notAuthorized {
		t.Errorf("client statestore subscribing to alice's notify topics: SUBACK 0x%02x", code)
	}
	if code := snoop.subscribeCode(t, "clients/statestore/#"); code != 1 {
		t.Fatalf("client statestore subscribing to its prefix: SUBACK 0x%02x", code)
	}
	if code := snoop.publishWithResponseTopic(t, StateStoreTopic, notifyFilterOf("alice-1")[:len(notifyFilterOf("alice-1"))-1]+"4B"); code != notAuthorized {
		t.Errorf("client statestore's request answered on alice's notify topic: PUBACK 0x%02x", code)
	}

	// The host publishes alice's reply and notification, then one to bob's
	// and to statestore's own prefix: only those reach them.
	host := connectWith(t, testCtx(t), e.URL(), inProcessDialer(e), "host")
	for _, topic := range []string{goTopic, notifyFilterOf("alice-1")[:len(notifyFilterOf("alice-1"))-1] + "4B", "clients/616C6963652D31/mine", "clients/statestore/mine"} {
		if _, err := host.cm.Publish(testCtx(t), &paho.Publish{QoS: 1, Topic: topic, Payload: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if got := alice.nextPublish(t); got != goTopic {
		t.Errorf("alice got %s first, want her reply", got)
	}
	if got := alice.nextPublish(t); !strings.HasSuffix(got, "/command/notify/4B") {
		t.Errorf("alice got %s second, want her notification", got)
	}
	if got := bob.nextPublish(t); got != "clients/616C6963652D31/mine" {
		t.Errorf("bob got %s: alice's reply reached him", got)
	}
	if got := snoop.nextPublish(t); got != "clients/statestore/mine" {
		t.Errorf("client statestore got %s: alice's notification reached it", got)
	}

	// A user the file does not name may not even ask.
	nobody := dialRaw(t, e.Addr())
	if ack := nobody.connectAs(t, "nobody-1", "nobody", "nobody-pw"); ack.ReasonCode != 0 {
		t.Fatalf("nobody: CONNACK 0x%02x", ack.ReasonCode)
	}
	if code := nobody.publishWithResponseTopic(t, StateStoreTopic, hexResponseTopic("nobody-1")); code != notAuthorized {
		t.Errorf("a user the ACL does not name publishing a state store request: PUBACK 0x%02x", code)
	}
}

// `state` lines grant key prefixes, read or write (writing reads too), *
// every key; a user the file does not name, an authenticated user under
// the default ACL, get nothing; an anonymous broker without an ACL lets
// everyone; bad lines are refused with the line's number.
func TestStateAllowed(t *testing.T) {
	users := usersFile(t, "alice", "alice-pw", "root", "root-pw", "bob", "bob-pw")
	e, _ := startWith(t, Config{UsersFile: users, ACLFile: aclFile(t,
		"user alice\nstate read shared/devices/\nstate write plugin/kit-go/\nstate write app\nuser root\nstate write *\nuser bob\ncall rpc/#\n")})
	for _, c := range []struct {
		user, key string
		write     bool
		want      bool
	}{
		{"alice", "shared/devices/d1", false, true},
		{"alice", "shared/devices/d1", true, false},
		{"alice", "plugin/kit-go/counter", false, true},
		{"alice", "plugin/kit-go/counter", true, true},
		{"alice", "plugin/kit-rust/counter", false, false},
		{"alice", "app", true, true},
		{"alice", "apples", true, true}, // a prefix of bytes, not of levels
		{"alice", "SOMEKEY", false, false},
		{"root", "anything\x00at all", true, true},
		{"bob", "app", false, false},
		{"mallory", "app", false, false},
		{"", "app", false, false},
	} {
		if got := e.StateAllowed(c.user, []byte(c.key), c.write); got != c.want {
			t.Errorf("StateAllowed(%q, %q, write %v) = %v, want %v", c.user, c.key, c.write, got, c.want)
		}
	}
	def, _ := startWith(t, Config{UsersFile: users})
	if def.StateAllowed("alice", []byte("app"), false) {
		t.Error("the default ACL of an authenticating broker grants state")
	}
	if anon := startBroker(t); !anon.StateAllowed("", []byte("app"), true) {
		t.Error("an anonymous broker without an ACL refuses state")
	}
	for _, line := range []string{"state write", "state all x", "state read a b", "state"} {
		_, err := ReadACL(aclFile(t, "user a\n"+line+"\n"))
		if err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: %v", line, err)
		}
	}
}

// SubscribeClient makes what is published on a filter reach a client
// that never subscribed to it (through the ACL's delivery check of a
// secured broker, for its own notify topics); a client that is not
// connected is an error; OnClientGone tells each client that goes.
func TestSubscribeClientAndGone(t *testing.T) {
	users := usersFile(t, "alice", "alice-pw")
	e, _ := startWith(t, Config{UsersFile: users, ACLFile: aclFile(t, "user alice\n")})
	gone := make(chan string, 4)
	if err := e.OnClientGone(func(id string) { gone <- id }); err != nil {
		t.Fatal(err)
	}
	alice := dialRaw(t, e.Addr())
	if ack := alice.connectAs(t, "alice-1", "alice", "alice-pw"); ack.ReasonCode != 0 {
		t.Fatalf("alice: CONNACK 0x%02x", ack.ReasonCode)
	}
	if !e.Connected("alice-1") || e.Connected("nobody") {
		t.Fatal("Connected")
	}
	filter := notifyFilterOf("alice-1")
	if err := e.SubscribeClient("alice-1", filter); err != nil {
		t.Fatal(err)
	}
	if err := e.SubscribeClient("alice-1", filter); err != nil {
		t.Fatal(err) // again: no second subscription
	}
	if err := e.SubscribeClient("nobody", filter); !errors.Is(err, errNoClient) {
		t.Fatalf("a client not connected: %v", err)
	}
	host := connectWith(t, testCtx(t), e.URL(), inProcessDialer(e), "host")
	topic := filter[:len(filter)-1] + "4B"
	if _, err := host.cm.Publish(testCtx(t), &paho.Publish{QoS: 1, Topic: topic, Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if got := alice.nextPublish(t); got != topic {
		t.Fatalf("alice got %s", got)
	}
	_ = alice.conn.Close()
	select {
	case id := <-gone:
		if id != "alice-1" {
			t.Fatalf("gone: %s", id)
		}
	case <-testCtx(t).Done():
		t.Fatal("OnClientGone not called")
	}
}
