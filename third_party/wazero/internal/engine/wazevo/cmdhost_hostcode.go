package wazevo

import (
	"strings"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/internal/wasm"
)

// cmdhost: a host module's machine code is one Go-function trampoline per
// function, and a trampoline depends only on the function's index, its
// kind (api.GoModuleFunction or api.GoFunction) and its signature: the Go
// function it reaches is looked up at the call, in the instance's own
// module. Upstream compiles it again for every host module (its module ID
// is the module's address: wasm.NewHostModule's TODO), so a program that
// makes a runtime per plugin, as cmdhost does, compiles the same
// trampolines once per plugin: 0.14 s of CPU of a start of 1,000 plugins
// (BENCHMARKS.md, "Where a start's time goes"). The engine, shared by
// every runtime of a compilation cache, keeps the code of each shape of
// host module instead, and a host module of a shape seen before gets a
// compiledModule of its own over the same executable.
//
// The shape includes the module's and the functions' names, so that a
// stack trace that finds the code's compiledModule by address
// (compiledModuleOfAddr) names the same functions whichever module of the
// shape it finds. A module with listeners is not shared (a listener is
// per module). The executable is never unmapped while the engine keeps
// it (its finalizer runs once no module and no engine refers to it).

// hostCode is the machine code of a shape of host module.
type hostCode struct {
	executables     *executables
	functionOffsets []int
}

// maxHostCodes bounds the shapes an engine keeps: a program that makes
// host modules of ever new shapes compiles the others as upstream does.
const maxHostCodes = 64

// hostCodeKey is the shape of module, or "" when its code is not shared.
func hostCodeKey(module *wasm.Module, listeners []experimental.FunctionListener) string {
	if len(listeners) > 0 || module.NameSection == nil || len(module.NameSection.FunctionNames) != len(module.CodeSection) {
		return ""
	}
	var b strings.Builder
	b.WriteString(module.NameSection.ModuleName)
	for i := range module.CodeSection {
		b.WriteByte(0)
		switch module.CodeSection[i].GoFunc.(type) {
		case api.GoModuleFunction:
			b.WriteByte('m')
		case api.GoFunction:
			b.WriteByte('f')
		default:
			return ""
		}
		b.WriteString(module.TypeSection[module.FunctionSection[i]].String())
		b.WriteByte(' ')
		b.WriteString(module.NameSection.FunctionNames[i].Name)
	}
	return b.String()
}

// sharedHostModule returns a compiledModule of module over the code kept
// for key, or nil when none is kept.
func (e *engine) sharedHostModule(key string, module *wasm.Module) *compiledModule {
	if key == "" {
		return nil
	}
	e.hostCodesMux.Lock()
	code, ok := e.hostCodes[key]
	e.hostCodesMux.Unlock()
	if !ok {
		return nil
	}
	return &compiledModule{module: module, executables: code.executables, functionOffsets: code.functionOffsets}
}

// keepHostCode keeps cm's code for the host modules of shape key to come.
func (e *engine) keepHostCode(key string, cm *compiledModule) {
	if key == "" || len(cm.executable) == 0 {
		return
	}
	e.hostCodesMux.Lock()
	defer e.hostCodesMux.Unlock()
	if _, ok := e.hostCodes[key]; ok || len(e.hostCodes) >= maxHostCodes {
		return
	}
	if e.hostCodes == nil {
		e.hostCodes = map[string]hostCode{}
	}
	e.hostCodes[key] = hostCode{executables: cm.executables, functionOffsets: cm.functionOffsets}
}
