// Package host ties the plugins to the world: it turns each command the
// plugins manager serves into an RPC command whose handler runs the plugin
// version serving it at the time of the call, it serves the host's own
// admin ops, and it runs the nested invocations handlers ask for (Nested,
// nested.go: why it works the way it does is explained there).
package host

import (
	"context"
	"errors"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host/rpc"
	"github.com/cmdhost/cmdhost/host/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// Commands returns the RPC commands of a fixed set of plugins (no hot
// reload: serve uses Served), each served by its plugin.
func Commands(modules []*wasm.Plugin, hostTimeout time.Duration, poolSize int) []rpc.Command {
	fixed := fixedResolver{}
	var out []rpc.Command
	for _, p := range modules {
		for _, c := range p.Description().Commands {
			fixed[c.Name] = p
			timeout, _ := (*plugins.Operator)(nil).ExecTimeout(c, hostTimeout)
			out = append(out, command(c, ResolvingHandler(fixed, c.Name), timeout, poolSize))
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

// command makes the RPC command of a declared one, with the execution
// timeout and concurrency given. Its topic is the module's declared
// pattern, else rpc.DefaultTopic.
func command(c abi.Command, h rpc.Handler, timeout time.Duration, concurrency int) rpc.Command {
	topic := c.Topic
	if topic == "" {
		topic = rpc.DefaultTopic
	}
	return rpc.Command{
		Name: c.Name, Topic: topic, Idempotent: c.Idempotent, ResponseTTL: c.ResponseTTL, Timeout: timeout,
		Concurrency: concurrency, Handler: h,
	}
}

// Resolver finds the plugin version serving a command now; hot reload
// swaps it between calls.
type Resolver = plugins.Lookuper

// ResolvingHandler serves the command name (the requests' Command) by
// whichever plugin version
// serves it when the call starts (plugins.InvokeServing, which looks up
// again when a reload swapped the version out), and answers 503 when none
// does or it keeps being replaced.
func ResolvingHandler(r Resolver, name string) rpc.Handler {
	return func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
		resp, err := plugins.InvokeServing(ctx, r, req)
		switch {
		case errors.Is(err, plugins.ErrNotServed):
			return nil, &rpc.StatusError{Status: abi.StatusServiceUnavailable, Message: "command " + name + " is no longer served"}
		case errors.Is(err, plugins.ErrBeingReplaced):
			return nil, &rpc.StatusError{Status: abi.StatusServiceUnavailable, Message: "command " + name + " is being replaced; retry"}
		}
		return resp, err
	}
}

// Served returns the RPC commands of what the plugins manager serves now,
// each resolving its plugin version per call (hot reload). A command's
// execution timeout is, first found: the plugin's operator file's for the
// command, the operator file's for the plugin, the module's declared one
// (plugins.Served.Timeout and TimeoutSource), hostTimeout (the source
// plugins.TimeoutFromHost; see plugins.Served.EffectiveTimeout). Its
// on_timeout policy is the operator file's (plugins.Served.OnTimeout:
// rpc.Command.TimeoutRetries), else fail; its concurrency the operator
// file's (plugins.Served.Concurrency), else poolSize.
func Served(m *plugins.Manager, hostTimeout time.Duration, poolSize int) []rpc.Command {
	var out []rpc.Command
	for _, s := range m.Commands() {
		concurrency := poolSize
		if s.Concurrency > 0 {
			concurrency = s.Concurrency
		}
		timeout, _ := s.EffectiveTimeout(hostTimeout)
		c := command(s.Command, ResolvingHandler(m, s.Command.Name), timeout, concurrency)
		c.TimeoutRetries = s.OnTimeout.Retries
		out = append(out, c)
	}
	return out
}
