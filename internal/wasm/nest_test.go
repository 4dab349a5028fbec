package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// nestEngine is an engine of its own (the compilation cache is shared), so
// that setting its Nester touches no other test.
func nestEngine(t *testing.T) *Engine {
	t.Helper()
	e, err := NewEngine(Config{CacheDir: testkit.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e
}

func loadNest(t *testing.T, e *Engine) *Plugin {
	t.Helper()
	p, err := e.Load(context.Background(), "nest", readPlugin(t, "nest"), PluginConfig{PoolSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// nestView is the nest plugin's report of a call.
type nestView struct {
	Error    string  `json:"error"`
	Outcome  string  `json:"outcome"`
	Status   int     `json:"status"`
	Payload  string  `json:"payload"`
	BudgetMs float64 `json:"budget_ms"`
}

func nestCall(t *testing.T, ctx context.Context, p *Plugin, spec string) (nestView, error) {
	t.Helper()
	var v nestView
	resp, err := p.Invoke(ctx, &abi.Request{Command: "nest", Payload: []byte(spec),
		Metadata: map[string]string{abi.ChainKey: "h/top"}})
	if err != nil {
		return v, err
	}
	if resp.Code() != abi.StatusOK {
		t.Fatalf("nest answered %v: %s", resp, resp.Message)
	}
	if err := json.Unmarshal(resp.Payload, &v); err != nil {
		t.Fatalf("%v: %s", err, resp.Payload)
	}
	return v, nil
}

// Without a Nester the guest gets a clear error from the call, not a trap.
func TestInvokeWithoutNester(t *testing.T) {
	p := loadNest(t, nestEngine(t))
	v, err := nestCall(t, context.Background(), p, `{"command":"echo"}`)
	if err != nil || !strings.Contains(v.Error, "unavailable") || !strings.Contains(v.Error, "not available on this host") {
		t.Fatalf("%+v, %v", v, err)
	}
	if st := p.Stats(); st.Replaced != 0 || st.Failures != 0 {
		t.Fatalf("no instance may be lost: %+v", st)
	}
}

// The host function decodes the guest's invocation, hands it to the
// Nester with the caller, and the guest reads the result.
func TestInvokeThroughNester(t *testing.T) {
	e := nestEngine(t)
	var mu sync.Mutex
	var gotCaller Caller
	var gotInv *abi.Invocation
	e.SetNester(NesterFunc(func(ctx context.Context, c Caller, inv *abi.Invocation) *abi.InvocationResult {
		mu.Lock()
		gotCaller, gotInv = c, inv
		mu.Unlock()
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the Nester must get the call's context, with its deadline")
		}
		return &abi.InvocationResult{Branches: []abi.BranchResult{{Name: inv.Branches[0].Name,
			Status: abi.StatusOK, Payload: []byte("from the nester"), Budget: 42 * time.Millisecond}}}
	}))
	p := loadNest(t, e) // SetNester before or after a load: both work
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := nestCall(t, ctx, p, `{"command":"echo","executor":"h2","payload":"hi","timeout_ms":250,"metadata":{"k":"v"}}`)
	if err != nil || v.Error != "" || v.Outcome != "done" || v.Status != 200 || v.Payload != "from the nester" || v.BudgetMs != 42 {
		t.Fatalf("%+v, %v", v, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if gotCaller.Plugin != "nest" || gotCaller.Request.Command != "nest" || gotCaller.Request.Metadata[abi.ChainKey] != "h/top" {
		t.Fatalf("caller %+v", gotCaller)
	}
	b := gotInv.Branches[0]
	if len(gotInv.Branches) != 1 || b.Command != "echo" || b.ExecutorID != "h2" || string(b.Payload) != "hi" ||
		b.Timeout != 250*time.Millisecond || b.Metadata["k"] != "v" {
		t.Fatalf("invocation %+v", gotInv)
	}

	// An invocation the host refuses is reported in the result.
	v, err = nestCall(t, ctx, p, `{"command":"bad/name"}`)
	if err != nil || !strings.Contains(v.Error, "invalid") || !strings.Contains(v.Error, "may not hold '/'") {
		t.Fatalf("%+v, %v", v, err)
	}
}

// A nested wait ends with the caller's deadline or cancel: the Nester is
// given the call's context, and the guest is stopped at once.
func TestInvokeHonoursTheCallContext(t *testing.T) {
	e := nestEngine(t)
	entered := make(chan struct{}, 1)
	e.SetNester(NesterFunc(func(ctx context.Context, c Caller, inv *abi.Invocation) *abi.InvocationResult {
		entered <- struct{}{}
		<-ctx.Done() // a well-behaved Nester returns when ctx is done
		return &abi.InvocationResult{Failure: abi.ReasonCanceled, Message: ctx.Err().Error()}
	}))
	p := loadNest(t, e)

	// On a loaded machine the guest may see its deadline pass before it
	// asks the host (the SDK refuses a call from a done context, and the
	// guest answers that): the host was not asked, so try again with more
	// time, until the deadline finds the guest waiting in the Nester.
	for timeout := 150 * time.Millisecond; ; timeout *= 2 {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		start := time.Now()
		v, err := nestCall(t, ctx, p, `{"command":"spin"}`)
		took := time.Since(start)
		cancel()
		select {
		case <-entered:
		default:
			if (err != nil && !errors.Is(err, KindDeadline)) || (err == nil && !strings.Contains(v.Error, "deadline")) || timeout > 20*time.Second {
				t.Fatalf("the Nester was not asked: %+v, %v after %v", v, err, took)
			}
			continue
		}
		if !errors.Is(err, KindDeadline) || took > 30*time.Second { // the guest spins forever
			t.Fatalf("deadline: %+v, %v after %v", v, err, took)
		}
		break
	}
	cut := p.Stats().Replaced // the one found waiting, and any cut before it asked

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-entered; cancel() }()
	start := time.Now()
	_, err := nestCall(t, ctx, p, `{"command":"spin"}`)
	if took := time.Since(start); !errors.Is(err, KindCanceled) || took > 30*time.Second { // the guest spins forever
		t.Fatalf("cancel: %v after %v", err, took)
	}
	if st := p.Stats(); cut < 1 || st.Replaced != cut+1 {
		t.Fatalf("both cut instances are discarded: %d, then %+v", cut, st)
	}
}

// pastDeadlineCtx is a context whose deadline passes when the test says so
// and whose Done never closes: it stands for a busy machine on which the
// deadline has passed but neither the context's timer nor wazero's watcher
// has run yet, so that only the host function's own check can cut the call.
type pastDeadlineCtx struct {
	context.Context
	passed atomic.Bool
}

func (c *pastDeadlineCtx) Deadline() (time.Time, bool) {
	if c.passed.Load() {
		return time.Now().Add(-time.Second), true
	}
	return time.Now().Add(time.Hour), true
}

// A nested call that returns after its caller's deadline passed ends the
// call as cut: the guest never sees the answer and cannot reply with it.
// (CI once saw the guest answer with the invoke's refusal, and the call
// succeed, before wazero's watcher closed the module.)
func TestNestedReturnAfterTheDeadlineEndsTheCall(t *testing.T) {
	e := nestEngine(t)
	ctx := &pastDeadlineCtx{Context: context.Background()}
	asked := 0
	e.SetNester(NesterFunc(func(context.Context, Caller, *abi.Invocation) *abi.InvocationResult {
		asked++
		ctx.passed.Store(true)
		return &abi.InvocationResult{Branches: []abi.BranchResult{{Outcome: abi.OutcomeDone, Status: abi.StatusOK, Payload: []byte("late")}}}
	}))
	p := loadNest(t, e)
	v, err := nestCall(t, ctx, p, `{"command":"echo"}`)
	if asked != 1 || !errors.Is(err, KindDeadline) {
		t.Fatalf("asked %d times; the call answered %+v, %v, want it cut at its deadline", asked, v, err)
	}
}
