package wasm

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/httpout"
	"github.com/cmdhost/cmdhost/internal/logx"
	"github.com/cmdhost/cmdhost/internal/ratelog"
	"github.com/cmdhost/cmdhost/internal/setting"
	"github.com/cmdhost/cmdhost/internal/wasm/meter"
)

// Config configures an Engine.
type Config struct {
	// Logger receives the engine's and the guests' log lines; nil discards.
	Logger *slog.Logger
	// CacheDir holds wazero's on-disk compilation cache, shared by every
	// plugin; "" keeps compiled code in memory for the engine's lifetime.
	CacheDir string
	// VarLimits bound each plugin's variables.
	VarLimits VarLimits
	// MaxGuestMemory bounds the memory of all the engine's instances
	// together, in bytes (budget.go); 0: DefaultMaxGuestMemory, NoBound:
	// no bound.
	MaxGuestMemory int64
}

// NoBound, in a field that bounds something, turns the bound off
// (setting.Off).
const NoBound = setting.Off

// NoTimeout, in a field that is a timeout, turns the timeout off: it never
// fires (setting.Off).
const NoTimeout = setting.Off

// withDefaults resolves the zero fields (package setting's rule).
func (c Config) withDefaults() Config {
	c.Logger = logx.OrDiscard(c.Logger)
	c.MaxGuestMemory = setting.Or(c.MaxGuestMemory, DefaultMaxGuestMemory)
	return c
}

// Engine loads plugins. It owns what outlives one plugin version: the
// compilation cache and each plugin's variables.
type Engine struct {
	log       *slog.Logger
	cache     wazero.CompilationCache
	varLimits VarLimits

	nester    atomic.Pointer[nesterBox]    // SetNester
	publisher atomic.Pointer[publisherBox] // SetPublisher
	budget    *memoryBudget

	mu      sync.Mutex
	vars    map[string]*Vars     // by plugin name; survive instances and versions
	plugins map[*Plugin]struct{} // loaded and not closed
	// poolsBytes is what the loaded plugins' pools hold when full
	// (register): a sum kept, since a start that summed them at every
	// load cost N² (BENCHMARKS.md, "Where a start's time goes").
	poolsBytes int64
	// overBudget: their pools can hold more than the budget (said once
	// when it became so, register)
	overBudget bool
	// budgetFull limits warnBudgetFull's lines to one a minute.
	budgetFull ratelog.Limiter
	// httpStats count each plugin's HTTP requests, by plugin name
	// (httpfns.go): they survive versions.
	httpStats map[string]*httpout.Stats

	// withIdle are the plugins that have idle instances, whose closing
	// makes room in the budget (makeRoom); kept by their pools
	// (noteIdle). Guarded by idleMu, taken after a pool's lock.
	idleMu   sync.Mutex
	withIdle map[*Plugin]struct{}
}

// NewEngine returns an Engine; Close releases its compilation cache.
func NewEngine(cfg Config) (*Engine, error) {
	cfg = cfg.withDefaults()
	e := &Engine{log: cfg.Logger, varLimits: cfg.VarLimits, vars: make(map[string]*Vars), plugins: make(map[*Plugin]struct{}),
		withIdle: make(map[*Plugin]struct{}),
		budget:   &memoryBudget{limit: cfg.MaxGuestMemory}, budgetFull: ratelog.Limiter{Interval: time.Minute}}
	if cfg.CacheDir == "" {
		e.cache = wazero.NewCompilationCache()
	} else {
		c, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("compilation cache in %s: %w", cfg.CacheDir, err)
		}
		e.cache = c
	}
	return e, nil
}

// Close releases the compilation cache. Close plugins first.
func (e *Engine) Close(ctx context.Context) error { return e.cache.Close(ctx) }

// Vars returns the variables of the named plugin, creating them empty.
func (e *Engine) Vars(plugin string) *Vars {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.vars[plugin]
	if !ok {
		v = newVars(e.varLimits)
		e.vars[plugin] = v
	}
	return v
}

