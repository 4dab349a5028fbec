package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/commands"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// Issue acceptance: reload under continuous load through a real broker.
// While 8 invokers send echo requests (≥ 5,000 in all), the plugin file
// echo.wasm is replaced 7 times, alternately by echo-v2 and echo, each
// time with new content (a custom section tagged with the reload's
// number), the way installers should (temporary file, then rename). No
// request may fail or be lost; a request sent after a swap and answered
// before the next one began must get the new version's reply; both
// versions' replies are seen; a last batch after the final reload gets
// the final version's reply only; every replaced version is closed.
func TestReloadUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("reload under load: seconds of traffic per broker")
	}
	v1, err := os.ReadFile(filepath.Join(pluginDir, "echo.wasm"))
	if err != nil {
		t.Fatalf("%v (run `make plugins`)", err)
	}
	v2, err := os.ReadFile("../testdata/plugins-alt/echo-v2.wasm")
	if err != nil {
		t.Fatalf("%v (run `make plugins`)", err)
	}
	// The content of each reload: echo-v2 for odd ones, echo for even
	// ones, tagged with the reload's number. Each is loaded once here: the
	// engine accepts a module with a custom section appended, whose code
	// is unchanged; and this fills the compilation cache, so that a swap
	// under load is not a cold compile (~15 s under -race on 2 CPUs shared
	// with the load, ~0.5 s from the cache).
	contents := make([][]byte, reloadCount+1)
	contents[0] = v1
	var wg sync.WaitGroup
	errs := make([]error, reloadCount+1)
	for k := 1; k <= reloadCount; k++ {
		base, want := v1, "x"
		if k%2 == 1 {
			base, want = v2, "v2:x"
		}
		contents[k] = withCustomSection(base, "cmdhost-reload-test", []byte(fmt.Sprintf("reload %d", k)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := sharedEngine(t).Load(context.Background(), fmt.Sprintf("echo-%d@%s", k, t.Name()), contents[k], wasm.PluginConfig{PoolSize: 1})
			if err != nil {
				errs[k] = fmt.Errorf("reload %d: a module with a custom section appended does not load: %w", k, err)
				return
			}
			defer p.Close(context.Background())
			resp, err := p.Invoke(context.Background(), &abi.Request{Command: "echo", Payload: []byte("x"), ContentType: "text/plain"})
			if err != nil || string(resp.Payload) != want {
				errs[k] = fmt.Errorf("reload %d: %+v %v, want %q", k, resp, err, want)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) { reloadUnderLoad(t, u, contents) })
}

const (
	reloadWorkers     = 8
	reloadCount       = 7 // odd: the final version is echo-v2
	reloadMinRequests = 5000
	reloadBetween     = 650 // requests answered between two reloads, at least
	reloadFinalBatch  = 400
	reloadPool        = 4
	reloadCallTimeout = 10 * time.Second
)

// reloadUnderLoad serves contents[0], then installs contents[1:] one
// after the other under load.
func reloadUnderLoad(t *testing.T, u *url.URL, contents [][]byte) {
	start := time.Now()
	logs := &testkit.LogBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	defer func() {
		if t.Failed() {
			t.Logf("logs:\n%s", logs.String())
		}
	}()

	dir := t.TempDir()
	testkit.Install(t, dir, "echo.wasm", contents[0])
	mgr := plugins.NewManager(plugins.Config{Dir: dir, Engine: sharedEngine(t), Logger: log,
		Debounce: 100 * time.Millisecond, Plugin: wasm.PluginConfig{PoolSize: reloadPool},
		Defaults: plugins.Defaults{ExecTimeout: reloadCallTimeout}})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := mgr.Close(ctx); err != nil {
			t.Errorf("closing the manager: %v", err)
		}
	}()
	if errs := mgr.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatalf("LoadAll: %v", errs)
	}

	// Wired as serve does it.
	served := func() []rpc.Command { return commands.Served(mgr, false) }
	exec, err := rpc.NewExecutor(rpc.Config{
		ExecutorID: "reload-host", Session: session.Config{ClientID: "reload-host-" + strings.ReplaceAll(t.Name(), "/", "-"), Broker: u,
			ReconnectDelay: 50 * time.Millisecond}, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}, served())
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := exec.Stop(ctx); err != nil {
			t.Errorf("stopping the executor: %v", err)
		}
	}()

	ctx, cancel := context.WithCancel(context.Background())
	var bg sync.WaitGroup
	defer bg.Wait()
	defer cancel()
	var resyncs atomic.Int64
	changed := make(chan struct{}, 1)
	mgr.OnChange(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	bg.Add(2)
	go func() {
		defer bg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-changed:
				resyncs.Add(1)
				if err := exec.SetCommands(ctx, served()); err != nil && ctx.Err() == nil {
					t.Errorf("SetCommands: %v", err)
				}
			}
		}
	}()
	go func() {
		defer bg.Done()
		if err := mgr.Watch(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("Watch: %v", err)
		}
	}()

	// The invokers: one each, connected before the load starts.
	invs := make([]*rpc.Invoker, reloadWorkers)
	for i := range invs {
		inv, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: session.Config{Broker: u,
			ClientID: fmt.Sprintf("reload-inv-%d-%s", i, strings.ReplaceAll(t.Name(), "/", "-"))}})
		if err != nil {
			t.Fatal(err)
		}
		invs[i] = inv
		defer inv.Close()
	}

	// phase is 2*epoch, plus 1 while a reload is under way (from the
	// install until Status shows the new digest). Epoch k serves echo
	// when k is even, echo-v2 when odd. A request whose phase was the
	// same stable value when it was sent and when it was answered must
	// get that epoch's reply.
	var phase atomic.Uint64
	tally := &reloadTally{}
	reported := false
	defer func() { // a test stopped early shows the failures met so far
		if !reported {
			tally.mu.Lock()
			defer tally.mu.Unlock()
			for _, f := range tally.failures {
				t.Error(f)
			}
		}
	}()
	stop := make(chan struct{})
	var workers sync.WaitGroup
	for w := range reloadWorkers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				tally.call(invs[w], fmt.Sprintf("w%d-r%d", w, i), &phase, false)
			}
		}()
	}
	stopWorkers := sync.OnceFunc(func() { close(stop); workers.Wait() })
	defer stopWorkers()

	// The reloads.
	status := func() plugins.PluginStatus {
		for _, s := range mgr.Status() {
			if s.Name == "echo" {
				return s
			}
		}
		return plugins.PluginStatus{}
	}
	waitRequests := func(n int64, what string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for tally.done.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d requests answered in 60 s, want %d", what, tally.done.Load(), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitRequests(reloadBetween, "before the first reload")
	prev := digestOf(contents[0])
	digestChanges := 0
	var swapTimes []time.Duration
	for k := 1; k <= reloadCount; k++ {
		content := contents[k]
		want := digestOf(content)
		if want == prev {
			t.Fatalf("reload %d: the content did not change", k)
		}
		failuresBefore := status().LoadFailures
		phase.Store(uint64(2*(k-1) + 1))
		installAt := time.Now()
		log.Debug("test: installing", "reload", k, "digest", want[:12])
		testkit.Install(t, dir, "echo.wasm", content)
		deadline := installAt.Add(30 * time.Second)
		for {
			s := status()
			if s.Digest == want && s.State == plugins.StateServing {
				break
			}
			if s.LoadFailures > failuresBefore {
				t.Fatalf("reload %d failed to load: %s", k, s.LastError)
			}
			if time.Now().After(deadline) {
				t.Fatalf("reload %d: Status does not show the new digest after 30 s: %+v", k, s)
			}
			time.Sleep(2 * time.Millisecond)
		}
		phase.Store(uint64(2 * k))
		swapTimes = append(swapTimes, time.Since(installAt).Round(time.Millisecond))
		digestChanges++
		prev = want
		target := tally.done.Load() + reloadBetween
		if k == reloadCount {
			target = max(target, reloadMinRequests)
		}
		waitRequests(target, fmt.Sprintf("after reload %d", k))
	}
	stopWorkers()
	loadDone := tally.done.Load()
	loadTook := time.Since(start)

	// A last batch, after the final reload settled: the final version only.
	var batch sync.WaitGroup
	for w := range reloadWorkers {
		batch.Add(1)
		go func() {
			defer batch.Done()
			for i := range reloadFinalBatch / reloadWorkers {
				tally.call(invs[w], fmt.Sprintf("final-w%d-r%d", w, i), &phase, true)
			}
		}()
	}
	batch.Wait()

	// Every replaced version drains and closes.
	deadline := time.Now().Add(15 * time.Second)
	for status().Draining > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}

	tally.mu.Lock()
	defer tally.mu.Unlock()
	reported = true
	st := mgr.Status()
	t.Logf("%d requests (%d under reloads + %d final batch) in %v: %d echo, %d echo-v2 replies; %d failures (%d lost, %d error status, %d wrong reply, %d stale version); %d reloads, swap seen after %v; %d OnChange re-syncs",
		tally.done.Load(), loadDone, tally.done.Load()-loadDone, time.Since(start).Round(time.Millisecond),
		tally.v1.Load(), tally.v2.Load(), len(tally.failures), tally.lost, tally.status, tally.wrong, tally.stale,
		digestChanges, swapTimes, resyncs.Load())
	t.Logf("load phase took %v; status: %+v", loadTook.Round(time.Millisecond), st)
	for i, f := range tally.failures {
		if i == 200 {
			t.Errorf("... and %d more failures", len(tally.failures)-i)
			break
		}
		t.Error(f)
	}
	if n := tally.done.Load(); n < reloadMinRequests+reloadFinalBatch {
		t.Errorf("%d requests, want at least %d", n, reloadMinRequests+reloadFinalBatch)
	}
	if tally.v1.Load() == 0 || tally.v2.Load() == 0 {
		t.Errorf("replies of both versions must be seen: echo %d, echo-v2 %d", tally.v1.Load(), tally.v2.Load())
	}
	if tally.finalOK.Load() != reloadFinalBatch {
		t.Errorf("final batch: %d of %d got the final version's reply", tally.finalOK.Load(), reloadFinalBatch)
	}
	if len(st) != 1 {
		t.Fatalf("Status lists %d plugins, want echo only: %+v", len(st), st)
	}
	s := st[0]
	if digestChanges < 5 || s.Reloads != reloadCount || s.Loads != 1 || s.LoadFailures != 0 {
		t.Errorf("want %d reloads (≥ 5), one load, no load failure: %d digest changes, Status %+v", reloadCount, digestChanges, s)
	}
	if s.Digest != prev || s.State != plugins.StateServing {
		t.Errorf("the final version must serve: %+v", s)
	}
	if s.Draining != 0 || s.Instances > reloadPool {
		t.Errorf("every replaced version must be closed: %d draining, %d instances alive (pool %d)", s.Draining, s.Instances, reloadPool)
	}
	out := logs.String()
	if n := strings.Count(out, "old plugin version drained and closed"); n != reloadCount {
		t.Errorf("%d replaced versions drained and closed (log), want %d", n, reloadCount)
	}
	if strings.Contains(out, "did not drain in time") {
		t.Error("a replaced version did not drain in time")
	}
	// Calls on a version already closed (KindClosed, retried on the new
	// one by ResolvingHandler) count as plugin failures; every other
	// failure would be a reply above.
	t.Logf("plugin calls %d (requests %d), plugin call failures %d (closed versions, retried)", s.Calls, tally.done.Load(), s.Failures)
}

