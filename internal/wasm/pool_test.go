package wasm

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// Concurrent calls, a third of them cut by their deadline, on a small
// pool: every healthy call gets its own payload back, every cut instance is
// replaced, and the pool never holds more instances than its size.
func TestPoolHammer(t *testing.T) {
	const size, workers, perWorker = 3, 8, 60
	p := load(t, "sleep", PluginConfig{PoolSize: size})
	baseline := runtime.NumGoroutine()

	var over atomic.Int64
	stop := make(chan struct{})
	monitorDone := make(chan struct{})
	go func() { // samples the pool's bound while the hammer runs
		defer close(monitorDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if st := p.Stats(); st.Instances > size || st.InUse > size {
				over.Add(1)
			}
			runtime.Gosched()
		}
	}()

	var cut, ok atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				if i%3 == 2 {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
					_, err := p.Invoke(ctx, &abi.Request{Command: "sleep", Payload: []byte("5000")})
					cancel()
					if k := KindOf(err); k != KindDeadline {
						t.Errorf("a cut call: want deadline, got %v", err)
					}
					cut.Add(1)
					continue
				}
				payload := fmt.Sprintf("%d", w*1000+i)[0:1] // sleep 0–9 ms
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				resp, err := p.Invoke(ctx, &abi.Request{Command: "sleep", Payload: []byte(payload)})
				cancel()
				if err != nil || string(resp.Payload) != payload {
					t.Errorf("sleep %s: %v %v", payload, resp, err)
					continue
				}
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-monitorDone

	st := p.Stats()
	t.Logf("ok=%d cut=%d stats=%+v", ok.Load(), cut.Load(), st)
	if over.Load() != 0 {
		t.Errorf("the pool exceeded its size %d times", over.Load())
	}
	// A cut call may be cut while waiting for an instance (nothing to
	// replace) or while running (its instance replaced).
	if st.Replaced > cut.Load() || st.Replaced == 0 || st.Instances > size || st.InUse != 0 {
		t.Errorf("after the hammer: %+v (cut %d)", st, cut.Load())
	}
	if st.Calls != workers*perWorker || st.Failures != cut.Load() {
		t.Errorf("counters: %+v", st)
	}
	testkit.WaitFor(t, "the goroutines to end", func() bool { return runtime.NumGoroutine() <= baseline+2 })
}

func TestWaitingForInstanceHonoursDeadline(t *testing.T) {
	p := load(t, "sleep", PluginConfig{PoolSize: 1})
	busy, cancelBusy := context.WithCancel(context.Background())
	defer cancelBusy()
	go func() { _, _ = p.Invoke(busy, &abi.Request{Command: "sleep", Payload: []byte("60000")}) }()
	testkit.WaitFor(t, "the call to hold an instance", func() bool { return p.Stats().InUse == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := p.Invoke(ctx, &abi.Request{Command: "sleep", Payload: []byte("0")})
	if KindOf(err) != KindDeadline || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want a deadline error while waiting, got %v", err)
	}
}

// Close lets calls in flight finish, then refuses new ones.
func TestCloseDrains(t *testing.T) {
	p, err := sharedEngine.Load(context.Background(), "sleep", readPlugin(t, "sleep"), PluginConfig{PoolSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan error, 2)
	for range 2 {
		go func() {
			resp, err := p.Invoke(context.Background(), &abi.Request{Command: "sleep", Payload: []byte("200")})
			if err == nil && string(resp.Payload) != "200" {
				err = fmt.Errorf("payload %q", resp.Payload)
			}
			results <- err
		}()
	}
	testkit.WaitFor(t, "both calls to hold an instance", func() bool { return p.Stats().InUse == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	for range 2 {
		if err := <-results; err != nil {
			t.Errorf("a call in flight at close: %v", err)
		}
	}
	if _, err := call(t, p, context.Background(), "sleep", "0"); KindOf(err) != KindClosed {
		t.Fatalf("after close: want closed, got %v", err)
	}
	if st := p.Stats(); st.Instances != 0 {
		t.Fatalf("instances left after close: %+v", st)
	}
}

// A Close that runs out of patience closes the runtime, which stops a
// guest that would never finish.
func TestCloseStopsStuckCalls(t *testing.T) {
	p, err := sharedEngine.Load(context.Background(), "spin", readPlugin(t, "spin"), PluginConfig{PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := call(t, p, context.Background(), "spin", "")
		errc <- err
	}()
	testkit.WaitFor(t, "the call to hold an instance", func() bool { return p.Stats().InUse == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := p.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("close with a stuck call: want the drain deadline, got %v", err)
	}
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("the stuck call must fail")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("closing the runtime did not stop the spinning guest")
	}
}
