package rpc

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// When the drain time ends, Stop answers what it owes and acks it before
// it disconnects: the call still running is cut and answered 500 (outcome
// unknown), the one still queued 503 (not run), a duplicate of the running
// one that arrived during the stop gets the same 500; a new request that
// arrived during the stop is neither answered nor acked (the restarted
// host runs it), and nothing else stays unacked.
func TestStopAnswersWhatTheDrainLeaves(t *testing.T) {
	b := newBlocking()
	h := start(t, Config{}, Command{Name: "work", Handler: b.handle, Concurrency: 1})
	h.deliver(req("rpc/exec-1/work", 1)) // runs
	<-b.started
	h.deliver(req("rpc/exec-1/work", 2)) // queued behind it
	for h.exec.pending.Load() != 2 {     // both taken
		time.Sleep(time.Millisecond)
	}

	drain, endDrain := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- h.exec.Stop(drain) }()
	for { // Stop has begun once it takes no new request
		h.exec.admit.Lock()
		stopping := h.exec.stopping
		h.exec.admit.Unlock()
		if stopping {
			break
		}
		time.Sleep(time.Millisecond)
	}
	h.deliver(req("rpc/exec-1/work", 1)) // a duplicate of the running call
	newID, err := h.broker.Deliver(req("rpc/exec-1/work", 9))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.broker.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	// Both reached the executor before the drain ends: the duplicate
	// waits for its original's reply, the new request is left alone.
	testkit.WaitFor(t, "the duplicate and the new request taken while stopping", func() bool { return h.exec.takenWhileStopping.Load() == 2 })
	endDrain()
	var stopErr error
	select {
	case stopErr = <-stopped:
	case <-time.After(time.Minute): // hang guard
		t.Fatal("Stop did not return")
	}
	if !errors.Is(stopErr, context.Canceled) || !strings.Contains(stopErr.Error(), "2 calls queued or running cut at stop") {
		t.Errorf("Stop: %v, want the calls cut", stopErr)
	}
	if cause := b.cause.Load(); cause == nil || !errors.Is(*cause, errStopped) {
		t.Errorf("the running call's context: cause %v, want errStopped", cause)
	}

	pubs := h.broker.Published()
	got := map[byte][]string{}
	for _, p := range pubs {
		msg, _ := user(p, "__stMsg")
		got[p.Properties.CorrelationData[0]] = append(got[p.Properties.CorrelationData[0]], stat(p)+" "+msg)
	}
	unknown := "500 outcome unknown: the host stopped while the call ran (its drain time ended)"
	if want := []string{unknown, unknown}; !slices.Equal(got[1], want) {
		t.Errorf("the running call and its duplicate: %q, want %q", got[1], want)
	}
	if want := []string{"503 the host stopped before running the request; send it again"}; !slices.Equal(got[2], want) {
		t.Errorf("the queued call: %q, want %q", got[2], want)
	}
	if len(got[9]) != 0 {
		t.Errorf("the request that arrived during the stop was answered: %q", got[9])
	}
	if b.ran.Load() != 1 {
		t.Errorf("the handler ran %d times, want once", b.ran.Load())
	}
	if unacked := h.broker.Unacked(); !slices.Equal(unacked, []uint16{newID}) {
		t.Errorf("unacked %v, want only the new request's %d", unacked, newID)
	}
}

// The session expiry the executor asks the broker for: the default, a
// value, or none.
func TestSessionExpiryConnect(t *testing.T) {
	for _, c := range []struct {
		set  time.Duration
		want uint32
	}{{0, 600}, {5 * time.Second, 5}, {-1, 0}} {
		h := start(t, Config{Session: session.Config{Expiry: c.set}}, Command{Name: "echo", Handler: echoHandler})
		cps := h.broker.ConnectPackets()
		var got uint32 // absent: 0, the session ends with the connection
		if len(cps) == 1 && cps[0].Properties != nil && cps[0].Properties.SessionExpiryInterval != nil {
			got = *cps[0].Properties.SessionExpiryInterval
		}
		if len(cps) != 1 || got != c.want || cps[0].CleanStart {
			t.Errorf("SessionExpiry %v: CONNECT %+v, want session expiry %d s and no clean start", c.set, cps, c.want)
		}
	}
}
