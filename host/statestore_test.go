package host_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/statestore"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
)

// goStateClient is a state store client shaped like the Azure IoT
// Operations Go SDK's (go/services/statestore): its response topic is
// clients/<HEXUPPER(clientId)>/<request topic>/response, the only topic
// it subscribes to (it never subscribes to its notify topics: the
// notifications must be pushed into its session); every request carries
// __ts, __srcId, __protVer, $partition and $high_priority, a 16-byte
// correlation and a 10 s expiry; a fenced write carries __ft.
type goStateClient struct {
	t     *testing.T
	id    string
	cm    *autopaho.ConnectionManager
	resp  string // its response topic
	mu    sync.Mutex
	wait  map[string]chan *paho.Publish // by correlation
	notes chan *paho.Publish            // what arrives on its notify topics
}

// stateReply is a reply as the client reads it.
type stateReply struct {
	status  string
	payload string
	ts      string // "": none
}

func dialGoState(t *testing.T, broker *url.URL, id, user string, password []byte) *goStateClient {
	t.Helper()
	c := &goStateClient{t: t, id: id, wait: map[string]chan *paho.Publish{}, notes: make(chan *paho.Publish, 64),
		resp: "clients/" + strings.ToUpper(hex.EncodeToString([]byte(id))) + "/" + statestore.Topic + "/response"}
	up := make(chan error, 1)
	cm, err := autopaho.NewConnection(context.Background(), autopaho.ClientConfig{
		ServerUrls: []*url.URL{broker}, KeepAlive: 30, CleanStartOnInitialConnection: true,
		ConnectUsername: user, ConnectPassword: password,
		OnConnectionUp: func(cm *autopaho.ConnectionManager, _ *paho.Connack) {
			go func() {
				_, err := cm.Subscribe(context.Background(), &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: c.resp, QoS: 1, NoLocal: true}}})
				up <- err
			}()
		},
		ConnectPacketBuilder: func(p *paho.Connect, _ *url.URL) (*paho.Connect, error) {
			if p.Properties == nil {
				p.Properties = &paho.ConnectProperties{}
			}
			p.Properties.RequestProblemInfo = true
			return p, nil
		},
		ClientConfig: paho.ClientConfig{ClientID: id, PacketTimeout: time.Minute,
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
				p := pr.Packet
				if p.Topic != c.resp {
					c.notes <- p
					return true, nil
				}
				c.mu.Lock()
				ch := c.wait[string(p.Properties.CorrelationData)]
				c.mu.Unlock()
				if ch != nil {
					ch <- p
				}
				return true, nil
			}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.cm = cm
	t.Cleanup(func() { c.close() })
	select {
	case err := <-up:
		if err != nil {
			t.Fatalf("%s subscribing to %s: %v", id, c.resp, err)
		}
	case <-time.After(testkit.Patience()):
		t.Fatalf("%s: not connected", id)
	}
	return c
}

func (c *goStateClient) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.cm.Disconnect(ctx)
}

// now is an HLC of the client's clock.
func (c *goStateClient) now() string {
	return hlc.Timestamp{Millis: time.Now().UnixMilli(), NodeID: c.id}.String()
}

// newCorrelation is a fresh 16-byte correlation.
func newCorrelation() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return b
}

