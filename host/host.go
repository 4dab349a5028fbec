// Package host ties the engine to the world: it loads the plugins folder
// into the wasm engine and serves each plugin command through the RPC
// executor, mapping engine failures to protocol outcomes.
package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host/rpc"
	"github.com/cmdhost/cmdhost/host/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// LoadDir loads every *.wasm file in dir as a plugin named after the file,
// compiling on all cores at once (a cold compile of a Go guest takes ~1 s).
// A file that fails to load is reported and skipped; a command served by
// two plugins is an error naming both, and the plugin whose file sorts
// first keeps it. It returns the plugins loaded and the problems met.
func LoadDir(ctx context.Context, e *wasm.Engine, dir string, cfg wasm.PluginConfig) ([]*wasm.Plugin, []error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.wasm"))
	if err != nil {
		return nil, []error{err}
	}
	sort.Strings(paths)
	loaded := make([]*wasm.Plugin, len(paths))
	failed := make([]error, len(paths))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, path := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			loaded[i], failed[i] = loadFile(ctx, e, path, cfg)
		}()
	}
	wg.Wait()

	var plugins []*wasm.Plugin
	var problems []error
	owner := map[string]string{}
	for i, p := range loaded {
		if failed[i] != nil {
			problems = append(problems, failed[i])
			continue
		}
		if clash := firstClash(p, owner); clash != "" {
			problems = append(problems, fmt.Errorf("plugin %s: command %s is already served by plugin %s; %s not loaded", p.Name(), clash, owner[clash], p.Name()))
			_ = p.Close(ctx)
			continue
		}
		for _, c := range p.Description().Commands {
			owner[c.Name] = p.Name()
		}
		plugins = append(plugins, p)
	}
	return plugins, problems
}

func loadFile(ctx context.Context, e *wasm.Engine, path string, cfg wasm.PluginConfig) (*wasm.Plugin, error) {
	bin, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return e.Load(ctx, strings.TrimSuffix(filepath.Base(path), ".wasm"), bin, cfg)
}

func firstClash(p *wasm.Plugin, owner map[string]string) string {
	for _, c := range p.Description().Commands {
		if _, taken := owner[c.Name]; taken {
			return c.Name
		}
	}
	return ""
}

// Commands returns the RPC commands of the plugins, each served by its
// plugin.
func Commands(plugins []*wasm.Plugin, hostTimeout time.Duration, poolSize int) []rpc.Command {
	var out []rpc.Command
	for _, p := range plugins {
		for _, c := range p.Description().Commands {
			out = append(out, command(c, Handler(p), hostTimeout, poolSize))
		}
	}
	return out
}

// command makes the RPC command of a declared one. Its topic is the
// module's declared pattern, else rpc.DefaultTopic; its execution timeout
// the module's declared one, else hostTimeout; its concurrency the
// plugin's pool size.
func command(c abi.Command, h rpc.Handler, hostTimeout time.Duration, poolSize int) rpc.Command {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = hostTimeout
	}
	topic := c.Topic
	if topic == "" {
		topic = rpc.DefaultTopic
	}
	return rpc.Command{
		Name: c.Name, Topic: topic, Idempotent: c.Idempotent, ResponseTTL: c.ResponseTTL, Timeout: timeout,
		Concurrency: poolSize, Handler: h,
	}
}

// Handler serves one plugin's commands: the engine's deadline and cancel
// errors pass through (the executor answers 408 or nothing), a closed
// plugin is 503 (retry), any other failure is a host fault (500) naming
// the plugin, the command and the cause.
func Handler(p *wasm.Plugin) rpc.Handler {
	return func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
		return invoke(ctx, p, req)
	}
}

func invoke(ctx context.Context, p *wasm.Plugin, req *abi.Request) (*abi.Response, error) {
	resp, err := p.Invoke(ctx, req)
	return mapError(p, resp, err)
}

// mapError turns a closed plugin into 503; other errors pass through.
func mapError(p *wasm.Plugin, resp *abi.Response, err error) (*abi.Response, error) {
	switch {
	case err == nil:
		return resp, nil
	case errors.Is(err, wasm.KindClosed):
		return nil, &rpc.StatusError{Status: abi.StatusServiceUnavailable, Message: "plugin " + p.Name() + " is closing; retry"}
	}
	return nil, err
}

// Resolver finds the plugin version serving a command now; hot reload
// swaps it between calls.
type Resolver interface {
	Lookup(command string) (*wasm.Plugin, bool)
}

// ResolvingHandler serves a command by whichever plugin version serves it
// when the call starts. A call that looked up a version just before a
// reload swapped it out may find it closed: it looks up again and runs on
// the newer version (a few times, for reloads in quick succession), so a
// reload loses no request.
func ResolvingHandler(r Resolver, name string) rpc.Handler {
	return func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
		var closed *wasm.Plugin
		for attempt := 0; ; attempt++ {
			p, ok := r.Lookup(name)
			if !ok {
				return nil, &rpc.StatusError{Status: abi.StatusServiceUnavailable, Message: "command " + name + " is no longer served"}
			}
			if p == closed || attempt == 3 {
				return mapError(p, nil, &wasm.Error{Kind: wasm.KindClosed, Plugin: p.Name(), Command: name})
			}
			resp, err := p.Invoke(ctx, req)
			if errors.Is(err, wasm.KindClosed) {
				closed = p // swapped out between the lookup and the call
				continue
			}
			return mapError(p, resp, err)
		}
	}
}

// Served returns the RPC commands of what the plugins manager serves now,
// each resolving its plugin version per call (hot reload). A command's
// execution timeout is, first found: the plugin's operator file's for the
// command, the operator file's for the plugin (both in plugins.Served.Timeout),
// the module's declared one, hostTimeout. Its concurrency is the operator
// file's (plugins.Served.Concurrency), else poolSize.
func Served(m *plugins.Manager, hostTimeout time.Duration, poolSize int) []rpc.Command {
	var out []rpc.Command
	for _, s := range m.Commands() {
		c, concurrency := s.Command, poolSize
		if s.Timeout > 0 {
			c.Timeout = s.Timeout
		}
		if s.Concurrency > 0 {
			concurrency = s.Concurrency
		}
		out = append(out, command(c, ResolvingHandler(m, c.Name), hostTimeout, concurrency))
	}
	return out
}