// PluginConfig configures one plugin version. Zero fields take defaults.
type PluginConfig struct {
	// PoolSize bounds the plugin's instances, hence its concurrent calls.
	// Default 4.
	PoolSize int
	// MemoryPages is each instance's memory limit in 64 KiB pages; default
	// 1024 (64 MiB). Go guests need at least their declared minimum
	// (about 32–40 pages).
	MemoryPages uint32
	// TableEntries bounds the entries of all of each instance's tables
	// together (8 bytes an entry); default DefaultTableEntries (65,536:
	// 512 KiB). A module whose tables declare more is refused at load; a
	// table.grow past the limit returns -1 to the guest.
	TableEntries uint32
	// MaxModuleBytes bounds the module's size; default
	// DefaultMaxModuleBytes (32 MiB). Compiling costs several times a
	// module's size in memory.
	MaxModuleBytes int
	// MaxResponseBytes bounds an encoded response (payload, content type
	// and metadata); default DefaultMaxResponseBytes, at most
	// MaxResponseBytesLimit. Every reply may be held in the dedup store and
	// the reuse cache, and must fit in one MQTT packet.
	MaxResponseBytes int
	// LoadTimeout bounds the guest's code at load: its initializer and
	// describe export. Default 10 s.
	LoadTimeout time.Duration
	// CompileTimeout bounds the compilation of the module: past it, the
	// compiler stops at the end of the function it is compiling and the
	// module is refused. Default DefaultCompileTimeout; NoTimeout: none.
	CompileTimeout time.Duration
	// Grants say what the guest may reach; the zero value grants nothing.
	Grants Grants
	// Config holds the operator's values the guest reads with config_get.
	Config map[string]string
	// IdleTimeout releases the plugin's instances (the compiled module
	// stays) once no call has run for this long, measured from the end of
	// the last call, or from the load when there was none; the next call
	// makes a fresh instance (~4 ms for a Go guest). No timer runs while a
	// call does. Default DefaultIdleTimeout; NoTimeout never releases.
	IdleTimeout time.Duration
	// Clock drives the idle timer and the output limits' refill; nil is
	// the system clock. Tests inject a fake one (testkit.Clock) to test
	// idle release and output limits without sleeping.
	Clock clock.Clock
	// Output bounds the plugin's stdout, stderr and log calls.
	Output OutputLimits
	// Fuel is the budget of each call of the plugin, in units of work
	// (fuel.go); a call that uses it up ends with KindFuel. 0: none.
	Fuel int64
	// CommandFuel is the budget of each call of a command, by name; it
	// overrides Fuel, and NoBound gives the command none. nil: not set.
	CommandFuel map[string]int64
	// CountFuel counts the fuel of calls that have no budget too (cmdhost
	// call --fuel 0). A plugin with a budget always counts.
	CountFuel bool
}

// DefaultPoolSize is PluginConfig.PoolSize when it is not set.
const DefaultPoolSize = 4

// DefaultCompileTimeout is PluginConfig.CompileTimeout when it is not
// set: 60 times what a Go guest of 3 MB takes to compile (~1 s), and 4 times
// what it takes under the race detector. What a module may cost to compile
// is bounded by its shape as well (modlimits.go, compileWeight).
const DefaultCompileTimeout = time.Minute

// DefaultIdleTimeout is PluginConfig.IdleTimeout when it is not set (the
// default of serve --idle-timeout).
const DefaultIdleTimeout = 5 * time.Minute

// Bounds of PluginConfig.MaxResponseBytes. The limit keeps a reply within
// MQTT's largest packet (256 MiB) with room for its properties.
const (
	DefaultMaxResponseBytes = 4 << 20
	MaxResponseBytesLimit   = 255 << 20
)