// send publishes payload with correlation corr and the extra user
// properties, and returns the reply.
func (c *goStateClient) send(corr, payload []byte, extra ...paho.UserProperty) stateReply {
	c.t.Helper()
	ch := make(chan *paho.Publish, 2)
	c.mu.Lock()
	c.wait[string(corr)] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.wait, string(corr))
		c.mu.Unlock()
	}()
	expiry := uint32(10)
	user := paho.UserProperties{{Key: "__srcId", Value: c.id}, {Key: "__protVer", Value: "1.0"},
		{Key: "$partition", Value: c.id}, {Key: "$high_priority", Value: ""}, {Key: "__ts", Value: c.now()}}
	for _, e := range extra { // one given replaces the default
		if i := indexOf(user, e.Key); i >= 0 {
			user = append(user[:i:i], user[i+1:]...)
		}
		if e.Value != "\x00" { // a value of NUL: leave it out
			user = append(user, e)
		}
	}
	format := byte(0)
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience())
	defer cancel()
	if _, err := c.cm.Publish(ctx, &paho.Publish{QoS: 1, Topic: statestore.Topic, Payload: payload, Properties: &paho.PublishProperties{
		ResponseTopic: c.resp, CorrelationData: corr, MessageExpiry: &expiry, ContentType: "application/octet-stream",
		PayloadFormat: &format, User: user}}); err != nil {
		c.t.Fatalf("%s: publishing %q: %v", c.id, payload, err)
	}
	select {
	case p := <-ch:
		ts, _ := stateProp(p.Properties.User, "__ts")
		stat, _ := stateProp(p.Properties.User, "__stat")
		return stateReply{status: stat, payload: string(p.Payload), ts: ts}
	case <-ctx.Done():
		c.t.Fatalf("%s: no reply to %q", c.id, payload)
		return stateReply{}
	}
}

func indexOf(u paho.UserProperties, key string) int {
	for i, p := range u {
		if p.Key == key {
			return i
		}
	}
	return -1
}

func stateProp(u paho.UserProperties, key string) (string, bool) {
	if i := indexOf(u, key); i >= 0 {
		return u[i].Value, true
	}
	return "", false
}

// do sends args as a RESP3 array, with the extra properties.
func (c *goStateClient) do(extra []paho.UserProperty, args ...string) stateReply {
	c.t.Helper()
	return c.send(newCorrelation(), respArray(args...), extra...)
}

func respArray(args ...string) []byte {
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	return []byte(b.String())
}

// want checks a reply: status 200, its payload, and its __ts present or
// not.
func (c *goStateClient) want(r stateReply, payload string, hasTS bool) stateReply {
	c.t.Helper()
	if r.status != "200" || r.payload != payload || (r.ts != "") != hasTS {
		c.t.Fatalf("%s: reply %+v; want 200 %q, __ts present %v", c.id, r, payload, hasTS)
	}
	if hasTS {
		if _, err := hlc.Parse(r.ts); err != nil {
			c.t.Fatalf("%s: __ts %q: %v", c.id, r.ts, err)
		}
	}
	return r
}

// note is the next notification on the client's notify topics.
func (c *goStateClient) note() (topic, payload, ts string) {
	c.t.Helper()
	select {
	case p := <-c.notes:
		ts, _ := stateProp(p.Properties.User, "__ts")
		return p.Topic, string(p.Payload), ts
	case <-time.After(testkit.Patience()):
		c.t.Fatalf("%s: no notification", c.id)
		return "", "", ""
	}
}

func ft(token string) []paho.UserProperty { return []paho.UserProperty{{Key: "__ft", Value: token}} }

const (
	notifySetPrefix = "*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n"
	notifyDelete    = "*2\r\n$6\r\nNOTIFY\r\n$6\r\nDELETE\r\n"
)

// serveState serves the kit-go plugin with a state store on the
// embedded broker, adjusted by adjust.
func serveState(t *testing.T, adjust func(*host.Config)) *host.Server {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	dir := t.TempDir()
	testkit.InstallFile(t, "../testdata/plugins-kit/kit-go.wasm", dir, "kit-go.wasm")
	cfg := host.Config{PluginsDir: dir, ExecutorID: "ss", CacheDir: testkit.CacheDir(), Embedded: host.EmbeddedConfig{Listen: "127.0.0.1:0"}, Store: host.StoreConfig{StateDir: t.TempDir()}}
	if adjust != nil {
		adjust(&cfg)
	}
	return hosttest.Serve(t, cfg)
}

