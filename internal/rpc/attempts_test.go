package rpc

import (
	"context"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/session"
)

// eventLog collects events; on, when set, sees each as it arrives.
type eventLog struct {
	mu  sync.Mutex
	evs []events.Event
	on  func(events.Event)
}

func (l *eventLog) Emit(ev events.Event) {
	l.mu.Lock()
	l.evs = append(l.evs, ev)
	on := l.on
	l.mu.Unlock()
	if on != nil {
		on(ev)
	}
}

func (l *eventLog) all() []events.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]events.Event(nil), l.evs...)
}

// summary is "kind/type/policy/attempt" of each event of kind.
func (l *eventLog) summary(kind string) []string {
	var out []string
	for _, ev := range l.all() {
		if ev.Kind == kind {
			out = append(out, ev.Kind+"/"+ev.Type+"/"+string(ev.Policy)+"/"+strconv.Itoa(ev.Attempt))
		}
	}
	return out
}

// stallUntil returns a handler that waits for its context on the attempts
// below ok, and answers with its attempt number from attempt ok on.
func stallUntil(ok int, attempts chan<- int) Handler {
	return func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
		attempts <- req.Attempt
		if req.Attempt < ok {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &abi.Response{Payload: []byte(strconv.Itoa(req.Attempt))}, nil
	}
}

func TestRetryOnTimeout(t *testing.T) {
	evs := &eventLog{}
	attempts := make(chan int, 8)
	h := start(t, Config{Events: evs}, Command{Name: "idem", Idempotent: true, Timeout: 30 * time.Millisecond,
		TimeoutRetries: 2, Handler: stallUntil(3, attempts)})
	resp := h.roundTrip(req("rpc/exec-1/idem", 1), 1)
	if stat(resp) != "200" || string(resp.Payload) != "3" {
		t.Fatalf("%s %q, want 200 from attempt 3", stat(resp), resp.Payload)
	}
	// Not closed: a cut attempt's goroutine may still be returning.
	var seen []int
	for len(attempts) > 0 {
		seen = append(seen, <-attempts)
	}
	if got := fmt.Sprint(seen); got != "[1 2 3]" {
		t.Fatalf("attempts %v, want 1,2,3", seen)
	}
	want := "[timeout/execution/retry/1 timeout/execution/retry/2]"
	if got := fmt.Sprint(evs.summary(events.KindTimeout)); got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	// Each stalled attempt passed 80 % of its budget first.
	if got := fmt.Sprint(evs.summary(events.KindBudgetWarning)); got != "[budget_warning/execution//1 budget_warning/execution//2]" {
		t.Fatalf("warnings %s", got)
	}
	var ev events.Event
	for _, e := range evs.all() {
		if e.Kind == events.KindTimeout {
			ev = e
			break
		}
	}
	if ev.Command != "idem" || ev.Budget != 30*time.Millisecond || ev.Elapsed < 30*time.Millisecond ||
		ev.Correlation != CorrelationString(req("", 1).Properties.CorrelationData) || ev.Time.IsZero() {
		t.Fatalf("event %+v", ev)
	}
}

func TestRetryExhaustedAnswers408(t *testing.T) {
	evs := &eventLog{}
	attempts := make(chan int, 8)
	h := start(t, Config{Events: evs}, Command{Name: "idem", Idempotent: true, Timeout: 20 * time.Millisecond,
		TimeoutRetries: 2, Handler: stallUntil(99, attempts)})
	if got := stat(h.roundTrip(req("rpc/exec-1/idem", 1), 1)); got != "408" {
		t.Fatalf("%s, want 408 after the retries", got)
	}
	want := "[timeout/execution/retry/1 timeout/execution/retry/2 timeout/execution/fail/3]"
	if got := fmt.Sprint(evs.summary(events.KindTimeout)); got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if len(attempts) != 3 {
		t.Fatalf("%d attempts, want 3", len(attempts))
	}
}

