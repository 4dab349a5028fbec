package app

import (
	"path/filepath"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

// Every --json that works without a host has the one shape (the host's
// are checked in TestPluginAdmin).
func TestJSONOutputsShareOneShape(t *testing.T) {
	for _, args := range [][]string{
		{"version", "--json"},
		{"plugin", "list", "--json", clitest.Plugins},
		{"plugin", "inspect", "--json", filepath.Join(clitest.Plugins, "echo.wasm")},
		{"plugin", "inspect", "--json", filepath.Join(clitest.Plugins, "wat-echo.wasm")},
		{"plugin", "validate", "--json", filepath.Join(clitest.Plugins, "echo.wasm"), filepath.Join(clitest.Plugins, "../plugins-bad/bad-net.wasm")},
	} {
		out, errOut, _ := clitest.Run(t, args...)
		if out == "" {
			t.Errorf("%v: no output (%s)", args, errOut)
			continue
		}
		clitest.CheckJSONShape(t, filepath.Base(args[len(args)-1])+" "+args[0], out)
	}
}
