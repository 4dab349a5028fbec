package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/host/events"
	"github.com/cmdhost/cmdhost/host/rpc"
	"github.com/cmdhost/cmdhost/host/wasm"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// startNested gives the engine its nested-invocation dispatcher: local
// commands through the plugins manager, with the execution timeouts serve
// hands the executor (timeouts); remote ones through an invoker of its
// own on the same broker. The returned function disconnects that invoker;
// call it after the executor stopped.
func startNested(ctx context.Context, s serveSettings, engine *wasm.Engine, mgr *pluginmgr.Manager,
	timeouts *host.CommandTimeouts, sink events.Sink, log *slog.Logger) (func(), error) {
	ictx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	inv, err := rpc.NewInvoker(ictx, rpc.InvokerConfig{Broker: s.broker, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("nested invocation: %w", err)
	}
	nested, err := host.NewNested(host.NestedConfig{ExecutorID: s.id, Resolver: mgr, Timeout: timeouts.Of,
		Remote: inv, RemoteAck: !s.nestedNoAck, MaxDepth: s.maxDepth, Events: sink})
	if err != nil {
		_ = inv.Close()
		return nil, err
	}
	engine.SetNester(nested)
	return func() {
		engine.SetNester(nil)
		_ = inv.Close()
	}, nil
}
