package broker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eclipse/paho.golang/paho"
	"github.com/mochi-mqtt/server/v2/packets"
)

func aclFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "acl")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// subscribeCode subscribes to filter and returns the SUBACK's reason code.
func (c *rawClient) subscribeCode(t *testing.T, filter string) byte {
	t.Helper()
	c.write(t, packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1},
		PacketID:    1,
		Filters:     packets.Subscriptions{{Filter: filter, Qos: 1}},
	})
	ack, err := c.read(t)
	if err != nil || ack.FixedHeader.Type != packets.Suback || len(ack.ReasonCodes) != 1 {
		t.Fatalf("subscribe %s: %+v, %v", filter, ack, err)
	}
	return ack.ReasonCodes[0]
}

// publishCode publishes at QoS 1 to topic and returns the PUBACK's reason
// code.
func (c *rawClient) publishCode(t *testing.T, topic string) byte {
	t.Helper()
	c.write(t, packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1},
		PacketID:    7, TopicName: topic, Payload: []byte("hi"),
	})
	ack, err := c.read(t)
	if err != nil || ack.FixedHeader.Type != packets.Puback {
		t.Fatalf("publish %s: %+v, %v", topic, ack, err)
	}
	return ack.ReasonCode
}

const notAuthorized = 0x87

