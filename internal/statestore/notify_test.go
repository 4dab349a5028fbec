package statestore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// published is a notification as Config.Publish got it.
type published struct{ topic, payload, ts string }

// notifyFixture is a fixture whose notifications arrive on got, whose
// reached clients are recorded, and in which gone clients are not
// connected.
type notifyFixture struct {
	*fixture
	got     chan published
	mu      sync.Mutex
	reached map[string]string // client id → filter
	gone    map[string]bool
}

func newNotifyFixture(t *testing.T, adjust func(*Config)) *notifyFixture {
	nf := &notifyFixture{got: make(chan published, 100), reached: map[string]string{}, gone: map[string]bool{}}
	nf.fixture = newFixture(t, func(c *Config) {
		c.Publish = func(_ context.Context, topic string, payload []byte, ts string) error {
			nf.got <- published{topic, string(payload), ts}
			return nil
		}
		c.Reach = func(id, filter string) error {
			nf.mu.Lock()
			defer nf.mu.Unlock()
			if nf.gone[id] {
				return errors.New("no such client")
			}
			nf.reached[id] = filter
			return nil
		}
		c.Connected = func(id string) bool {
			nf.mu.Lock()
			defer nf.mu.Unlock()
			return !nf.gone[id]
		}
		if adjust != nil {
			adjust(c)
		}
	})
	return nf
}

// as sends payload as client id.
func (nf *notifyFixture) as(id string, payload []byte) string {
	nf.t.Helper()
	r, err := nf.srv.Handle(context.Background(), &rpc.RawRequest{
		Request:  &abi.Request{Payload: payload, Caller: abi.Caller{ClientID: id}},
		Reserved: map[string]string{"__ts": ts(-time.Second)},
	})
	if err != nil {
		nf.t.Fatal(err)
	}
	return string(r.Payload)
}

// next is the next notification published.
func (nf *notifyFixture) next() published {
	nf.t.Helper()
	select {
	case p := <-nf.got:
		return p
	case <-time.After(time.Minute):
		nf.t.Fatal("no notification")
		return published{}
	}
}

// none checks that nothing more was published once the queue is idle.
func (nf *notifyFixture) none() {
	nf.t.Helper()
	// What is queued is counted until its publish returned.
	testkit.WaitFor(nf.t, "the queue to empty", func() bool { return nf.srv.queue.bytes.Load() == 0 })
	select {
	case p := <-nf.got:
		nf.t.Fatalf("unexpected notification %+v", p)
	default:
	}
}

// A registered key's SET, DEL, a matching VDEL and its expiry are
// published, in order, to the registering client's notify topic (hex of
// its id and of the key, upper case), with the change's version as
// __ts; what does not change the key is not, nor anything after STOP or
// once its client is gone. The client is reached on its notify filter.
func TestNotifications(t *testing.T) {
	nf := newNotifyFixture(t, nil)
	key := []byte("SOMEKEY")
	topic := "clients/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/636C69656E742D696431/command/notify/534F4D454B4559"
	if got := NotifyTopic("client-id1", key); got != topic {
		t.Fatalf("NotifyTopic: %q", got) // the protocol page's own example
	}
	if got := nf.as("client-id1", resp("KEYNOTIFY", "SOMEKEY")); got != "+OK\r\n" {
		t.Fatalf("KEYNOTIFY: %q", got)
	}
	if f := nf.reached["client-id1"]; f != NotifyFilter("client-id1") || f[len(f)-2:] != "/+" {
		t.Fatalf("reached on %q", f)
	}
	nf.as("other", resp("SET", "SOMEKEY", "abc"))
	if p := nf.next(); p != (published{topic, "*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n$3\r\nabc\r\n", v(0)}) {
		t.Fatalf("SET: %+v", p)
	}
	nf.as("other", resp("SET", "SOMEKEY", "x", "NX"))           // not applied
	nf.as("other", resp("VDEL", "SOMEKEY", "nope"))             // not applied
	nf.as("other", resp("SET", "unwatched", "x"))               // another key
	nf.as("client-id1", resp("SET", "SOMEKEY", "", "PX", "50")) // its own writes too
	if p := nf.next(); p != (published{topic, "*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n$0\r\n\r\n", v(2)}) {
		t.Fatalf("SET PX: %+v", p)
	}
	nf.clock.Add(50 * time.Millisecond)
	if err := nf.disk.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The sweep's version is of its time.
	at := func(n uint16) string {
		return versionString(state.VersionOf(t0.Add(50*time.Millisecond).UnixMilli(), n), DefaultNodeID)
	}
	if p := nf.next(); p != (published{topic, "*2\r\n$6\r\nNOTIFY\r\n$6\r\nDELETE\r\n", at(0)}) {
		t.Fatalf("expiry: %+v", p)
	}
	nf.as("other", resp("SET", "SOMEKEY", "1"))
	nf.as("other", resp("DEL", "SOMEKEY"))
	nf.as("other", resp("SET", "SOMEKEY", "2"))
	nf.as("other", resp("VDEL", "SOMEKEY", "2"))
	for i, want := range []string{"*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n$1\r\n1\r\n", "*2\r\n$6\r\nNOTIFY\r\n$6\r\nDELETE\r\n",
		"*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n$1\r\n2\r\n", "*2\r\n$6\r\nNOTIFY\r\n$6\r\nDELETE\r\n"} {
		if p := nf.next(); p.payload != want || p.ts != at(uint16(1+i)) {
			t.Fatalf("change %d: %+v, want %q at %s", i, p, want, at(uint16(1+i)))
		}
	}
	nf.none()
	if got := nf.as("client-id1", resp("KEYNOTIFY", "SOMEKEY", "STOP")); got != "+OK\r\n" {
		t.Fatalf("STOP: %q", got)
	}
	nf.as("other", resp("SET", "SOMEKEY", "3"))
	nf.none()
	nf.as("client-id1", resp("KEYNOTIFY", "SOMEKEY"))
	nf.srv.ClientGone("client-id1")
	nf.as("other", resp("SET", "SOMEKEY", "4"))
	nf.none()
	if n := nf.srv.Stats().Registrations; n != 0 {
		t.Fatalf("%d registrations left", n)
	}
}