// withDefaults resolves the zero fields (package setting's rule).
func (c PluginConfig) withDefaults() PluginConfig {
	if c.PoolSize <= 0 {
		c.PoolSize = DefaultPoolSize
	}
	if c.MemoryPages == 0 {
		c.MemoryPages = 1024
	}
	if c.TableEntries == 0 {
		c.TableEntries = DefaultTableEntries
	}
	if c.MaxModuleBytes <= 0 {
		c.MaxModuleBytes = DefaultMaxModuleBytes
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	c.MaxResponseBytes = min(c.MaxResponseBytes, MaxResponseBytesLimit)
	if c.LoadTimeout <= 0 {
		c.LoadTimeout = 10 * time.Second
	}
	c.IdleTimeout = setting.Or(c.IdleTimeout, DefaultIdleTimeout)
	c.CompileTimeout = setting.Or(c.CompileTimeout, DefaultCompileTimeout)
	c.Clock = clock.OrSystem(c.Clock)
	return c
}

// Load compiles, checks and warms one plugin version: it compiles the
// module in a runtime of its own (memory limits are per runtime), checks
// its imports and exports, makes one instance, checks its ABI version and
// reads its description. Any failure is an error that names the problem,
// and nothing is left running. cfg.LoadTimeout bounds the guest's own code
// (its initializer and describe export); ctx bounds the whole load.
func (e *Engine) Load(ctx context.Context, name string, wasm []byte, cfg PluginConfig) (p *Plugin, err error) {
	cfg = cfg.withDefaults()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		// A plugin that counts fuel is metered, and its tick checks the
		// deadline (metering.go); any other runs with wazero's own check,
		// which cmdhost's copy makes an inline test of a flag (doc.go).
		WithCloseOnContextDone(!cfg.countsFuel()).
		WithMemoryLimitPages(cfg.MemoryPages).
		WithCompilationCache(e.cache))
	var mounts []*mountFS
	var httpFns *httpFuncs
	var code compiledCode
	defer func() {
		if err != nil {
			_ = rt.Close(context.Background())
			code.close()
			closeMounts(mounts)
			httpFns.close()
			err = fmt.Errorf("loading plugin %s: %w", name, err)
		}
	}()

	p = &Plugin{name: name, cfg: cfg, rt: rt, log: e.log, engine: e, pool: newPool(cfg.PoolSize), meter: &meterHost{},
		countsFuel: cfg.countsFuel()}
	p.pool.onIdle = func(has bool) { e.noteIdle(p, has) }
	p.idle = newIdleTimer(cfg.IdleTimeout, cfg.Clock, p.releaseForIdle)
	p.output = newOutputGate(cfg.Output, cfg.Clock.Now, e.log, name)
	if mounts, err = cfg.Grants.openMounts(name, e.log, &p.stats.mountRefused); err != nil {
		return nil, err
	}
	p.mounts = mounts
	if httpFns, err = e.newHTTPFuncs(name, cfg.Grants.HTTP); err != nil {
		return nil, err
	}
	p.http = httpFns
	host := &hostFuncs{plugin: name, output: p.output, config: cloneMap(cfg.Config), vars: p.Vars, nester: e.currentNester,
		state: &stateFuncs{plugin: name, grant: cfg.Grants.State, log: e.log, denied: ratelog.Limiter{Interval: time.Second},
			ops: &p.stats.stateOps},
		publish: newPublishFuncs(name, cfg.Grants.Publish, e.currentPublisher, e.log), http: httpFns}
	var meter *meterHost
	if p.countsFuel {
		meter = p.meter
	}
	if p.compiled, err = compile(ctx, rt, wasm, cfg); err != nil {
		return nil, err
	}
	code = append(code, p.compiled)
	p.instanceCost = instanceCost(wasm, p.compiled, cfg)
	if l := e.budget.limit; l > 0 && p.instanceCost > l {
		return nil, fmt.Errorf("one instance needs %s (its memory limit, tables and the runtime's overhead), more than the whole guest memory budget of %s: raise the budget (serve --max-guest-memory) or lower the plugin's memory limit",
			mib(p.instanceCost), mib(l))
	}
	provided, err := hostExports(host, meter)
	if err != nil {
		return nil, err
	}
	if p.caps, err = checkImports(p.compiled, provided); err != nil {
		return nil, err
	}
	if err = checkExports(p.compiled); err != nil {
		return nil, err
	}
	if err = instantiateHostModules(ctx, rt, host, meter, importedModules(p.compiled), &code); err != nil {
		return nil, err
	}
	p.code = code

	guestCtx, cancel := context.WithTimeout(ctx, cfg.LoadTimeout)
	defer cancel()
	inst, err := p.newInstance(guestCtx, true)
	if err == nil {
		if p.desc, err = p.describe(guestCtx, inst); err != nil {
			inst.close(p)
		}
	}
	if err != nil {
		// The tick may see the deadline pass before the context's timer fires.
		if code, stopped := stopCode(guestCtx); stopped && code == sys.ExitCodeDeadlineExceeded && ctx.Err() == nil {
			return nil, fmt.Errorf("the module's %s or %s did not finish within the load timeout of %v: %w",
				abi.ExportInitialize, abi.ExportDescribe, cfg.LoadTimeout, err)
		}
		return nil, err
	}
	p.pool.putIdle(inst) // warm: the first call needs no instantiation
	e.register(p)
	p.idle.start() // a plugin never called is released too
	return p, nil
}