// The state store protocol end to end, on the host's embedded broker,
// with clients shaped like the Go SDK's: SET, GET, DEL, VDEL with NX, NEX
// and PX; fencing tokens; a duplicate request answered its first reply
// and not applied again; malformed RESP3 answered `-ERR syntax error`
// with the host serving on; KEYNOTIFY delivering SET and DELETE (an
// expiry's too) to a client that holds no subscription to its notify
// topics, until STOP, and registrations ending with their client.
func TestStateStoreProtocol(t *testing.T) {
	srv := serveState(t, nil)
	a := dialGoState(t, srv.Broker(), "sdk-a", "", nil)
	b := dialGoState(t, srv.Broker(), "sdk-b", "", nil)

	a.want(a.do(nil, "KEYNOTIFY", "watched"), "+OK\r\n", false)
	before := b.now()
	set := b.want(b.do([]paho.UserProperty{{Key: "__ts", Value: before}}, "SET", "watched", "v1"), "+OK\r\n", true)
	if v, _ := hlc.Parse(set.ts); !(v.Compare(mustParse(t, before)) > 0) {
		t.Errorf("the version %s is not later than the request's __ts %s", set.ts, before)
	}
	topic, payload, ts := a.note()
	if topic != statestore.NotifyTopic("sdk-a", []byte("watched")) || payload != notifySetPrefix+"$2\r\nv1\r\n" || ts != set.ts {
		t.Fatalf("notification %s %q __ts %s; want SET v1 at %s", topic, payload, ts, set.ts)
	}
	if r := b.want(b.do(nil, "GET", "watched"), "$2\r\nv1\r\n", true); r.ts != set.ts {
		t.Errorf("GET's version %s, SET's %s", r.ts, set.ts)
	}
	if r := b.want(b.do(nil, "SET", "watched", "v2", "NX"), ":-1\r\n", true); r.ts != set.ts {
		t.Errorf("NX refused: version %s, want the stored %s", r.ts, set.ts)
	}
	b.want(b.do(nil, "SET", "watched", "v2", "NEX"), ":-1\r\n", true)
	renewed := b.want(b.do(nil, "SET", "watched", "v1", "NEX", "PX", "60000"), "+OK\r\n", true)
	if renewed.ts <= set.ts {
		t.Errorf("a renewal's version %s is not after %s", renewed.ts, set.ts)
	}
	if _, payload, ts := a.note(); payload != notifySetPrefix+"$2\r\nv1\r\n" || ts != renewed.ts {
		t.Fatalf("renewal: %q at %s", payload, ts)
	}
	b.want(b.do(nil, "VDEL", "watched", "other"), ":-1\r\n", true)
	b.want(b.do(nil, "VDEL", "watched", "v1"), ":1\r\n", true)
	if _, payload, _ := a.note(); payload != notifyDelete {
		t.Fatalf("VDEL: %q", payload)
	}
	b.want(b.do(nil, "DEL", "watched"), ":0\r\n", false)
	b.want(b.do(nil, "GET", "watched"), "$-1\r\n", false)

	// An expiry is a DELETE too (the store's sweep, within a second).
	b.want(b.do(nil, "SET", "watched", "brief", "PX", "100"), "+OK\r\n", true)
	if _, payload, _ := a.note(); payload != notifySetPrefix+"$5\r\nbrief\r\n" {
		t.Fatalf("SET PX: %q", payload)
	}
	if _, payload, _ := a.note(); payload != notifyDelete {
		t.Fatalf("expiry: %q", payload)
	}
	b.want(b.do(nil, "GET", "watched"), "$-1\r\n", false)

	// STOP: the change after it is not told; a registration again is.
	a.want(a.do(nil, "KEYNOTIFY", "watched", "STOP"), "+OK\r\n", false)
	a.want(a.do(nil, "KEYNOTIFY", "watched", "STOP"), ":0\r\n", false)
	b.want(b.do(nil, "SET", "watched", "unseen"), "+OK\r\n", true)
	a.want(a.do(nil, "KEYNOTIFY", "watched"), "+OK\r\n", false)
	b.want(b.do(nil, "DEL", "watched"), ":1\r\n", true)
	if _, payload, _ := a.note(); payload != notifyDelete {
		t.Fatalf("after STOP and KEYNOTIFY again, the first notification is %q, want the DEL's", payload)
	}

	// Fencing: the lock's version is the token.
	lock := b.want(b.do(nil, "SET", "lock", "b", "NX", "PX", "60000"), "+OK\r\n", true)
	first := b.want(b.do(ft(lock.ts), "SET", "fenced", "1"), "+OK\r\n", true)
	b.want(b.do(nil, "SET", "fenced", "2"), "-ERR a fencing token is required for this request\r\n", false)
	b.want(b.do(ft(hlc.Timestamp{Millis: 1, NodeID: "old"}.String()), "SET", "fenced", "2"),
		"-ERR the request fencing token is a lower version than the fencing token protecting the resource\r\n", false)
	b.want(b.do(ft(first.ts), "SET", "fenced", "2"), "+OK\r\n", true)
	b.want(b.do(ft(hlc.Timestamp{Millis: time.Now().Add(time.Hour).UnixMilli(), NodeID: "x"}.String()), "DEL", "fenced"),
		"-ERR the request fencing token timestamp is too far in the future; ensure that the client and broker system clocks are synchronized\r\n", false)
	b.want(b.do(ft(first.ts), "DEL", "fenced"), ":1\r\n", true)

	// A duplicate (same correlation, same response topic) is answered the
	// first reply and not applied again: an NX applied twice would say :-1.
	corr := newCorrelation()
	once := b.want(b.send(corr, respArray("SET", "once", "x", "NX")), "+OK\r\n", true)
	if again := b.send(corr, respArray("SET", "once", "x", "NX")); again != once {
		t.Fatalf("the duplicate got %+v, the first %+v", again, once)
	}
	if r := b.want(b.do(nil, "GET", "once"), "$1\r\nx\r\n", true); r.ts != once.ts {
		t.Fatalf("the key's version %s, the first SET's %s: applied twice", r.ts, once.ts)
	}

	// Malformed RESP3 and the protocol's errors, with status 200; the host
	// serves on.
	for payload, want := range map[string]string{
		"not resp": "-ERR syntax error\r\n", "*2\r\n$3\r\nGET\r\n$9\r\nshort\r\n": "-ERR syntax error\r\n",
		"*1\r\n$4\r\nPING\r\n": "-ERR unknown command\r\n", "*2\r\n$3\r\nGET\r\n$0\r\n\r\n": "-ERR the key length is zero\r\n",
	} {
		b.want(b.send(newCorrelation(), []byte(payload)), want, false)
	}
	b.want(b.do([]paho.UserProperty{{Key: "__ts", Value: "\x00"}}, "SET", "k", "v"), "-ERR missing timestamp\r\n", false)
	b.want(b.do([]paho.UserProperty{{Key: "__ts", Value: "bad"}}, "GET", "k"), "-ERR malformed timestamp\r\n", false)
	b.want(b.do(nil, "GET", "once"), "$1\r\nx\r\n", true)

	// Registrations end with their client: reconnected, it has none.
	a.want(a.do(nil, "KEYNOTIFY", "k2"), "+OK\r\n", false)
	a.close()
	a2 := dialGoState(t, srv.Broker(), "sdk-a", "", nil)
	testkit.WaitFor(t, "the registrations of sdk-a to go", func() bool {
		return a2.do(nil, "KEYNOTIFY", "k2", "STOP").payload == ":0\r\n"
	})
}

