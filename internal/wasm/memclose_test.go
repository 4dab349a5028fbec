package wasm

import (
	"context"
	"testing"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// Closing a plugin whose call outlives the drain closes its module while
// the guest still writes its memory: the guest stops at its next loop
// check and the call fails, and the host lives on. With guest memory
// mmap'd (linearmem_linux.go), freeing it when wazero closes the module,
// under the running guest, killed the whole process with a segmentation
// fault (instanceMemory frees it after the last run of guest code).
func TestCloseUnderARunningGuestKeepsItsMemory(t *testing.T) {
	for round := range 3 {
		p := loadAs(t, "hostile-memory-spin", "memspin", PluginConfig{PoolSize: 1})
		failed := make(chan error, 1)
		go func() {
			_, err := call(t, p, context.Background(), "memspin", "")
			failed <- err
		}()
		testkit.WaitFor(t, "the call to hold an instance", func() bool { return p.Stats().InUse == 1 })
		drained, cancel := context.WithCancel(context.Background())
		cancel() // no drain: the runtime closes over the running call at once
		_ = p.Close(drained)
		if err := <-failed; err == nil {
			t.Fatalf("round %d: the call of a guest that never returns succeeded", round)
		}
		if st := p.Stats(); st.Instances != 0 {
			t.Fatalf("round %d: %d instances left after close", round, st.Instances)
		}
	}
	other := load(t, "wat-echo", PluginConfig{})
	mustCall(t, other, "wat-echo", "still here")
}
