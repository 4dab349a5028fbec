package nested_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/nested"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/wasmtest"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

const pluginDir = "../../testdata/plugins"

func ctxT(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// nestHost is one host of the nested-invocation tests: an engine of its
// own (an engine's Nester serves all its plugins), some test plugins
// loaded from the shared compilation cache, and nested Calls serving them.
type nestHost struct {
	t        testing.TB
	id       string
	engine   *wasm.Engine
	plugins  map[string]*wasm.Plugin // by file name
	resolver commandMap
	events   *eventLog
}

// commandMap resolves each command to the plugin declaring it.
type commandMap map[string]*wasm.Plugin

func (m commandMap) Lookup(command string) (*wasm.Plugin, bool) {
	p, ok := m[command]
	return p, ok
}

func newNestHost(t testing.TB, id string, files ...string) *nestHost {
	t.Helper()
	return newNestHostWith(t, id, wasm.Config{}, wasm.PluginConfig{PoolSize: 4}, files...)
}

// newNestHostWith is newNestHost with an engine and plugins configured so.
func newNestHostWith(t testing.TB, id string, ecfg wasm.Config, pcfg wasm.PluginConfig, files ...string) *nestHost {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	e, err := wasmtest.NewEngine(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	h := &nestHost{t: t, id: id, engine: e, plugins: map[string]*wasm.Plugin{}, resolver: commandMap{}, events: &eventLog{}}
	for _, f := range files {
		bin, err := os.ReadFile(filepath.Join(pluginDir, f+".wasm"))
		if err != nil {
			t.Fatalf("%v (run `make plugins`)", err)
		}
		p, err := e.Load(context.Background(), filepath.Base(f), bin, pcfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close(context.Background()) })
		h.plugins[f] = p
		for _, c := range p.Description().Commands {
			h.resolver[c.Name] = p
		}
	}
	h.configure(nested.Config{})
	return h
}

// configure sets the host's Nested from cfg; ExecutorID, Resolver and
// Events default to the host's.
func (h *nestHost) configure(cfg nested.Config) *nested.Calls {
	h.t.Helper()
	if cfg.ExecutorID == "" {
		cfg.ExecutorID = h.id
	}
	if cfg.Resolver == nil {
		cfg.Resolver = h.resolver
	}
	if cfg.Events == nil {
		cfg.Events = h.events
	}
	n, err := nested.New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	h.engine.SetNester(n)
	return n
}

// parentCorrelation is the correlation data of the tests' parent requests.
var parentCorrelation = []byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0x4d, 0xef, 0x81, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}

const parentCorrelationUUID = "12345678-9abc-4def-8123-456789abcdef"

// invoke calls a command of the nest plugin directly, as the executor
// would, with spec as its JSON payload and md as its metadata.
func (h *nestHost) invoke(ctx context.Context, command string, spec any, md map[string]string) (*abi.Response, error) {
	h.t.Helper()
	payload, err := json.Marshal(spec)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.plugins["nest"].Invoke(ctx, &abi.Request{Command: command, Payload: payload, ContentType: "application/json",
		Metadata: md, CorrelationID: parentCorrelation, ExecutorID: h.id})
}

// callSpec and the views mirror testdata/nest's JSON.
type callSpec struct {
	Command     string            `json:"command"`
	Executor    string            `json:"executor,omitempty"`
	Payload     string            `json:"payload,omitempty"`
	ContentType string            `json:"content_type,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	TimeoutMs   int64             `json:"timeout_ms,omitempty"`
}

type resultView struct {
	Error     string            `json:"error"`
	Outcome   string            `json:"outcome"`
	Reason    string            `json:"reason"`
	Status    int               `json:"status"`
	AppError  bool              `json:"app_error"`
	Message   string            `json:"message"`
	Payload   string            `json:"payload"`
	Metadata  map[string]string `json:"metadata"`
	ElapsedMs float64           `json:"elapsed_ms"`
	BudgetMs  float64           `json:"budget_ms"`
}

type syncSpec struct {
	Strategy  string `json:"strategy,omitempty"`
	M         uint32 `json:"m,omitempty"`
	TimeoutMs int64  `json:"timeout_ms,omitempty"`
	OnTimeout string `json:"on_timeout,omitempty"`
}

type fanSpec struct {
	Branches map[string]callSpec `json:"branches"`
	Sync     syncSpec            `json:"sync"`
}

type fanView struct {
	Error   string                `json:"error"`
	Results map[string]resultView `json:"results"`
}

// probeView is what probe-request reports about the request it got.
type probeView struct {
	Metadata     map[string]string `json:"metadata"`
	DeadlineUnix int64             `json:"deadlineUnixNano"`
	RemainingMs  int64             `json:"remainingMs"`
}

// decode returns a function that unmarshals a 200 JSON response of the
// nest plugin: decode[resultView](t)(h.invoke(...)).
func decode[T any](t testing.TB) func(*abi.Response, error) T {
	return func(resp *abi.Response, err error) T {
		t.Helper()
		var v T
		if err != nil {
			t.Fatal(err)
		}
		if resp.Code() != abi.StatusOK {
			t.Fatalf("status %d: %s", resp.Code(), resp.Message)
		}
		if err := json.Unmarshal(resp.Payload, &v); err != nil {
			t.Fatalf("%v: %s", err, resp.Payload)
		}
		return v
	}
}

// eventLog is an events.Sink that keeps what it gets.
type eventLog struct {
	mu     sync.Mutex
	events []events.Event
}

func (l *eventLog) Emit(ev events.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
}

// take returns the events of a type and forgets every event.
func (l *eventLog) take(typ string) []events.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []events.Event
	for _, ev := range l.events {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	l.events = nil
	return out
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