// reloadTally counts the replies of TestReloadUnderLoad.
type reloadTally struct {
	done, v1, v2, finalOK atomic.Int64

	mu                         sync.Mutex
	failures                   []string
	lost, status, wrong, stale int
}

// call sends one echo request and checks its reply. final: it must be the
// final version's.
func (tl *reloadTally) call(inv *rpc.Invoker, payload string, phase *atomic.Uint64, final bool) {
	before := phase.Load()
	sent := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), reloadCallTimeout+5*time.Second)
	r, err := inv.Invoke(ctx, rpc.Call{Topic: "rpc/reload-host/echo", Payload: []byte(payload), ContentType: "text/plain", Timeout: reloadCallTimeout})
	cancel()
	after := phase.Load()
	tl.done.Add(1)
	fail := func(kind *int, format string, args ...any) {
		tl.mu.Lock()
		defer tl.mu.Unlock()
		*kind++
		tl.failures = append(tl.failures, fmt.Sprintf("%s (sent %s, phase %d→%d, took %v): ", payload,
			sent.Format("15:04:05.000"), before, after, time.Since(sent).Round(time.Millisecond))+fmt.Sprintf(format, args...))
	}
	switch {
	case err != nil:
		fail(&tl.lost, "%v", err)
		return
	case r.Status != abi.StatusOK:
		fail(&tl.status, "status %d %q [%s=%q]", r.Status, r.Message, r.PropName, r.PropValue)
		return
	}
	var v int
	switch string(r.Payload) {
	case payload:
		v = 1
		tl.v1.Add(1)
	case "v2:" + payload:
		v = 2
		tl.v2.Add(1)
	default:
		fail(&tl.wrong, "reply %q", r.Payload)
		return
	}
	// In a stable phase 2k, epoch k serves echo (k even) or echo-v2.
	if before == after && before%2 == 0 {
		want := 1 + int(before/2)%2
		if v != want {
			fail(&tl.stale, "reply %q from echo v%d, but v%d served during the whole call", r.Payload, v, want)
			return
		}
	}
	if final {
		if before != after || before != 2*reloadCount {
			fail(&tl.stale, "final batch sent in phase %d→%d, want %d", before, after, 2*reloadCount)
			return
		}
		tl.finalOK.Add(1)
	}
}

// withCustomSection returns module with a custom section appended (id 0,
// size, name, payload; LEB128 sizes): other content, the same code.
func withCustomSection(module []byte, name string, payload []byte) []byte {
	body := appendULEB128(nil, uint64(len(name)))
	body = append(body, name...)
	body = append(body, payload...)
	out := append([]byte(nil), module...)
	out = append(out, 0)
	out = appendULEB128(out, uint64(len(body)))
	return append(out, body...)
}

func appendULEB128(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