// With an ACL file, a user publishes to the command topics its `call`
// lines grant and nothing else (PUBACK 0x87), subscribes under its own
// response prefix only (# , a + over the clients' prefixes, another
// client's prefix and a shared # get SUBACK 0x87), and the admin topics
// are the `admin` user's; a refused subscription delivers nothing; each
// refusal is logged with the client id, user and topic; the host's own
// clients are not checked.
func TestACL(t *testing.T) {
	users := usersFile(t, "alice", "alice-pw", "root", "root-pw", "nobody", "nobody-pw")
	acl := aclFile(t, "# test\nuser alice\ncall rpc/h/echo\n\nuser root\ncall rpc/#\nadmin\nevents\n")
	e, logs := startWith(t, Config{UsersFile: users, ACLFile: acl})

	alice := dialRaw(t, e.Addr())
	if ack := alice.connectAs(t, "alice-1", "alice", "alice-pw"); ack.ReasonCode != 0 {
		t.Fatalf("alice: CONNACK 0x%02x", ack.ReasonCode)
	}
	if code := alice.subscribeCode(t, "#"); code != notAuthorized {
		t.Errorf("alice subscribing to #: SUBACK 0x%02x, want 0x87", code)
	}
	if !logs.Contains("client=alice-1") || !logs.Contains("user=alice") || !logs.Contains("topic=#") {
		t.Errorf("the refusal is not logged with the client id, user and topic:\n%s", logs)
	}
	for _, f := range []string{"clients/+/rpc/response", "clients/bob-1/rpc/response", "clients/#", "+/alice-1/rpc/response",
		"$share/g/#", "rpc/h/echo", "cmdhost/h/admin/list", "cmdhost/h/events", "cmdhost/h/replicas"} {
		if code := alice.subscribeCode(t, f); code != notAuthorized {
			t.Errorf("alice subscribing to %s: SUBACK 0x%02x, want 0x87", f, code)
		}
	}
	if code := alice.subscribeCode(t, "clients/alice-1/rpc/response"); code != 1 {
		t.Errorf("alice subscribing to her own responses: SUBACK 0x%02x, want 1", code)
	}
	if code := alice.publishCode(t, "rpc/h/echo"); code != 0 {
		t.Errorf("alice calling echo: PUBACK 0x%02x, want 0", code)
	}
	for _, topic := range []string{"rpc/h/spin", "rpc/other/echo", "cmdhost/h/admin/list", "cmdhost/h/replica/h/admin/list",
		"clients/bob-1/rpc/response"} {
		if code := alice.publishCode(t, topic); code != notAuthorized {
			t.Errorf("alice publishing to %s: PUBACK 0x%02x, want 0x87", topic, code)
		}
	}

	// Nothing reaches alice but her own responses: the host's client (in
	// process, unchecked) publishes a request, then a mark on her topic,
	// which must be the first message she gets.
	ctx := testCtx(t)
	host := connectWith(t, ctx, e.URL(), inProcessDialer(e), "h", "#")
	for _, topic := range []string{"rpc/h/echo", "clients/bob-1/rpc/response", "clients/alice-1/rpc/response"} {
		if _, err := host.cm.Publish(ctx, &paho.Publish{QoS: 1, Topic: topic, Payload: []byte(topic)}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := alice.read(t); err != nil || got.TopicName != "clients/alice-1/rpc/response" {
		t.Errorf("alice's first message: %q on %s, %v; want the mark on her own topic", got.Payload, got.TopicName, err)
	}

	root := dialRaw(t, e.Addr())
	if ack := root.connectAs(t, "root-1", "root", "root-pw"); ack.ReasonCode != 0 {
		t.Fatalf("root: CONNACK 0x%02x", ack.ReasonCode)
	}
	for _, topic := range []string{"rpc/h/spin", "cmdhost/h/admin/list", "cmdhost/h/replica/h/admin/stats"} {
		if code := root.publishCode(t, topic); code != 0 {
			t.Errorf("root publishing to %s: PUBACK 0x%02x, want 0", topic, code)
		}
	}
	for _, f := range []string{"cmdhost/h/replicas", "cmdhost/+/events"} {
		if code := root.subscribeCode(t, f); code > 2 {
			t.Errorf("root subscribing to %s: SUBACK 0x%02x, want granted", f, code)
		}
	}
	for _, f := range []string{"#", "cmdhost/#", "clients/alice-1/rpc/response"} {
		if code := root.subscribeCode(t, f); code != notAuthorized {
			t.Errorf("root subscribing to %s: SUBACK 0x%02x, want 0x87", f, code)
		}
	}

	// A user the file does not name: its own responses, nothing else.
	nobody := dialRaw(t, e.Addr())
	if ack := nobody.connectAs(t, "nobody-1", "nobody", "nobody-pw"); ack.ReasonCode != 0 {
		t.Fatalf("nobody: CONNACK 0x%02x", ack.ReasonCode)
	}
	if code := nobody.publishCode(t, "rpc/h/echo"); code != notAuthorized {
		t.Errorf("a user without grants calling echo: PUBACK 0x%02x, want 0x87", code)
	}
	if code := nobody.subscribeCode(t, "clients/nobody-1/rpc/response"); code != 1 {
		t.Errorf("a user without grants subscribing to its own responses: SUBACK 0x%02x, want 1", code)
	}
}

// A client no one authenticated (a listener without users) gets no
// user's grants by claiming its name.
func TestACLAnonymousClaimsNoUser(t *testing.T) {
	e, _ := startWith(t, Config{ACLFile: aclFile(t, "user alice\ncall rpc/#\n")})
	c := dialRaw(t, e.Addr())
	if ack := c.connectAs(t, "x-1", "alice", "any"); ack.ReasonCode != 0 {
		t.Fatalf("CONNACK 0x%02x", ack.ReasonCode)
	}
	if code := c.publishCode(t, "rpc/h/echo"); code != notAuthorized {
		t.Errorf("an anonymous client claiming to be alice: PUBACK 0x%02x, want 0x87", code)
	}
}

func TestReadACLErrors(t *testing.T) {
	for text, want := range map[string]string{
		"call rpc/h/echo\n":          `"call" before any`,
		"user a\ncall echo\n":        "not a command topic pattern",
		"user a\ncall rpc/#/x\n":     "not a command topic pattern",
		"user a\ncall rpc/h/e+\n":    "not a command topic pattern",
		"user a\nadmin all\n":        "takes nothing after it",
		"user a\npublish rpc/h/x\n":  "not the host's",
		"user a\npublish #\n":        "not the host's",
		"user a\nsubscribe $SYS/#\n": "not the host's",
		"user a\nsubscribe a b\n":    "takes one topic filter",
		"user a\nwrite a/b\n":        `unknown line "write"`,
		"user a b\n":                 "takes one user name",
		"user a\n\n\ncall\n":         "line 4",
	} {
		_, err := ReadACL(aclFile(t, text))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "user NAME, call") {
			t.Errorf("%q: error %v, want it to say %q and show the lines", text, err, want)
		}
	}
	if _, err := ReadACL(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing ACL file: no error")
	}
}

func TestFilterWithin(t *testing.T) {
	for _, c := range []struct {
		f, g string
		want bool
	}{
		{"rpc/h/echo", "rpc/h/echo", true},
		{"rpc/h/echo", "rpc/+/echo", true},
		{"rpc/h/echo", "rpc/#", true},
		{"rpc", "rpc/#", true},
		{"rpc/h/spin", "rpc/h/echo", false},
		{"rpc/+/echo", "rpc/h/echo", false},
		{"rpc/#", "rpc/+/echo", false},
		{"#", "rpc/#", false},
		{"rpc/h/echo/x", "rpc/h/echo", false},
		{"rpc/h", "rpc/h/echo", false},
		{"cmdhost/h/replica/r/admin/list", "cmdhost/+/replica/+/admin/#", true},
		{"$SYS/x", "#", false},
	} {
		if got := filterWithin(c.f, c.g); got != c.want {
			t.Errorf("filterWithin(%q, %q) = %v, want %v", c.f, c.g, got, c.want)
		}
	}
}

// publishWithResponseTopic publishes at QoS 1 to topic with response
// topic rt and returns the PUBACK's reason code.
func (c *rawClient) publishWithResponseTopic(t *testing.T, topic, rt string) byte {
	t.Helper()
	c.write(t, packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1},
		PacketID:    9, TopicName: topic, Payload: []byte("hi"),
		Properties: packets.Properties{ResponseTopic: rt},
		Mods:       packets.Mods{AllowResponseInfo: true}, // else mochi's encoder leaves the response topic out
	})
	ack, err := c.read(t)
	if err != nil || ack.FixedHeader.Type != packets.Puback {
		t.Fatalf("publish %s: %+v, %v", topic, ack, err)
	}
	return ack.ReasonCode
}

