package base

import (
	"path/filepath"
	"time"
)

// DefaultExecTimeout is serve's default --exec-timeout, and call's
// default --timeout: a command runs as long locally as in a host.
const DefaultExecTimeout = 10 * time.Second

// StateDirOff is the --state-dir value that turns the state store off.
const StateDirOff = "off"

// DefaultStateDir is the state folder of a plugins folder: its path with
// .state appended (plugins → plugins.state), beside it.
func DefaultStateDir(pluginsDir string) string { return filepath.Clean(pluginsDir) + ".state" }