// Each registered client gets its own copy; a client that is gone when
// it registers keeps no registration.
func TestNotificationsPerClient(t *testing.T) {
	nf := newNotifyFixture(t, nil)
	nf.as("a", resp("KEYNOTIFY", "k"))
	nf.as("b", resp("KEYNOTIFY", "k"))
	nf.mu.Lock()
	nf.gone["c"] = true
	nf.mu.Unlock()
	if got := nf.as("c", resp("KEYNOTIFY", "k")); got != "+OK\r\n" {
		t.Fatalf("KEYNOTIFY of a gone client: %q", got)
	}
	nf.as("a", resp("SET", "k", "v"))
	seen := map[string]bool{}
	for range 2 {
		seen[nf.next().topic] = true
	}
	if !seen[NotifyTopic("a", []byte("k"))] || !seen[NotifyTopic("b", []byte("k"))] {
		t.Fatalf("published to %v", seen)
	}
	nf.none()
	if got := nf.as("", resp("KEYNOTIFY", "k")); got[:5] != "-ERR " {
		t.Fatalf("a registration without the broker's client id: %q", got)
	}
}

// Registrations are bounded per client and in total: past them,
// KEYNOTIFY answers the quota error; a registration again is no new one.
func TestRegistrationBounds(t *testing.T) {
	nf := newNotifyFixture(t, func(c *Config) { c.MaxClientRegistrations, c.MaxRegistrations = 2, 3 })
	for _, c := range []struct{ id, key, want string }{
		{"a", "1", "+OK\r\n"}, {"a", "2", "+OK\r\n"}, {"a", "2", "+OK\r\n"}, {"a", "3", "-ERR the quota has been exceeded\r\n"},
		{"b", "1", "+OK\r\n"}, {"b", "2", "-ERR the quota has been exceeded\r\n"},
	} {
		if got := nf.as(c.id, resp("KEYNOTIFY", c.key)); got != c.want {
			t.Errorf("%s KEYNOTIFY %s: %q, want %q", c.id, c.key, got, c.want)
		}
	}
	nf.srv.ClientGone("a")
	if got := nf.as("b", resp("KEYNOTIFY", "2")); got != "+OK\r\n" {
		t.Errorf("after a's registrations went: %q", got)
	}
}

// A full queue drops (and counts) notifications rather than hold up the
// store's writer.
func TestQueueBounded(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 5)
	nf := newNotifyFixture(t, func(c *Config) {
		c.QueueLen = queueShards // one per publisher
		publish := c.Publish
		c.Publish = func(ctx context.Context, topic string, payload []byte, ts string) error {
			entered <- struct{}{}
			<-release
			return publish(ctx, topic, payload, ts)
		}
	})
	nf.as("a", resp("KEYNOTIFY", "k"))
	for i := range 5 { // one being published, one queued, three dropped
		if got := nf.as("a", resp("SET", "k", string(rune('0'+i)))); got != "+OK\r\n" {
			t.Fatal(got)
		}
		if i == 0 {
			<-entered // the first is being published
		}
	}
	close(release)
	first, second := nf.next(), nf.next()
	if first.ts >= second.ts {
		t.Errorf("out of order: %+v then %+v", first, second)
	}
	nf.none()
	if st := nf.srv.Stats(); st.Dropped != 3 || st.Published != 2 {
		t.Errorf("stats %+v, want 3 dropped, 2 published", st)
	}
}
