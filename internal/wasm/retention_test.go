package wasm

import (
	"context"
	"strings"
	"testing"
)

// An idle instance keeps nothing of its last call on the host's heap: not
// the response, and not a request buffer grown for a large request.
func TestIdleInstanceKeepsNoLargeBuffers(t *testing.T) {
	p := load(t, "wat-echo", PluginConfig{PoolSize: 1})
	payload := strings.Repeat("x", 1<<20)
	if resp := mustCall(t, p, "wat-echo", payload); len(resp.Payload) != len(payload) {
		t.Fatalf("echoed %d bytes; want %d", len(resp.Payload), len(payload))
	}
	inst, err := p.pool.acquire(context.Background())
	if err != nil || inst == nil {
		t.Fatalf("no idle instance after the call: %v", err)
	}
	defer p.pool.release(inst, true)
	if c := cap(inst.reqBuf); c > idleBufferBytes {
		t.Errorf("the idle instance keeps a request buffer of %d KiB; want at most %d KiB", c>>10, idleBufferBytes>>10)
	}
	if inst.state.response != nil || inst.state.request != nil {
		t.Errorf("the idle instance keeps the last call's request (%d bytes) or response (%v)", len(inst.state.request), inst.state.response != nil)
	}
}
