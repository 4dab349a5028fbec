package host

import (
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// What the tests of package host_test reach inside the package.

// Admin is the admin ops' server.
type Admin = admin

var (
	// Commands is commands.
	Commands = commands
	// ResolvingHandler is resolvingHandler.
	ResolvingHandler = resolvingHandler
)

// FixedCommands returns the RPC commands of a fixed set of plugin
// versions (no manager, no hot reload), with the host's defaults d.
func FixedCommands(modules []*wasm.Plugin, d plugins.Defaults) []rpc.Command {
	fixed := fixedResolver{}
	var out []rpc.Command
	for _, p := range modules {
		for _, c := range p.Description().Commands {
			fixed[c.Name] = p
			out = append(out, rpcCommand(plugins.Resolve(p.Name(), c, nil, d), resolvingHandler(fixed, c.Name)))
		}
	}
	return out
}

// fixedResolver serves each command by one plugin that never changes.
type fixedResolver map[string]*wasm.Plugin

func (f fixedResolver) Lookup(command string) (*wasm.Plugin, bool) {
	p, ok := f[command]
	return p, ok
}

// The nested-call dispatcher.
type (
	Nested       = nestedCalls
	NestedConfig = nestedConfig
)

// NewNested is newNested.
var NewNested = newNested
