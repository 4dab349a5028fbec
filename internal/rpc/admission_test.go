package rpc

import (
	"context"
	"encoding/binary"
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/session"
)

// Request modifiers for the admission tests.

// withCorrelation gives a request correlation data made of n, so that a
// test can send more than 256 different requests.
func withCorrelation(n int) func(*packets.Publish) {
	return func(p *packets.Publish) {
		c := make([]byte, correlationLength)
		binary.BigEndian.PutUint64(c[8:], uint64(n))
		p.Properties.CorrelationData = c
	}
}

func withExpiry(seconds uint32) func(*packets.Publish) {
	return func(p *packets.Publish) { p.Properties.MessageExpiry = &seconds }
}

// withSource sets the request's __srcId; "" removes it.
func withSource(id string) func(*packets.Publish) {
	return func(p *packets.Publish) {
		var kept []packets.User
		for _, u := range p.Properties.User {
			if u.Key != "__srcId" {
				kept = append(kept, u)
			}
		}
		if id != "" {
			kept = append(kept, packets.User{Key: "__srcId", Value: id})
		}
		p.Properties.User = kept
	}
}

func withResponseTopic(topic string) func(*packets.Publish) {
	return func(p *packets.Publish) { p.Properties.ResponseTopic = topic }
}

func withTimestamp(ts hlc.Timestamp) func(*packets.Publish) {
	return func(p *packets.Publish) {
		p.Properties.User = append(p.Properties.User, packets.User{Key: "__ts", Value: ts.String()})
	}
}

// sender counts the harness's requests, so that each round trip waits for
// the next response.
type sender struct {
	*harness
	n int
}

func (s *sender) send(p *packets.Publish) *packets.Publish {
	s.t.Helper()
	s.n++
	return s.roundTrip(p, s.n)
}

func wantStatus(t *testing.T, what string, resp *packets.Publish, status string) {
	t.Helper()
	if got, _ := user(resp, "__stat"); got != status {
		msg, _ := user(resp, "__stMsg")
		t.Fatalf("%s: __stat %s (%q), want %s", what, got, msg, status)
	}
}

func countingEcho(n *atomic.Int64) Handler {
	return func(ctx context.Context, r *abi.Request) (*abi.Response, error) {
		n.Add(1)
		return echoHandler(ctx, r)
	}
}

// A request asking for more than the executor's maximum expiry (default
// 1 h) is refused with 400 naming the property, its value and the limit:
// honouring it would protect its dedup entry for as long as it asks (up to
// 136 years). It is not run and takes no dedup entry.
func TestExpiryOverTheMaximumRefused(t *testing.T) {
	var ran atomic.Int64
	h := start(t, Config{}, Command{Name: "echo", Handler: countingEcho(&ran)})
	s := &sender{harness: h}
	const topic = "rpc/exec-1/echo"
	for i, exp := range []uint32{math.MaxUint32, 3601} {
		resp := s.send(req(topic, byte(i), withExpiry(exp)))
		wantStatus(t, "expiry "+strconv.Itoa(int(exp)), resp, "400")
		if name, _ := user(resp, "__propName"); name != "Message Expiry" {
			t.Errorf("__propName %q, want Message Expiry", name)
		}
		if val, _ := user(resp, "__propVal"); val != strconv.FormatUint(uint64(exp), 10) {
			t.Errorf("__propVal %q, want %d", val, exp)
		}
		if msg, _ := user(resp, "__stMsg"); !strings.Contains(msg, "3600 s") {
			t.Errorf("__stMsg %q should name the maximum, 3600 s", msg)
		}
	}
	// A duplicate of a refused request is refused again: nothing was stored.
	wantStatus(t, "duplicate of a refused request", s.send(req(topic, 0, withExpiry(math.MaxUint32))), "400")
	wantStatus(t, "expiry at the maximum", s.send(req(topic, 9, withExpiry(3600))), "200")
	if ran.Load() != 1 || h.exec.DedupLen() != 1 {
		t.Fatalf("ran %d, dedup entries %d; only the request within the maximum may run and be kept", ran.Load(), h.exec.DedupLen())
	}
}

// Config.MaxExpiry sets the maximum.
func TestMaxExpiryConfigured(t *testing.T) {
	h := start(t, Config{MaxExpiry: time.Minute}, Command{Name: "echo", Handler: echoHandler})
	s := &sender{harness: h}
	resp := s.send(req("rpc/exec-1/echo", 1, withExpiry(61)))
	wantStatus(t, "61 s over a 1 min maximum", resp, "400")
	if msg, _ := user(resp, "__stMsg"); !strings.Contains(msg, "60 s") {
		t.Errorf("__stMsg %q should name the maximum, 60 s", msg)
	}
	wantStatus(t, "60 s", s.send(req("rpc/exec-1/echo", 2, withExpiry(60))), "200")
}

func TestAdmissionConfigRefused(t *testing.T) {
	u, _ := url.Parse("mqtt://fake:1883")
	for _, cfg := range []Config{
		{ExecutorID: "x", Session: session.Config{Broker: u}, MaxExpiry: 500 * time.Millisecond},
	} {
		if _, err := NewExecutor(cfg, []Command{{Name: "echo", Topic: DefaultTopic, Handler: echoHandler}}); err == nil || !strings.Contains(err.Error(), "max expiry") {
			t.Errorf("NewExecutor(MaxExpiry %v) err = %v, want one naming the max expiry", cfg.MaxExpiry, err)
		}
	}
}