func mustParse(t *testing.T, s string) hlc.Timestamp {
	t.Helper()
	ts, err := hlc.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// A key set through the protocol is read by a plugin (kit-state in its
// own namespace, plugin/kit-go/…, with the same version), and a key the
// plugin sets is read through the protocol; a protocol client registered
// for a plugin's key is told of the plugin's write.
func TestStateStoreProtocolSharesKeysWithPlugins(t *testing.T) {
	srv := serveState(t, nil)
	c := dialGoState(t, srv.Broker(), "sdk-c", "", nil)
	inv, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: newSession(srv)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inv.Close() })
	kit := func(payload string) string {
		t.Helper()
		r, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/ss/kit-state", Payload: []byte(payload), ContentType: "text/plain", Timeout: 10 * time.Second})
		if err != nil || r.Status != 200 {
			t.Fatalf("kit-state %q: %+v, %v", payload, r, err)
		}
		return string(r.Payload)
	}

	set := c.want(c.do(nil, "SET", "plugin/kit-go/from-sdk", "hello"), "+OK\r\n", true)
	v := mustParse(t, set.ts)
	if got, want := kit("get from-sdk"), "hello@"+strconv.FormatUint(state.VersionOf(v.Millis, uint16(v.Counter)), 10); got != want {
		t.Fatalf("the plugin reads %q, want %q", got, want)
	}
	c.want(c.do(nil, "KEYNOTIFY", "plugin/kit-go/from-plugin"), "+OK\r\n", false)
	if got := kit("set from-plugin world"); got != "ok" {
		t.Fatalf("kit-state set: %q", got)
	}
	r := c.want(c.do(nil, "GET", "plugin/kit-go/from-plugin"), "$5\r\nworld\r\n", true)
	if _, payload, ts := c.note(); payload != notifySetPrefix+"$5\r\nworld\r\n" || ts != r.ts {
		t.Fatalf("the plugin's write told as %q at %s, want SET world at %s", payload, ts, r.ts)
	}
	c.want(c.do(nil, "GET", "plugin/kit-go/nothing"), "$-1\r\n", false)
}

