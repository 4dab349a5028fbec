package plugins

import (
	"context"
	"errors"
	"fmt"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// Errors of Invoke and InvokeServing, for callers to map to statuses (the
// host answers 503 to both).
var (
	// ErrNotServed: no plugin serves the command (any more).
	ErrNotServed = errors.New("not served")
	// ErrBeingReplaced: the command's plugin was swapped out again and
	// again during the call's lookups; the caller may retry.
	ErrBeingReplaced = errors.New("being replaced")
)

// Lookuper finds the plugin version serving a command now. The Manager is
// one; a fixed set of plugins is another.
type Lookuper interface {
	Lookup(command string) (*wasm.Plugin, bool)
}

// Invoke runs req on the plugin version serving req.Command when the call
// starts. Hot reload swaps versions between a lookup and the call: a call
// that finds its version closed looks up again and runs on the newer one,
// so a reload loses no request. Errors wrap ErrNotServed or
// ErrBeingReplaced, or are the plugin's (wasm.Error).
func (m *Manager) Invoke(ctx context.Context, req *abi.Request) (*abi.Response, error) {
	return InvokeServing(ctx, m, req)
}

// InvokeServing is Invoke for any Lookuper: it looks req.Command up and
// calls the version found, looking up again when that version closed
// before the call ran (a few times, for reloads in quick succession). It
// is the one place that retries on wasm.KindClosed.
func InvokeServing(ctx context.Context, l Lookuper, req *abi.Request) (*abi.Response, error) {
	var closed *wasm.Plugin
	for range 3 {
		p, ok := l.Lookup(req.Command)
		if !ok {
			return nil, fmt.Errorf("command %s is no longer served: %w", req.Command, ErrNotServed)
		}
		if p == closed {
			break // closed, and nothing newer serves the command
		}
		resp, err := p.Invoke(ctx, req)
		if !errors.Is(err, wasm.KindClosed) {
			return resp, err
		}
		closed = p // swapped out between the lookup and the call
	}
	return nil, fmt.Errorf("command %s is being replaced; retry: %w", req.Command, ErrBeingReplaced)
}
