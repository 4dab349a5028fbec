package servecmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// A plugins folder with no module is served, with a warning that names
// the folder; it was served silently, as if all were well. One module in
// it, and no warning.
func TestServeWarnsOfAnEmptyPluginsFolder(t *testing.T) {
	empty := t.TempDir()
	for _, name := range []string{".hidden.wasm", "README"} { // the host loads neither
		if err := os.WriteFile(filepath.Join(empty, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, stop := clitest.StartServeIn(t, empty, nil)
	log, _ := stop()
	warning := clitest.GrepLines(log, "the plugins folder has no module")
	if !strings.Contains(warning, "level=WARN") || !strings.Contains(warning, "dir="+empty) {
		t.Errorf("serving an empty folder logs %q; want a warning naming %s:\n%s", warning, empty, log)
	}

	one := t.TempDir()
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "echo.wasm"), one, "echo.wasm")
	_, stop = clitest.StartServeIn(t, one, nil)
	if log, _ := stop(); strings.Contains(log, "has no module") {
		t.Errorf("a folder with a module is said to have none:\n%s", log)
	}
}

// plugin list --json of a host that serves no plugin prints [] as
// docs/cli.md promises for every empty list; it printed null.
func TestPluginListJSONOfAnEmptyHost(t *testing.T) {
	addr, _ := clitest.StartServeIn(t, t.TempDir(), nil)
	out, errOut, code := clitest.Run(t, "plugin", "list", "--json", "--broker", "mqtt://"+addr, "--executor", "cli-host")
	if code != 0 || out != "[]\n" {
		t.Errorf("plugin list --json of an empty host: stdout %q, stderr %q, status %d; want []", out, errOut, code)
	}
	out, errOut, code = clitest.Run(t, "plugin", "list", "--json", t.TempDir())
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("plugin list --json of an empty folder: stdout %q, stderr %q, status %d; want []", out, errOut, code)
	}
}
