package servecmd

import (
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/host"
)

// serveConfigOf resolves serve's flags args as serve does.
func serveConfigOf(t *testing.T, args ...string) host.Config {
	t.Helper()
	cmd := ServeCommand()
	var cfg host.Config
	cmd.Action = func(c *cli.Context) error {
		var err error
		cfg, err = serveConfig(c)
		return err
	}
	app := &cli.App{Commands: []*cli.Command{cmd}}
	if err := app.Run(append([]string{"cmdhost", "serve", "--plugins", t.TempDir()}, args...)); err != nil {
		t.Fatalf("serve %v: %v", args, err)
	}
	return cfg
}

// The flags keep their words ("0: none, never, off") while host.Config
// follows the one rule (zero: the default; host.Off: off): serve maps each
// 0 to host.Off, and leaves a flag not given at its documented default.
func TestServeFlagsZeroIsOffInHostConfig(t *testing.T) {
	off := serveConfigOf(t, "--exec-timeout", "0", "--idle-timeout", "0", "--drain", "0",
		"--reuse-max-bytes", "0", "--max-dedup-bytes", "0", "--session-expiry", "0")
	for name, v := range map[string]int64{
		"ExecTimeout": int64(off.Limits.ExecTimeout), "IdleTimeout": int64(off.Limits.IdleTimeout), "Drain": int64(off.Limits.Drain),
		"ReuseMaxBytes": off.Store.ReuseMaxBytes, "MaxDedupBytes": off.Store.MaxDedupBytes, "SessionExpiry": int64(off.Broker.SessionExpiry),
	} {
		if v != host.Off {
			t.Errorf("%s = %d after its flag's 0, want host.Off", name, v)
		}
	}
	def := serveConfigOf(t)
	if def.Limits.ExecTimeout != 10*time.Second || def.Limits.IdleTimeout != 5*time.Minute || def.Limits.Drain != 10*time.Second ||
		def.Store.ReuseMaxBytes != 64<<20 || def.Broker.SessionExpiry != 10*time.Minute {
		t.Errorf("defaults: exec %v idle %v drain %v reuse %d session %v", def.Limits.ExecTimeout, def.Limits.IdleTimeout, def.Limits.Drain, def.Store.ReuseMaxBytes, def.Broker.SessionExpiry)
	}
}
