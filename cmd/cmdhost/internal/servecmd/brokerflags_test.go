package servecmd

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/internal/broker"
)

// serve's embedded broker bounds on what clients can make it hold: the
// defaults are the broker's (--broker-queue-bytes 0: the in-flight bytes
// plus a packet), a value given reaches host.Config, and one out of range
// is a usage error.
func TestServeBrokerHoldFlags(t *testing.T) {
	def := serveConfigOf(t)
	if def.Embedded.InflightBytes != broker.DefaultMaxInflightBytes || def.Embedded.HeldBytes != broker.DefaultMaxHeldBytes ||
		def.Embedded.QueueBytes != 0 {
		t.Errorf("defaults: inflight %d held %d queue %d", def.Embedded.InflightBytes, def.Embedded.HeldBytes, def.Embedded.QueueBytes)
	}
	set := serveConfigOf(t, "--broker-inflight-bytes", "1000", "--broker-held-bytes", "2000", "--broker-queue-bytes", "3000")
	if set.Embedded.InflightBytes != 1000 || set.Embedded.HeldBytes != 2000 || set.Embedded.QueueBytes != 3000 {
		t.Errorf("given: inflight %d held %d queue %d", set.Embedded.InflightBytes, set.Embedded.HeldBytes, set.Embedded.QueueBytes)
	}
	for _, args := range [][]string{{"--broker-inflight-bytes", "0"}, {"--broker-held-bytes", "0"}, {"--broker-queue-bytes", "-1"}} {
		cmd := ServeCommand()
		cmd.Action = func(c *cli.Context) error { _, err := serveConfig(c); return err }
		app := &cli.App{Commands: []*cli.Command{cmd}}
		err := app.Run(append([]string{"cmdhost", "serve", "--plugins", t.TempDir()}, args...))
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("serve %v: %v, want an error naming %s", args, err, args[0])
		}
	}
}
