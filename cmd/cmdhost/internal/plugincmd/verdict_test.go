package plugincmd

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// hostView returns the running host's view of plugin name (plugin list
// --json), or false when it lists none.
func hostView(t *testing.T, broker, name string) (admin.PluginView, bool) {
	t.Helper()
	out, errOut, code := clitest.Run(t, "plugin", "list", "--json", "--broker", broker, "--executor", "cli-host")
	var views []admin.PluginView
	if code != 0 || json.Unmarshal([]byte(out), &views) != nil {
		t.Fatalf("plugin list --json: %q %q %d", out, errOut, code)
	}
	for _, v := range views {
		if v.Name == name {
			return v, true
		}
	}
	return admin.PluginView{}, false
}

// untilView asks the host for plugin name's view until cond holds.
func untilView(t *testing.T, broker, name, what string, cond func(admin.PluginView) bool) admin.PluginView {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		v, ok := hostView(t, broker, name)
		if ok && cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("the host never showed %s %s: %+v", name, what, v)
		}
	}
}

// plugin install reports the host's verdict rather than promise one
// (issue 27, item 1: "installed … served within a second", exit 0, for a
// module the host refused): a command another plugin of the folder serves
// refuses it before anything is copied, naming that plugin and the fix;
// with a host to ask it waits until the host serves the new digest, or
// says why the host refused it, exit 1. And a new version the host
// refused is served once the command it wanted is freed (item 2).
func TestPluginInstallReportsTheHostsVerdict(t *testing.T) {
	dir := t.TempDir()
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "counter.wasm"), dir, "a.wasm") // a serves counter
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "echo.wasm"), dir, "b.wasm")    // b serves echo
	addr, _ := clitest.StartServeIn(t, dir, nil)
	broker := "mqtt://" + addr
	hostArgs := []string{"--broker", broker, "--executor", "cli-host"}
	clitest.UntilAnswer(t, broker, "echo", "hi", time.Minute)

	// Refused before copying: b serves echo.
	out, errOut, code := clitest.Run(t, append([]string{"plugin", "install", filepath.Join(clitest.Plugins, "echo.wasm"), "--plugins", dir, "--name", "c"}, hostArgs...)...)
	b := filepath.Join(dir, "b.wasm")
	want := "not installed: command echo is already served by plugin b (" + b + "): a host serving " + dir +
		" would refuse c; rename the command in c, or take b out first (cmdhost plugin remove b, or delete " + b + ")"
	if code != base.ExitFailed || !strings.Contains(errOut, want) || strings.Contains(out, "installed") {
		t.Errorf("install of a module whose command b serves: exit %d, %q %q; want 1 and %q", code, out, errOut, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.wasm")); err == nil {
		t.Errorf("the refused module was copied into the folder")
	}

	// Served: install says so once the host serves the new digest.
	out, errOut, code = clitest.Run(t, append([]string{"plugin", "install", filepath.Join(clitest.Plugins, "wat-echo.wasm"), "--plugins", dir}, hostArgs...)...)
	if code != 0 || !strings.Contains(out, "installed "+filepath.Join(clitest.Plugins, "wat-echo.wasm")+" as "+filepath.Join(dir, "wat-echo.wasm")) ||
		!strings.Contains(out, "served by host cli-host (seen ") || strings.Contains(out+errOut, "within a second") {
		t.Fatalf("install of a module the host serves: exit %d, %q %q", code, out, errOut)
	}
	if v, _ := hostView(t, broker, "wat-echo"); v.State != "serving" {
		t.Errorf("install said served, the host shows %+v", v)
	}

	// Refused by the host though the folder offline would serve it: a's
	// new version takes echo, which b serves on the host; offline, a sorts
	// first and would keep it. So: a copy (cp) the host refuses...
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "../plugins-alt/echo-v2.wasm"), dir, "a.wasm")
	untilView(t, broker, "a", "refusing echo-v2", func(v admin.PluginView) bool { return v.RefusedDigest != "" })
	// ...and install of the same module says what the host said.
	out, errOut, code = clitest.Run(t, append([]string{"plugin", "install", filepath.Join(clitest.Plugins, "../plugins-alt/echo-v2.wasm"), "--plugins", dir, "--name", "a"}, hostArgs...)...)
	want = "host cli-host refused it: plugin a: command echo is already served by plugin b; the new version of a is refused and the old one keeps serving"
	if code != base.ExitFailed || !strings.Contains(errOut, want) || !strings.Contains(errOut, "a.wasm stays in "+dir) || strings.Contains(out, "served by") {
		t.Errorf("install of a module the host refuses: exit %d, %q %q; want 1 and %q", code, out, errOut, want)
	}

	// Item 2: once b goes, a's refused new version is served (it was
	// never retried: a kept counter, echo answered nobody, and plugin
	// list kept the clash error).
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	clitest.UntilAnswer(t, broker, "echo", "v2:hi", time.Minute)
	if v, _ := hostView(t, broker, "a"); v.LastError != "" || v.RefusedDigest != "" || v.State != "serving" || v.Reloads != 1 {
		t.Errorf("a after its new version was served: %+v; want serving with no error left", v)
	}

	// A host named that is not there: the file is in place, the exit says no host answered.
	_, errOut, code = clitest.Run(t, "plugin", "install", filepath.Join(clitest.Plugins, "fail.wasm"), "--plugins", dir, "--broker", broker, "--executor", "nobody")
	if code != base.ExitNoExecutor || !strings.Contains(errOut, `no answer from host "nobody"`) {
		t.Errorf("install with --executor nobody: exit %d, %q; want %d", code, errOut, base.ExitNoExecutor)
	}
	// A host serving another folder: its plugin of the same name and
	// content is not the file installed; one it does not list at all
	// exits 6 when --wait passes, saying what the host shows.
	other := t.TempDir()
	_, errOut, code = clitest.Run(t, append([]string{"plugin", "install", filepath.Join(clitest.Plugins, "fail.wasm"), "--plugins", other}, hostArgs...)...)
	if code != base.ExitFailed || !strings.Contains(errOut, "host cli-host serves plugin fail from another folder, not from "+other+": install into its folder") {
		t.Errorf("install of fail into a folder the host does not serve: exit %d, %q; want 1", code, errOut)
	}
	_, errOut, code = clitest.Run(t, append([]string{"plugin", "install", filepath.Join(clitest.Plugins, "panic.wasm"), "--plugins", other, "--wait", "1s"}, hostArgs...)...)
	if code != base.ExitTimeout || !strings.Contains(errOut, "host cli-host has neither served nor refused panic within --wait 1s: it lists no plugin panic; is "+other+" the folder it serves") {
		t.Errorf("install of panic into a folder the host does not serve: exit %d, %q; want %d", code, errOut, base.ExitTimeout)
	}
	// --wait 0: no host asked.
	out, errOut, code = clitest.Run(t, "plugin", "install", filepath.Join(clitest.Plugins, "sleep.wasm"), "--plugins", dir, "--executor", "nobody", "--wait", "0")
	if code != 0 || !strings.Contains(out, "not checked with a running host (--wait 0)") {
		t.Errorf("install --wait 0: exit %d, %q %q", code, out, errOut)
	}
}

