package nested_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/nested"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// A child's deadline is min(the parent's, the requested timeout, the
// child's own timeout), seen by a real child (probe-request reports its
// request's deadline).
func TestNestedDeadlinePropagation(t *testing.T) {
	h := newNestHost(t, "h1", "nest", "probe")
	const s, ms = time.Second, time.Millisecond
	cases := []struct {
		name                string
		parent, req, own    time.Duration
		want                string // which bound wins: parent, requested, own
		wantBound           time.Duration
		wantChain, incoming string
	}{
		{"parent only", 5 * s, 0, 0, "parent", 0, "h1/nest", ""},
		{"requested", 5 * s, 300 * ms, 0, "requested", 300 * ms, "h1/nest", ""},
		{"own", 5 * s, 0, 200 * ms, "own", 200 * ms, "h1/nest", ""},
		{"own below requested", 5 * s, time.Second, 400 * ms, "own", 400 * ms, "h1/nest", ""},
		{"requested below own", 5 * s, 250 * ms, 2 * s, "requested", 250 * ms, "h1/nest", ""},
		{"parent below both", 300 * ms, 2 * s, time.Second, "parent", 0, "x/top>h1/nest", "x/top"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.configure(nested.Config{Timeout: func(cmd string) time.Duration {
				if cmd != "probe-request" {
					t.Errorf("own timeout asked for %s", cmd)
				}
				return c.own
			}})
			ctx, cancel := context.WithTimeout(context.Background(), c.parent)
			defer cancel()
			parentDeadline, _ := ctx.Deadline()
			var md map[string]string
			if c.incoming != "" {
				md = map[string]string{abi.ChainKey: c.incoming}
			}
			before := time.Now()
			v := decode[resultView](t)(h.invoke(ctx, "nest", callSpec{Command: "probe-request",
				ContentType: "text/plain", TimeoutMs: c.req.Milliseconds()}, md))
			after := time.Now()
			if v.Error != "" || v.Outcome != "done" || v.Status != 200 {
				t.Fatalf("%+v", v)
			}
			var p probeView
			if err := json.Unmarshal([]byte(v.Payload), &p); err != nil {
				t.Fatal(err)
			}
			got := time.Unix(0, p.DeadlineUnix)
			switch c.want {
			case "parent":
				if !got.Equal(parentDeadline) {
					t.Fatalf("child deadline %v, want the parent's %v", got, parentDeadline)
				}
			default:
				if got.Before(before.Add(c.wantBound)) || got.After(after.Add(c.wantBound)) {
					t.Fatalf("child deadline %v not within [%v, %v] + %v", got, before, after, c.wantBound)
				}
			}
			if p.Metadata[abi.ChainKey] != c.wantChain {
				t.Fatalf("the child saw chain %q, want %q", p.Metadata[abi.ChainKey], c.wantChain)
			}
		})
	}
}

// A → B → A fails at once, well under the deadline, with an error that
// names the chain; nothing waits for a deadline.
func TestNestedCycleGuard(t *testing.T) {
	h := newNestHost(t, "h1", "nest")
	start := time.Now()
	const deadline = 60 * time.Second
	resp, err := h.invoke(ctxFor(t, deadline), "cycle-a", nil, nil)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	const chain = "nested call cycle: h1/cycle-a → h1/cycle-b → h1/cycle-a"
	if resp.Code() != abi.StatusInternalError || !resp.AppError || !strings.Contains(resp.Message, chain) {
		t.Fatalf("%v: %q", resp, resp.Message)
	}
	if took >= deadline/2 {
		t.Fatalf("the cycle took %v to fail: it waited for the %v deadline", took, deadline)
	}
	t.Logf("cycle failed in %v: %s", took, resp.Message)
}

