package servecmd

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/state"
)

// The handlers' state store (docs/state.md): a folder next to the
// plugins folder by default, so that a host started again on the same
// plugins finds its state, and the outcomes it recorded, where it left
// them; with --store, in the store's Redis, shared by the replicas; with
// --state aio, in the Azure IoT Operations state store of --broker (the
// folder keeping the outcomes); --state-dir off runs without one.

// stateAIO is the --state value of the Azure IoT Operations broker's
// state store.
const stateAIO = "aio"

func stateFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "state", Usage: "where the handlers' state lives, `KIND`: leave it out for the state folder (--state-dir; with --store, the store's Redis), or aio: the Azure IoT Operations state store of the broker --broker names, through its protocol, the state folder keeping the outcomes of requests and the outbox (docs/state.md)", EnvVars: []string{"CMDHOST_STATE"}},
		&cli.StringFlag{Name: "state-dir", Usage: "the handlers' state store `DIR`, which also keeps the outcomes of non-idempotent requests through a restart (one host at a time); off: none (default: the plugins folder's path with .state appended; with --store, the store's Redis, shared by the replicas)", EnvVars: []string{"CMDHOST_STATE_DIR"}},
		base.SizeFlag("state-max-bytes", state.DefaultMaxTotalBytes, "bound of the state store's keys and values, all namespaces together; past it, a write that adds is refused (guests get a quota error)", "CMDHOST_STATE_MAX_BYTES"),
		base.SizeFlag("state-namespace-bytes", state.DefaultNamespaceBytes, "bound of one namespace's keys and values, unless the plugin's operator file sets its own (\"state\": {\"maxBytes\"})", "CMDHOST_STATE_NAMESPACE_BYTES"),
		&cli.StringFlag{Name: "state-protocol", Value: "on", Usage: "serve the Azure IoT Operations state store protocol over the state store on the embedded broker (docs/state.md), so that the Azure SDKs' state store clients share keys with the plugins: on or off (never served on an external --broker)", EnvVars: []string{"CMDHOST_STATE_PROTOCOL"}},
		&cli.Int64Flag{Name: "state-namespace-keys", Value: state.DefaultNamespaceKeys, Usage: "bound of one namespace's keys, unless the plugin's operator file sets its own (\"state\": {\"maxKeys\"})", EnvVars: []string{"CMDHOST_STATE_NAMESPACE_KEYS"}},
	}
}

// stateSettings reads the state flags into cfg (PluginsDir and Store
// set).
func stateSettings(c *cli.Context, cfg *host.Config) error {
	switch dir := c.String("state-dir"); {
	case dir == base.StateDirOff:
		cfg.Store.StateDir, cfg.Store.NoState = "", true
	case cfg.Store.URL != "" && dir != "":
		return fmt.Errorf("--state-dir %s and --store: with --store, the handlers' state is kept in the store's Redis, shared by the replicas; drop --state-dir (or --state-dir off for none)", dir)
	case cfg.Store.URL != "": // in the store's Redis
	case dir == "":
		cfg.Store.StateDir = base.DefaultStateDir(cfg.PluginsDir)
	default:
		cfg.Store.StateDir = dir
	}
	switch st := c.String("state"); st {
	case "":
	case stateAIO:
		cfg.Store.StateAIO = true
		if err := host.CheckStateAIO(*cfg); err != nil {
			return err
		}
	default:
		return fmt.Errorf("--state %q: give aio (the Azure IoT Operations state store of --broker), or leave it out (the state folder; with --store, its Redis)", st)
	}
	switch p := c.String("state-protocol"); p {
	case "on", "off":
		cfg.Embedded.StateProtocolOff = p == "off"
	default:
		return fmt.Errorf("--state-protocol %q: give on or off", p)
	}
	cfg.Store.StateLimits = state.Limits{MaxTotalBytes: base.SizeOf(c, "state-max-bytes"),
		Namespace: state.Quota{MaxBytes: base.SizeOf(c, "state-namespace-bytes"), MaxKeys: c.Int64("state-namespace-keys")}}
	if cfg.Store.StateLimits.MaxTotalBytes <= 0 || cfg.Store.StateLimits.Namespace.MaxBytes <= 0 || cfg.Store.StateLimits.Namespace.MaxKeys <= 0 {
		return errors.New("--state-max-bytes, --state-namespace-bytes and --state-namespace-keys must be positive")
	}
	if cfg.Store.StateDir != "" && filepath.Clean(cfg.Store.StateDir) == filepath.Clean(cfg.PluginsDir) {
		return fmt.Errorf("--state-dir %s is the plugins folder: give the state store a folder of its own", cfg.Store.StateDir)
	}
	return nil
}