// dev refuses what install refuses and reports the host's verdict, with
// --once's exit status (issue 27, items 1 and 10: "a running host serves
// it within a second" for a module the host refused).
func TestDevReportsTheHostsVerdict(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH")
	}
	dir := t.TempDir()
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "echo.wasm"), dir, "b.wasm")
	addr, _ := clitest.StartServeIn(t, dir, nil)
	broker := "mqtt://" + addr
	clitest.UntilAnswer(t, broker, "echo", "hi", time.Minute)

	// A project whose build copies a module: no compiler needed.
	project := func(module string) string {
		proj := filepath.Join(t.TempDir(), "proj")
		abs, err := filepath.Abs(filepath.Join(clitest.Plugins, module))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(proj, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proj, "Makefile"), []byte("proj.wasm:\n\tcp "+abs+" proj.wasm\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return proj
	}
	out, errOut, code := clitest.Run(t, "dev", project("echo.wasm"), "--plugins", dir, "--once", "--broker", broker, "--executor", "cli-host")
	if code != base.ExitFailed || !strings.Contains(out, "refused: command echo is already served by plugin b") ||
		strings.Contains(out, "installed as") {
		t.Errorf("dev --once of a module whose command b serves: exit %d, %q %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "proj.wasm")); err == nil {
		t.Errorf("dev copied the refused module into the folder")
	}
	out, errOut, code = clitest.Run(t, "dev", project("counter.wasm"), "--plugins", dir, "--once", "--broker", broker, "--executor", "cli-host")
	if code != 0 || !strings.Contains(out, "installed as "+filepath.Join(dir, "proj.wasm")+"\n") ||
		!strings.Contains(out, "served by host cli-host (seen ") || strings.Contains(out, "within a second") {
		t.Errorf("dev --once of a good module: exit %d, %q %q", code, out, errOut)
	}
}

// TestServesAnother: a host whose list names another folder is not the
// folder's host (an install without --broker or --executor then asks it
// nothing; issue 39 item 1: a `make run` host at the defaults failed the
// install into another folder).
func TestServesAnother(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	ours, theirs := admin.FolderID(dir), admin.FolderID(other)
	for _, c := range []struct {
		views []admin.PluginView
		want  bool
	}{
		{nil, false},
		{[]admin.PluginView{{Folder: ours}}, false},
		{[]admin.PluginView{{Folder: ours}, {Folder: theirs}}, true},
		{[]admin.PluginView{{}}, false}, // a host from before FolderID: cannot tell
	} {
		if got := servesAnother(c.views, dir); got != c.want {
			t.Errorf("%+v: %v, want %v", c.views, got, c.want)
		}
	}
}
