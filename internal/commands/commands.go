// Package commands turns the plugins' commands into the commands the RPC
// executor serves. Each one's handler finds the plugin version serving
// its command when a call starts (plugins.InvokeServing), so that a hot
// reload between two calls, or during one, loses no request; a command
// that is no longer served, or keeps being replaced, is answered 503.
//
// It is its own package because two layers run these handlers: host
// serves them through the executor, and nested calls run a local
// command's handler directly (internal/nested), so that a nested call
// meets a reload exactly as a request does.
package commands

import (
	"context"
	"errors"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// Served returns the RPC commands of what the plugins manager serves now,
// each run by the plugin version serving it when a call starts, with the
// settings the manager resolved (plugins.Command). traced names, on each
// call's span, the plugin serving it (Traced).
func Served(m *plugins.Manager, traced bool) []rpc.Command { return ServedVia(m, traced, nil) }

// Gate decides who may call a command and how often (internal/gate):
// Admit is the command's rpc.Command.Admit, Limit wraps its handler.
type Gate interface {
	Admit(c plugins.Command) func(*abi.Request) *rpc.StatusError
	Limit(c plugins.Command, h rpc.Handler) rpc.Handler
}

// ServedVia is Served with each command behind g (nil: none).
func ServedVia(m *plugins.Manager, traced bool, g Gate) []rpc.Command {
	served := m.Commands()
	out := make([]rpc.Command, 0, len(served))
	for _, c := range served {
		if c.Trigger != nil { // run for messages (internal/trigger), not served on a request topic
			continue
		}
		h := Resolving(m, c.Name())
		if traced {
			h = Traced(m.Origin, h)
		}
		rc := Of(c, h)
		if g != nil {
			rc.Handler, rc.Admit = g.Limit(c, rc.Handler), g.Admit(c)
		}
		out = append(out, rc)
	}
	return out
}

// Of is c as the executor serves it, with the handler h.
func Of(c plugins.Command, h rpc.Handler) rpc.Command {
	return rpc.Command{
		Name: c.Name(), Topic: c.Topic, Idempotent: c.Declared.Idempotent, ResponseTTL: c.Declared.ResponseTTL,
		Timeout: c.Timeout, TimeoutRetries: c.OnTimeout.Retries, Concurrency: c.Concurrency, Handler: h, CommitErrors: c.CommitErrors,
		KeepsDeadline: true, // a WASM guest: wazero closes it at the cut
	}
}

// Resolving serves the command name (the requests' Command) by whichever
// plugin version serves it when the call starts (plugins.InvokeServing,
// which looks up again when a reload swapped the version out), and
// answers 503 when none does or it keeps being replaced.
func Resolving(r plugins.Lookuper, name string) rpc.Handler {
	return func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
		resp, err := plugins.InvokeServing(ctx, r, req)
		switch {
		case errors.Is(err, plugins.ErrNotServed):
			return nil, &rpc.StatusError{Status: abi.StatusServiceUnavailable, Message: "command " + name + " is no longer served"}
		case errors.Is(err, plugins.ErrBeingReplaced):
			return nil, &rpc.StatusError{Status: abi.StatusServiceUnavailable, Message: "command " + name + " is being replaced; retry"}
		case errors.Is(err, wasm.KindMemoryBudget): // the guest did not run: safe to retry
			return nil, &rpc.StatusError{Status: abi.StatusServiceUnavailable, Message: "guest memory budget exhausted; retry later"}
		}
		var fuel *wasm.FuelError
		if errors.As(err, &fuel) { // the guest ran out of its budget: the same input would again
			return nil, &rpc.StatusError{Status: abi.StatusInternalError, Message: "fuel exhausted: " + fuel.Error()}
		}
		return resp, err
	}
}

// Fixed returns the RPC commands of a fixed set of plugin versions, with
// the defaults d: no manager, no hot reload. Tests and benchmarks serve
// plugins they loaded themselves so.
func Fixed(modules []*wasm.Plugin, d plugins.Defaults) []rpc.Command {
	fixed := fixedResolver{}
	var out []rpc.Command
	for _, p := range modules {
		for _, c := range p.Description().Commands {
			if c.IsTrigger() {
				continue
			}
			fixed[c.Name] = p
			out = append(out, Of(plugins.Resolve(p.Name(), c, nil, d), Resolving(fixed, c.Name)))
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