// compile checks a guest module against the plugin's limits and compiles
// it, with errors that say what to fix. What it compiles is the module
// with its tables bounded (boundModule). cfg.CompileTimeout bounds the
// compilation's CPU time (compilebudget.go): cmdhost's copy of wazero
// abandons it between two functions once its context is done
// (third_party/wazero/CMDHOST.md).
func compile(ctx context.Context, rt wazero.Runtime, wasm []byte, cfg PluginConfig) (_ wazero.CompiledModule, err error) {
	parent := ctx
	if cfg.CompileTimeout > 0 {
		var stop func()
		ctx, stop = withCompileBudget(ctx, cfg.CompileTimeout) // CPU time (compilebudget.go)
		defer stop()
	}
	defer func() {
		if err != nil && ctx.Err() != nil && parent.Err() == nil {
			err = fmt.Errorf("the module took longer than the compile timeout of %v (of a core's time) to compile: make it smaller (%w)", cfg.CompileTimeout, err)
		}
	}()
	if len(wasm) == 0 {
		return nil, errors.New("empty module (0 bytes): not a WebAssembly module")
	}
	if err := checkModuleSize(int64(len(wasm)), cfg.MaxModuleBytes); err != nil {
		return nil, err
	}
	wasm, err = boundModule(wasm, cfg.TableEntries)
	if err != nil {
		return nil, err
	}
	if cfg.countsFuel() {
		bounded := wasm
		wasm, err = meterModule(bounded, func() error {
			c, err := rt.CompileModule(ctx, bounded)
			if err == nil {
				_ = c.Close(ctx)
			}
			return compileError(err, cfg)
		})
		if err != nil {
			return nil, err
		}
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		return nil, compileError(err, cfg)
	}
	return compiled, nil
}

// compileError says what wazero's refusal of a module means for its
// author; nil for nil.
func compileError(err error, cfg PluginConfig) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled): // abandoned (compile)
		return err
	case strings.Contains(err.Error(), "over limit of"):
		return fmt.Errorf("the module's minimum memory is above the plugin's memory limit of %d pages (%d MiB): raise the memory limit (%w)",
			cfg.MemoryPages, uint64(cfg.MemoryPages)*pageSize>>20, err)
	}
	return fmt.Errorf("not a valid WebAssembly module for this host: %w", err)
}

// instantiateHostModules instantiates in rt the host modules among cmdhost,
// metering (m, when not nil) and WASI that the guest imports (imported):
// only those. A module's functions cost memory in every runtime (~33 KiB
// for WASI's), and a guest that imports none of WASI, as the WAT echo,
// has no use for them (BENCHMARKS.md, "What held ~207 KiB per plugin").
// A host module's system context is never used (its functions reach the
// calling instance's); the shared crypto/rand.Reader spares it the
// math/rand state of ~5 KiB wazero would give it. Each module compiled is
// added to code, which the plugin closes with its runtime.
func instantiateHostModules(ctx context.Context, rt wazero.Runtime, host *hostFuncs, m *meterHost, imported map[string]bool, code *compiledCode) error {
	var builders []wazero.HostModuleBuilder
	if imported[abi.HostModule] {
		builders = append(builders, host.builder(rt))
	}
	if m != nil && imported[meter.ImportModule] {
		builders = append(builders, m.builder(rt))
	}
	if imported[wasiModule] {
		builders = append(builders, wasiBuilder(rt))
	}
	for _, b := range builders {
		compiled, err := b.Compile(ctx)
		if err != nil {
			return fmt.Errorf("compiling host module: %w", err)
		}
		*code = append(*code, compiled)
		if _, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithRandSource(rand.Reader)); err != nil {
			return fmt.Errorf("instantiating host module: %w", err)
		}
	}
	return nil
}

func wasiBuilder(rt wazero.Runtime) wazero.HostModuleBuilder {
	wasi := rt.NewHostModuleBuilder(wasiModule)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(wasi)
	return wasi
}

// importedModules returns the names of the modules the guest imports
// functions from.
func importedModules(guest wazero.CompiledModule) map[string]bool {
	out := map[string]bool{}
	for _, f := range guest.ImportedFunctions() {
		mod, _, _ := f.Import()
		out[mod] = true
	}
	return out
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

var errClosed = errors.New("plugin is closed")