// With an ACL, a request's response topic is the client's own: the host
// publishes its reply there, so one elsewhere (another client's replies,
// the events topic) would have the host publish what the client chose
// where the client may not. It is refused (PUBACK 0x87) and logged; a
// client id another user holds is refused at CONNECT (0x85).
func TestACLResponseTopicAndClientID(t *testing.T) {
	users := usersFile(t, "alice", "alice-pw", "bob", "bob-pw")
	acl := aclFile(t, "user alice\ncall rpc/h/echo\nuser bob\ncall rpc/h/echo\n")
	e, logs := startWith(t, Config{UsersFile: users, ACLFile: acl})

	alice := dialRaw(t, e.Addr())
	if ack := alice.connectAs(t, "alice-1", "alice", "alice-pw"); ack.ReasonCode != 0 {
		t.Fatalf("alice: CONNACK 0x%02x", ack.ReasonCode)
	}
	if code := alice.publishWithResponseTopic(t, "rpc/h/echo", "clients/alice-1/rpc/response"); code != 0 {
		t.Errorf("alice's request answered on her own prefix: PUBACK 0x%02x, want 0", code)
	}
	for _, rt := range []string{"clients/bob-1/rpc/response", "cmdhost/h/events", "elsewhere"} {
		if code := alice.publishWithResponseTopic(t, "rpc/h/echo", rt); code != notAuthorized {
			t.Errorf("alice's request answered on %s: PUBACK 0x%02x, want 0x87", rt, code)
		}
	}
	if !logs.Contains("response_topic=clients/bob-1/rpc/response") {
		t.Errorf("the refusal is not logged with its response topic:\n%s", logs)
	}

	bob := dialRaw(t, e.Addr())
	if ack := bob.connectAs(t, "alice-1", "bob", "bob-pw"); ack.ReasonCode != 0x85 {
		t.Errorf("bob taking alice's client id: CONNACK 0x%02x, want 0x85", ack.ReasonCode)
	}
}