// One invoker sending 101 % of the dedup store's bound cannot lock it:
// with the maximum expiry its requests are refused outright; within it the
// invoker fills its share (a tenth of the store by default) and gets 503
// naming it, while other invokers are served. Once the requests' expiry
// (at most the maximum) has passed, the invoker's entries give way.
func TestOneInvokerCannotLockTheDedupStore(t *testing.T) {
	const (
		topic = "rpc/exec-1/echo"
		store = 100
		share = store / 10
	)
	h := start(t, Config{MaxDedupEntries: store}, Command{Name: "echo", Handler: echoHandler})
	s := &sender{harness: h}
	hostile := func(n int, exp uint32) *packets.Publish {
		return req(topic, 0, withCorrelation(n), withSource("hostile"), withExpiry(exp))
	}
	for i := range store + store/100 {
		wantStatus(t, "the maximum expiry", s.send(hostile(i, math.MaxUint32)), "400")
	}
	for i := range store + store/100 {
		resp := s.send(hostile(1000+i, 3600))
		if i < share {
			wantStatus(t, "within the invoker's share", resp, "200")
			continue
		}
		wantStatus(t, "over the invoker's share", resp, "503")
		if msg, _ := user(resp, "__stMsg"); !strings.Contains(msg, "share") || !strings.Contains(msg, strconv.Itoa(share)+" entries") {
			t.Fatalf("__stMsg %q should name the invoker's share and its bound", msg)
		}
	}
	wantStatus(t, "another invoker",
		s.send(req(topic, 0, withCorrelation(5000), withSource("other"), withExpiry(3600))), "200")
	wantStatus(t, "an invoker without __srcId, known by its response topic",
		s.send(req(topic, 0, withCorrelation(5001), withSource(""), withResponseTopic("clients/third/resp"), withExpiry(3600))), "200")
	wantStatus(t, "a duplicate of the hostile invoker's", s.send(hostile(1000, 3600)), "200")

	h.clock.Add(time.Hour + time.Second) // every request's expiry is over
	wantStatus(t, "the hostile invoker after its expiries", s.send(hostile(2000, 3600)), "200")
	// An entry is kept one request window past its expiry: two maximum
	// expiries after the last request, every entry has gone.
	h.clock.Add(2*time.Hour + time.Second)
	wantStatus(t, "a request two maximum expiries later", s.send(hostile(2001, 10)), "200")
	if n := h.exec.DedupLen(); n != 1 {
		t.Fatalf("dedup entries %d two maximum expiries after the last request, want 1 (the new one)", n)
	}
}

// Config.MaxDedupPerInvoker sets the share; negative turns it off.
func TestDedupShareConfigured(t *testing.T) {
	for _, c := range []struct {
		perInvoker, admitted int
	}{{3, 3}, {-1, 20}} {
		h := start(t, Config{MaxDedupEntries: 20, MaxDedupPerInvoker: c.perInvoker}, Command{Name: "echo", Handler: echoHandler})
		s := &sender{harness: h}
		admitted := 0
		for i := range 25 {
			resp := s.send(req("rpc/exec-1/echo", 0, withCorrelation(i), withExpiry(60)))
			if got, _ := user(resp, "__stat"); got == "200" {
				admitted++
			}
		}
		if admitted != c.admitted {
			t.Errorf("MaxDedupPerInvoker %d: %d requests of one invoker admitted, want %d", c.perInvoker, admitted, c.admitted)
		}
	}
}

// A __ts 50 s ahead with counter 99998 (or at the drift limit with
// counter 99999) is within the drift limit and accepted; it must not
// make later requests carrying a current __ts fail (they got 500 "HLC
// counter overflow" until physical time caught up), even when it is sent
// again, and replies stay strictly increasing.
func TestClockPoisoningRefused(t *testing.T) {
	for _, c := range []struct {
		name    string
		ahead   time.Duration
		counter uint32
	}{
		{"50 s ahead, counter 99998", 50 * time.Second, hlc.MaxCounter - 1},
		{"at the drift limit, counter 99999", hlc.DefaultMaxDrift, hlc.MaxCounter},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := start(t, Config{}, Command{Name: "echo", Handler: echoHandler})
			s := &sender{harness: h}
			now := h.clock.Now()
			poison := hlc.Timestamp{Millis: now.Add(c.ahead).UnixMilli(), Counter: c.counter, NodeID: "hostile"}
			var prev hlc.Timestamp
			for i := range 30 {
				ts := hlc.Timestamp{Millis: now.UnixMilli(), Counter: uint32(i), NodeID: "good"}
				if i%10 == 0 {
					ts = poison
				}
				resp := s.send(req("rpc/exec-1/echo", byte(i), withTimestamp(ts)))
				wantStatus(t, "request "+strconv.Itoa(i)+" with __ts "+ts.String(), resp, "200")
				stamp, _ := user(resp, "__ts")
				got, err := hlc.Parse(stamp)
				if err != nil {
					t.Fatalf("reply %d: %v", i, err)
				}
				if got.Compare(prev) <= 0 || got.Compare(ts) <= 0 {
					t.Fatalf("reply %d stamped %v: not after the previous reply %v and its request %v", i, got, prev, ts)
				}
				prev = got
			}
		})
	}
}
