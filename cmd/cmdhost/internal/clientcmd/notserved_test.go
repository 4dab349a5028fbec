package clientcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// A command the host does not serve because its plugin is disabled or did
// not load is named as such, with the reason, not only as "serves no
// command" (a plugin disabled by its operator file looked like a typo).
func TestInvokeSaysWhyAPluginServesNothing(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	dir := t.TempDir()
	for _, name := range []string{"echo", "counter", "fail"} {
		bin, err := os.ReadFile(filepath.Join(clitest.Plugins, name+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".wasm"), bin, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, op := range map[string]string{"echo": `{"enabled": false}`, "counter": `{"timeout": "soon"}`} {
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(op), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addr, _ := clitest.StartServeIn(t, dir, nil)
	for _, c := range []struct{ command, want string }{
		// The host names its files relative to its folder (admin.PluginView).
		{"echo", `serves no command "echo": plugin echo is disabled by its operator file echo.json ("enabled": false)`},
		{"counter", `serves no command "counter": plugin counter did not load: `},
		{"nosuch", `serves no command "nosuch"; it serves: fail`},
	} {
		out, errOut, code := clitest.Run(t, "invoke", c.command, "--broker", "mqtt://"+addr, "--executor", "cli-host")
		if code != base.ExitNoCommand || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("invoke %s: stdout %q, stderr %q, exit %d; want exit %d and %q", c.command, out, errOut, code, base.ExitNoCommand, c.want)
		}
	}
}
