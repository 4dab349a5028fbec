package host_test

import (
	"encoding/binary"
	"net/url"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
)

// hostileDir holds the modules that try to exhaust the host, relative to
// pluginDir (see testdata/hostile).
const hostileDir = "../plugins-hostile/"

// Guests that grow tables past the limit or recurse deep get answers, not
// a dead process, and the host answers echo afterwards.
func TestHostileTablesThroughBroker(t *testing.T) {
	brokertest.ForEach(t, func(t *testing.T, u *url.URL) {
		// The deep recursion takes ~1 s on an idle machine: a minute of
		// execution timeout and expiry, so that load cannot make it a 408.
		e := newEnvConfig(t, u, func(_ *rpc.Config, cmds []rpc.Command) {
			for i := range cmds {
				cmds[i].Timeout = time.Minute
			}
		}, hostileDir+"hostile-table-grow", hostileDir+"hostile-table-fill", hostileDir+"hostile-deep", "echo")
		i32 := func(command string) int32 {
			t.Helper()
			r, err := e.call(command, "", time.Minute, nil)
			if err != nil {
				t.Fatalf("%s: %v", command, err)
			}
			if r.Status != abi.StatusOK || len(r.Payload) != 4 {
				t.Fatalf("%s: %+v; want 200 with a 4-byte payload", command, r)
			}
			return int32(binary.LittleEndian.Uint32(r.Payload))
		}
		if got := i32("table-grow"); got != -1 {
			t.Errorf("table.grow(0xFFFFFFFD) returned %d; want -1", got)
		}
		if got := i32("table-fill"); got > 65536 {
			t.Errorf("the table grew to %d entries; want at most the default limit of 65536", got)
		}
		if got := i32("deep"); got != 100_000 {
			t.Errorf("deep recursed %d deep; want 100000", got)
		}
		if r := e.mustCall("echo", "still here"); r.Status != abi.StatusOK || string(r.Payload) != "still here" {
			t.Fatalf("echo after the hostile calls: %+v", r)
		}
	})
}