func TestFailPolicyRunsOnce(t *testing.T) {
	evs := &eventLog{}
	attempts := make(chan int, 8)
	h := start(t, Config{Events: evs}, Command{Name: "idem", Idempotent: true, Timeout: 20 * time.Millisecond,
		Handler: stallUntil(99, attempts)})
	if got := stat(h.roundTrip(req("rpc/exec-1/idem", 1), 1)); got != "408" {
		t.Fatalf("%s, want 408", got)
	}
	if got := fmt.Sprint(evs.summary(events.KindTimeout)); got != "[timeout/execution/fail/1]" {
		t.Fatalf("events %s", got)
	}
	if len(attempts) != 1 {
		t.Fatalf("%d attempts, want 1", len(attempts))
	}
}

func TestRetryRefusedForNonIdempotent(t *testing.T) {
	u, _ := url.Parse("mqtt://x:1883")
	_, err := NewExecutor(Config{ExecutorID: "x", Session: session.Config{Broker: u}},
		[]Command{{Name: "counter", Topic: DefaultTopic, TimeoutRetries: 1, Handler: echoHandler}})
	if err == nil || !strings.Contains(err.Error(), "idempotent") || !strings.Contains(err.Error(), "counter") {
		t.Fatalf("err = %v, want a refusal naming the command and idempotency", err)
	}
}

// A call still running at 80 % of its budget emits a warning while it
// runs: the handler returns only once the warning has been seen (if none
// came, the call would time out and the test fail).
func TestBudgetWarning(t *testing.T) {
	warned := make(chan struct{})
	var once sync.Once
	evs := &eventLog{on: func(ev events.Event) {
		if ev.Kind == events.KindBudgetWarning {
			once.Do(func() { close(warned) })
		}
	}}
	h := start(t, Config{Events: evs},
		Command{Name: "slowish", Timeout: 500 * time.Millisecond, Handler: func(ctx context.Context, _ *abi.Request) (*abi.Response, error) {
			select {
			case <-warned:
				return &abi.Response{Payload: []byte("made it")}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}},
		Command{Name: "echo", Timeout: 500 * time.Millisecond, Handler: echoHandler})
	if got := stat(h.roundTrip(req("rpc/exec-1/echo", 1), 1)); got != "200" {
		t.Fatal(got)
	}
	if got := stat(h.roundTrip(req("rpc/exec-1/slowish", 2), 2)); got != "200" {
		t.Fatalf("%s, want 200 (the warning came at 80 %%)", got)
	}
	all := evs.all()
	if len(all) != 1 {
		t.Fatalf("events %v, want the one warning (none for the fast echo)", evs.summary(events.KindBudgetWarning))
	}
	ev := all[0]
	if ev.Command != "slowish" || ev.Type != events.TypeExecution || ev.Budget != 500*time.Millisecond ||
		ev.Elapsed < 400*time.Millisecond || ev.Elapsed >= 500*time.Millisecond {
		t.Fatalf("warning %+v: want budget 500ms, elapsed in [400ms, 500ms)", ev)
	}
}

// A handler that keeps its deadline is waited for: the 408 goes out only
// after it returned. Any other is not: the 408 goes out at the cut while
// it still runs.
func TestKeepsDeadline(t *testing.T) {
	t.Run("waited for", func(t *testing.T) {
		var returned atomic.Bool
		h := start(t, Config{}, Command{Name: "slow", Timeout: 20 * time.Millisecond, KeepsDeadline: true,
			Handler: func(ctx context.Context, _ *abi.Request) (*abi.Response, error) {
				<-ctx.Done()
				for range 100 { // still returning: the executor must wait
					runtime.Gosched()
				}
				returned.Store(true)
				return nil, ctx.Err()
			}})
		if got := stat(h.roundTrip(req("rpc/exec-1/slow", 1), 1)); got != "408" {
			t.Fatalf("%s, want 408", got)
		}
		if !returned.Load() {
			t.Fatal("answered before the handler returned")
		}
	})
	t.Run("not waited for", func(t *testing.T) {
		release, returned := make(chan struct{}), make(chan struct{})
		h := start(t, Config{}, Command{Name: "slow", Timeout: 20 * time.Millisecond,
			Handler: func(ctx context.Context, _ *abi.Request) (*abi.Response, error) {
				defer close(returned)
				<-release // ignores its deadline
				return nil, nil
			}})
		if got := stat(h.roundTrip(req("rpc/exec-1/slow", 1), 1)); got != "408" {
			t.Fatalf("%s, want 408", got)
		}
		close(release)
		<-returned
	})
}
