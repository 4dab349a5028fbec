package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLogSink(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	Multi(nil, Log(log)).Emit(Finish(Event{Kind: KindTimeout, Command: "spin", Type: TypeExecution,
		Policy: PolicyRetry, Budget: 2 * time.Second, Elapsed: 2001 * time.Millisecond, Attempt: 2, Digest: "abc"}))
	Log(log).Emit(Event{Kind: KindBudgetWarning, Command: "spin", Type: TypeExpiry})
	out := buf.String()
	for _, want := range []string{"level=INFO msg=timeout command=spin type=execution budget=2s", "policy=retry", "digest=abc", "attempt=2",
		"level=WARN msg=budget_warning command=spin type=expiry"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

func TestPublisherSendsJSONInOrderAndDropsWhenFull(t *testing.T) {
	var mu sync.Mutex
	var got []Event
	gate := make(chan struct{})
	p := NewPublisher(func(ctx context.Context, payload []byte) error {
		<-gate
		var ev Event
		if err := json.Unmarshal(payload, &ev); err != nil {
			return err
		}
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
		if ev.Command == "fail" {
			return errors.New("broker gone")
		}
		return nil
	})
	// The first is taken by the publishing goroutine (blocked on gate)
	// or waits in the queue; fill the queue past its bound.
	total := DefaultQueue + 10
	for i := range total {
		cmd := "c"
		if i == 0 {
			cmd = "fail"
		}
		p.Emit(Finish(Event{Kind: KindTimeout, Command: cmd, Type: TypeQueue, Attempt: i + 1, Budget: time.Second}))
	}
	if d := p.Dropped(); d < 9 || d > 10 {
		t.Fatalf("dropped %d, want 9 or 10 (queue bound %d)", d, DefaultQueue)
	}
	close(gate)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	p.Emit(Event{}) // after Close: dropped, no panic
	mu.Lock()
	defer mu.Unlock()
	if int64(len(got))+p.Dropped() != int64(total)+1 {
		t.Fatalf("published %d + dropped %d != emitted %d", len(got), p.Dropped(), total+1)
	}
	for i, ev := range got {
		if ev.Attempt != i+1 {
			t.Fatalf("event %d has attempt %d: out of order", i, ev.Attempt)
		}
	}
	if got[0].BudgetMS != 1000 || got[0].Kind != KindTimeout || got[0].Time.IsZero() {
		t.Fatalf("JSON form %+v", got[0])
	}
	if p.Failed() != 1 {
		t.Fatalf("failed %d, want 1", p.Failed())
	}
}