// newSession is a session config of a plain client of srv's broker.
func newSession(srv *host.Server) session.Config { return session.Config{Broker: srv.Broker()} }

// The host's names of the protocol agree with the broker's.
func TestStateStoreTopicAgrees(t *testing.T) {
	if broker.StateStoreTopic != statestore.Topic {
		t.Fatalf("broker.StateStoreTopic %q, statestore.Topic %q", broker.StateStoreTopic, statestore.Topic)
	}
}

// On a secured broker (users, ACL file), `state` lines grant key
// prefixes: a user reads and writes what they grant and gets `-ERR not
// authorized` for the rest (logged with who and the line that would
// allow it); a user the file names without `state` lines may do
// nothing. The Go SDK's response topic (clients/<HEX>/…) is the client's
// own on such a broker, and its notifications reach it through the ACL.
func TestStateStoreProtocolACL(t *testing.T) {
	users, _ := callerUsers(t, "alice", "bob")
	dir := t.TempDir()
	testkit.Install(t, dir, "acl", []byte("user alice\nstate write app/\nstate read shared/\nuser bob\ncall rpc/#\n"))
	logs := new(testkit.LogBuffer)
	srv := serveState(t, func(c *host.Config) {
		c.Embedded.UsersFile, c.Embedded.ACLFile = users, filepath.Join(dir, "acl")
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	alice := dialGoState(t, srv.Broker(), "alice-1", "alice", []byte("pw-alice"))
	bob := dialGoState(t, srv.Broker(), "bob-1", "bob", []byte("pw-bob"))
	const refused = "-ERR not authorized\r\n"

	alice.want(alice.do(nil, "SET", "app/x", "1"), "+OK\r\n", true)
	alice.want(alice.do(nil, "GET", "app/x"), "$1\r\n1\r\n", true)
	alice.want(alice.do(nil, "GET", "shared/devices/d1"), "$-1\r\n", false)
	alice.want(alice.do(nil, "SET", "shared/devices/d1", "on"), refused, false)
	alice.want(alice.do(nil, "GET", "plugin/kit-go/k"), refused, false)
	alice.want(alice.do(nil, "KEYNOTIFY", "other"), refused, false)
	if !logs.HasLine("op refused: not authorized", "user=alice", "client=alice-1", `grant="state write shared/devices/"`) {
		t.Errorf("the refusal is not logged with its user and grant:\n%s", logs)
	}
	bob.want(bob.do(nil, "GET", "app/x"), refused, false) // logged no more than once a second
	bob.want(bob.do(nil, "SET", "app/x", "2"), refused, false)

	alice.want(alice.do(nil, "KEYNOTIFY", "app/x"), "+OK\r\n", false)
	set := alice.want(alice.do(nil, "SET", "app/x", "3"), "+OK\r\n", true)
	if topic, payload, ts := alice.note(); topic != statestore.NotifyTopic("alice-1", []byte("app/x")) || payload != notifySetPrefix+"$1\r\n3\r\n" || ts != set.ts {
		t.Fatalf("alice's notification: %s %q %s", topic, payload, ts)
	}
}