// Chains longer than the depth limit fail at once, naming the chain.
func TestNestedDepthLimit(t *testing.T) {
	h := newNestHost(t, "h1", "nest", "echo")
	relay := func() callSpec {
		inner, _ := json.Marshal(callSpec{Command: "echo", Payload: "deep"})
		return callSpec{Command: "nest-relay", Payload: string(inner)}
	}
	// nest → nest-relay → echo is a chain of 3.
	h.configure(nested.Config{MaxDepth: 2})
	v := decode[resultView](t)(h.invoke(ctxFor(t, 10*time.Second), "nest", relay(), nil))
	var inner resultView
	if err := json.Unmarshal([]byte(v.Payload), &inner); err != nil || v.Status != 200 {
		t.Fatalf("%+v: %v", v, err)
	}
	if inner.Reason != "depth" || !strings.Contains(inner.Error, "nested call depth limit of 2 reached: h1/nest → h1/nest-relay → h1/echo") {
		t.Fatalf("inner %+v", inner)
	}
	h.configure(nested.Config{MaxDepth: 3})
	v = decode[resultView](t)(h.invoke(ctxFor(t, 10*time.Second), "nest", relay(), nil))
	if err := json.Unmarshal([]byte(v.Payload), &inner); err != nil || inner.Payload != "deep" || inner.Status != 200 {
		t.Fatalf("depth 3 allowed: %+v %+v", v, inner)
	}

	// The default limit, 8, counts the chain the request arrived with.
	h.configure(nested.Config{})
	for _, c := range []struct {
		callers int
		ok      bool
	}{{6, true}, {7, false}} {
		var chain []string
		for i := range c.callers {
			chain = append(chain, fmt.Sprintf("other/c%d", i))
		}
		md := map[string]string{abi.ChainKey: strings.Join(chain, ">")}
		v := decode[resultView](t)(h.invoke(ctxFor(t, 10*time.Second), "nest", callSpec{Command: "echo"}, md))
		if c.ok != (v.Error == "") || (!c.ok && (v.Reason != "depth" || !strings.Contains(v.Error, "limit of 8"))) {
			t.Fatalf("%d callers: %+v", c.callers, v)
		}
	}
}

// A child its nested deadline cuts is timed_out (408), and a nested event
// says so; the parent goes on.
func TestNestedTimeoutEvent(t *testing.T) {
	h := newNestHost(t, "h1", "nest", "spin")
	h.events.take("")
	v := decode[resultView](t)(h.invoke(ctxFor(t, 10*time.Second), "nest", callSpec{Command: "spin", TimeoutMs: 100}, nil))
	if v.Outcome != "timed_out" || v.Status != 408 || v.BudgetMs != 100 || v.ElapsedMs < 100 || !strings.Contains(v.Error, "timed_out") {
		t.Fatalf("%+v", v)
	}
	evs := h.events.take(events.TypeNested)
	if len(evs) != 1 {
		t.Fatalf("events %+v", evs)
	}
	ev := evs[0]
	if ev.Kind != events.KindTimeout || ev.Command != "spin" || ev.Plugin != "spin" || ev.Branch != "spin" ||
		ev.Budget != 100*time.Millisecond || ev.Elapsed < ev.Budget || ev.Policy != events.PolicyFail ||
		ev.Correlation != parentCorrelationUUID || ev.BudgetMS != 100 || ev.Time.IsZero() {
		t.Fatalf("event %+v", ev)
	}
}

// Unknown commands and remote calls without a remote invoker fail at
// once with their reason.
func TestNestedRefusals(t *testing.T) {
	h := newNestHost(t, "h1", "nest")
	for _, c := range []struct {
		spec   callSpec
		reason string
		msg    string
	}{
		{callSpec{Command: "nope"}, "unknown_command", "command nope is not served by this host (h1)"},
		{callSpec{Command: "echo", Executor: "h2"}, "unavailable", "calls to other executors (h2) are not available"},
	} {
		v := decode[resultView](t)(h.invoke(ctxFor(t, 10*time.Second), "nest", c.spec, nil))
		if v.Outcome != "error" || v.Reason != c.reason || !strings.Contains(v.Error, c.msg) {
			t.Fatalf("%+v: %+v", c.spec, v)
		}
	}
	// A branch naming this host's own id runs locally.
	h = newNestHost(t, "h1", "nest", "echo")
	v := decode[resultView](t)(h.invoke(ctxFor(t, 10*time.Second), "nest", callSpec{Command: "echo", Executor: "h1", Payload: "me"}, nil))
	if v.Payload != "me" {
		t.Fatalf("%+v", v)
	}
}

// The caller cut while its child runs stops the wait at once: the parent
// fails as cut, and the child is stopped too.
func TestNestedCallerCut(t *testing.T) {
	h := newNestHost(t, "h1", "nest", "spin")
	h.configure(nested.Config{Timeout: func(string) time.Duration { return time.Minute }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := h.invoke(ctx, "nest", callSpec{Command: "spin"}, nil)
		done <- err
	}()
	spin := h.plugins["spin"]
	for spin.Stats().InUse == 0 { // the child is running
		if time.Since(start) > 60*time.Second { // hang guard
			t.Fatal("the child never started")
		}
		time.Sleep(time.Millisecond)
	}
	// The child spins forever: only the cancel can end the call.
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second): // hang guard
		t.Fatal("the call did not end after the cancel")
	}
	if !errors.Is(err, wasm.KindCanceled) {
		t.Fatalf("%v after the cancel, want canceled", err)
	}
	for cancelled := time.Now(); spin.Stats().InUse != 0; {
		if time.Since(cancelled) > 60*time.Second { // hang guard: the child spins forever
			t.Fatal("the child still runs")
		}
		time.Sleep(time.Millisecond)
	}
}
