package wasm

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/httpout"
	"github.com/cmdhost/cmdhost/internal/wasm/meter"
)

// Grants are what a plugin may reach beyond its own memory and the cmdhost
// host functions. The zero value grants nothing: no filesystem, no
// environment variables, no network. Real wall and monotonic clocks, crypto
// random numbers and stdout/stderr (to the host log) are always given.
type Grants struct {
	// Env lists the environment variables the guest sees.
	Env map[string]string
	// Mounts are host directories the guest sees.
	Mounts []Mount
	// State is what the guest may do with the state store (stategrant.go).
	State StateGrant
	// Publish is where and how much the guest may publish (publish.go).
	Publish PublishGrant
	// HTTP is what the guest may reach over HTTP (httpfns.go).
	HTTP httpout.Grant
}

// Mount exposes a host directory to the guest. The guest cannot leave it:
// no path, symlink, "..", hard link or rename reaches outside HostDir, and
// symlinks the guest makes must point down (relative, no ".."); see
// mountFS.
type Mount struct {
	HostDir  string
	GuestDir string // absolute path inside the guest, e.g. "/data"
	ReadOnly bool
}

// moduleConfig applies g to a guest module's configuration; mounts are
// g.Mounts opened (openMounts), shared by the plugin's instances.
func (g Grants) moduleConfig(cfg wazero.ModuleConfig, mounts []*mountFS) wazero.ModuleConfig {
	keys := make([]string, 0, len(g.Env))
	for k := range g.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cfg = cfg.WithEnv(k, g.Env[k])
	}
	if len(mounts) > 0 {
		// Not wazero's WithDirMount: its mounts can be left (see mountFS).
		fs := wazero.NewFSConfig()
		for _, m := range mounts {
			fs = fs.(sysfs.FSConfig).WithSysFSMount(m, m.guestDir)
		}
		cfg = cfg.WithFSConfig(fs)
	}
	return cfg
}

// wasiModule is the WASI import module name.
const wasiModule = wasi_snapshot_preview1.ModuleName

// Capability is a class of WASI functions a module imports.
type Capability string

// Capabilities a module's imports may ask for.
const (
	CapFilesystem Capability = "filesystem" // path_* and directory calls; see nothing without a mount
	CapNetwork    Capability = "network"    // sock_*: never granted
)

// capabilityOf classifies a WASI function name; "" is the always-given core
// (clocks, random, args, environ, stdio, poll, exit).
func capabilityOf(name string) Capability {
	switch {
	case strings.HasPrefix(name, "sock_"):
		return CapNetwork
	case strings.HasPrefix(name, "path_"), name == "fd_readdir":
		return CapFilesystem
	}
	return ""
}

// checkImports verifies, before anything is instantiated, that every import
// of the module is a function the host provides with the same signature,
// and that no import needs a capability the host never grants. It returns
// the capabilities the imports ask for.
func checkImports(guest wazero.CompiledModule, provided map[string]map[string]funcSig) ([]Capability, error) {
	for _, m := range guest.ImportedMemories() {
		mod, name, _ := m.Import()
		return nil, fmt.Errorf("imports memory %s.%s: the host provides only functions", mod, name)
	}
	caps := map[Capability]bool{}
	for _, f := range guest.ImportedFunctions() {
		mod, name, _ := f.Import()
		funcs, ok := provided[mod]
		if !ok {
			return nil, fmt.Errorf("imports %s.%s: the host provides no module %q (only %q and %q)", mod, name, mod, abi.HostModule, wasiModule)
		}
		def, ok := funcs[name]
		if !ok {
			return nil, fmt.Errorf("imports %s.%s: the host has no such function", mod, name)
		}
		if own := (funcSig{f.ParamTypes(), f.ResultTypes()}); !own.equal(def) {
			return nil, fmt.Errorf("imports %s.%s with signature %s, the host's is %s", mod, name, own, def)
		}
		if mod != wasiModule {
			continue
		}
		switch c := capabilityOf(name); c {
		case CapNetwork:
			return nil, fmt.Errorf("imports %s.%s: network access is never granted to plugins", mod, name)
		case "":
		default:
			caps[c] = true
		}
	}
	out := make([]Capability, 0, len(caps))
	for c := range caps {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// funcSig is a function's signature, as checkImports compares a guest's
// import with the host's function.
type funcSig struct{ params, results []api.ValueType }

func (a funcSig) equal(b funcSig) bool {
	return slices.Equal(a.params, b.params) && slices.Equal(a.results, b.results)
}

func (a funcSig) String() string {
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return "(" + strings.Join(s, ", ") + ")"
	}
	return names(a.params) + " -> " + names(a.results)
}

// hostExports returns, per host module a plugin may import, the
// signatures of its functions: cmdhost's (host), metering's (m, when not
// nil) and WASI's. They are read from the tables the modules are built
// from, WASI's once per process, so that checking a guest's imports
// builds no module it does not import.
func hostExports(host *hostFuncs, m *meterHost) (map[string]map[string]funcSig, error) {
	wasi, err := wasiExports()
	if err != nil {
		return nil, err
	}
	own := map[string]funcSig{}
	for name, f := range host.table() {
		own[name] = funcSig{f.params, f.results}
	}
	out := map[string]map[string]funcSig{abi.HostModule: own, wasiModule: wasi}
	if m != nil {
		out[meter.ImportModule] = map[string]funcSig{meter.ImportName: {[]api.ValueType{i64}, []api.ValueType{i64}}}
	}
	return out, nil
}

// wasiExports are the signatures of WASI's functions, read once from a
// runtime built for that.
var wasiExports = sync.OnceValues(func() (map[string]funcSig, error) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	compiled, err := wasiBuilder(rt).Compile(ctx)
	if err != nil {
		return nil, fmt.Errorf("compiling the WASI host module: %w", err)
	}
	out := map[string]funcSig{}
	for name, def := range compiled.ExportedFunctions() {
		out[name] = funcSig{def.ParamTypes(), def.ResultTypes()}
	}
	return out, nil
})

// checkExports verifies the module exports the ABI's functions and memory.
func checkExports(guest wazero.CompiledModule) error {
	exports := guest.ExportedFunctions()
	for _, name := range []string{abi.ExportABIVersion, abi.ExportDescribe, abi.ExportHandle} {
		f, ok := exports[name]
		if !ok {
			return fmt.Errorf("does not export %s: not a cmdhost plugin (see abi/ABI.md; Go guests import github.com/cmdhost/cmdhost/sdk)", name)
		}
		if sig := (funcSig{f.ParamTypes(), f.ResultTypes()}); !sig.equal(funcSig{nil, []api.ValueType{api.ValueTypeI32}}) {
			return fmt.Errorf("exports %s with signature %s, want () -> (i32)", name, sig)
		}
	}
	if _, ok := guest.ExportedMemories()[abi.ExportMemory]; !ok {
		return fmt.Errorf("does not export its memory as %q", abi.ExportMemory)
	}
	return nil
}
