// Package host ties the plugins to the world. Server (server.go) is one
// cmdhost: it builds the engine, the plugins manager, the executor, the
// nested-call dispatcher, the metrics and the timeout events in one place,
// serves the plugins' commands and the host's own admin ops over MQTT, and
// owns hot reload and the order of shutdown. nestedCalls (nested.go) runs
// the calls handlers make to other commands; why it works the way it does is
// explained there.
package host

import (
	"context"
	"errors"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// commands returns the RPC commands of what the plugins manager serves
// now, each run by the plugin version serving it when a call starts, with
// the settings the manager resolved (plugins.Command).
func commands(m *plugins.Manager, traced bool) []rpc.Command {
	served := m.Commands()
	out := make([]rpc.Command, 0, len(served))
	for _, c := range served {
		h := resolvingHandler(m, c.Name())
		if traced {
			h = tracedHandler(m.Origin, h)
		}
		out = append(out, rpcCommand(c, h))
	}
	return out
}

// rpcCommand is c as the executor serves it, with the handler h.
func rpcCommand(c plugins.Command, h rpc.Handler) rpc.Command {
	return rpc.Command{
		Name: c.Name(), Topic: c.Topic, Idempotent: c.Declared.Idempotent, ResponseTTL: c.Declared.ResponseTTL,
		Timeout: c.Timeout, TimeoutRetries: c.OnTimeout.Retries, Concurrency: c.Concurrency, Handler: h,
		KeepsDeadline: true, // a WASM guest: wazero closes it at the cut
	}
}

// resolvingHandler serves the command name (the requests' Command) by
// whichever plugin version serves it when the call starts
// (plugins.InvokeServing, which looks up again when a reload swapped the
// version out), and answers 503 when none does or it keeps being
// replaced.
func resolvingHandler(r plugins.Lookuper, name string) rpc.Handler {
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
		return resp, err
	}
}
