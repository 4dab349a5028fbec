package plugincmd

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clientcmd"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/testkit"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

func fileDigest(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestFleetInstall (issue 28's acceptance, through the binary, on
// mosquitto with three hosts, each its own plugins folder): hosts lists
// the three with their plugins' digests; plugin install --executor of a
// good module prints each host's verdict and each serves it; a new
// version whose command another plugin serves exits 1 with each host's
// reason while the old version keeps serving and stays in the folders;
// reload and rollback act on a list of hosts, each outcome printed.
func TestFleetInstall(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	broker := brokertest.StartMosquitto(t).String()
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, []byte("fleet-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ids := []string{"fleet-a", "fleet-b", "fleet-c"}
	dirs := map[string]string{}
	for _, id := range ids {
		dir := t.TempDir()
		testkit.InstallFile(t, filepath.Join(clitest.Plugins, "echo.wasm"), dir, "echo.wasm")
		dirs[id] = dir
		clitest.StartServeIn(t, dir, nil, "--broker", broker, "--id", id, "--admin-token-file", tokFile)
	}
	echoDigest := fileDigest(t, filepath.Join(clitest.Plugins, "echo.wasm"))
	watDigest := fileDigest(t, filepath.Join(clitest.Plugins, "wat-echo.wasm"))

	out, errOut, code := clitest.Run(t, "hosts", "--broker", broker, "--executor", "fleet-*", "--json")
	var hosts []clientcmd.HostRow
	if code != 0 || json.Unmarshal([]byte(out), &hosts) != nil || len(hosts) != 3 {
		t.Fatalf("hosts --json: %q %q %d", out, errOut, code)
	}
	for i, h := range hosts {
		if h.Executor != ids[i] || h.Version == "" || h.Started.IsZero() || len(h.Plugins) != 1 || h.Plugins[0].Digest != echoDigest {
			t.Errorf("host %d: %+v", i, h)
		}
	}
	for _, cmd := range [][]string{{"watch", "--count", "1"}, {"version"}} {
		out, errOut, code := clitest.Run(t, append(cmd, "--broker", broker, "--executor", "fleet-*")...)
		if code != base.ExitUsage || !strings.Contains(errOut, "cmdhost hosts --executor 'fleet-*'") {
			t.Errorf("%s with a pattern: %q %q %d; want exit 2 pointing to hosts", cmd[0], out, errOut, code)
		}
	}
	out, _, code = clitest.Run(t, "hosts", "--broker", broker)
	if code != 0 || !strings.Contains(out, "EXECUTOR") || strings.Count(out, "echo@"+echoDigest[:12]) != 3 {
		t.Errorf("hosts: %q %d", out, code)
	}

	install := func(file string, extra ...string) (string, string, int) {
		return clitest.Run(t, append([]string{"plugin", "install", file, "--broker", broker, "--token-file", tokFile}, extra...)...)
	}
	out, errOut, code = install(filepath.Join(clitest.Plugins, "wat-echo.wasm"), "--name", "wat", "--executor", "fleet-*")
	if code != 0 {
		t.Fatalf("install on fleet-*: %q %q %d", out, errOut, code)
	}
	for _, id := range ids {
		if !strings.Contains(out, "host "+id+": served wat (sha256 "+watDigest[:12]+"), commands wat-echo") {
			t.Errorf("install prints no verdict of %s:\n%s", id, out)
		}
		if fileDigest(t, filepath.Join(dirs[id], "wat.wasm")) != watDigest {
			t.Errorf("%s's folder does not hold the module installed", id)
		}
	}

	// A new version of wat that declares echo, which plugin echo serves.
	out, errOut, code = install(filepath.Join(clitest.Plugins, "echo.wasm"), "--name", "wat", "--executor", "fleet-a,fleet-b,fleet-c")
	if code != 1 || strings.Count(out, "refused wat") != 3 || strings.Count(out, "already served by plugin echo") != 3 {
		t.Fatalf("install of a clashing module: %q %q %d; want exit 1 and each host's reason", out, errOut, code)
	}
	for _, id := range ids {
		out, errOut, code := clitest.Run(t, "plugin", "list", "--json", "--broker", broker, "--executor", id)
		var views []admin.PluginView
		if code != 0 || json.Unmarshal([]byte(out), &views) != nil {
			t.Fatalf("plugin list %s: %q %q %d", id, out, errOut, code)
		}
		for _, v := range views {
			if v.Name == "wat" && (v.Digest != watDigest || v.State != pluginmgr.StateServing) {
				t.Errorf("%s: wat after the refused install: %+v", id, v)
			}
		}
		if fileDigest(t, filepath.Join(dirs[id], "wat.wasm")) != watDigest {
			t.Errorf("%s: the refused module replaced wat.wasm", id)
		}
	}
	out, _, code = clitest.Run(t, "invoke", "wat-echo", "-d", "still", "--broker", broker, "--executor", "fleet-b")
	if code != 0 || !strings.Contains(out, "still") {
		t.Errorf("wat-echo after the refused install: %q %d", out, code)
	}

	// A new version on one host, then rolled back there.
	v2 := filepath.Join(t.TempDir(), "wat.wasm")
	bin, err := os.ReadFile(filepath.Join(clitest.Plugins, "wat-echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v2, append(bin, 0, 4, 2, 'v', '2', 'x'), 0o644); err != nil { // a custom section: another digest
		t.Fatal(err)
	}
	v2Digest := fileDigest(t, v2)
	out, errOut, code = install(v2, "--executor", "fleet-a")
	if code != 0 || !strings.Contains(out, "host fleet-a: served wat (sha256 "+v2Digest[:12]+")") || !strings.Contains(out, "previous version "+watDigest[:12]+" kept") {
		t.Fatalf("install of v2 on fleet-a: %q %q %d", out, errOut, code)
	}
	out, errOut, code = clitest.Run(t, "plugin", "rollback", "wat", "--broker", broker, "--executor", "fleet-a", "--token-file", tokFile)
	if code != 0 || !strings.Contains(out, "host fleet-a: served wat (sha256 "+watDigest[:12]+")") {
		t.Fatalf("rollback on fleet-a: %q %q %d", out, errOut, code)
	}
	out, errOut, code = clitest.Run(t, "plugin", "rollback", "wat", "--broker", broker, "--executor", "fleet-b", "--token-file", tokFile)
	if code != 1 || !strings.Contains(out, "no previous version") {
		t.Errorf("rollback with nothing kept: %q %q %d", out, errOut, code)
	}
	out, errOut, code = clitest.Run(t, "plugin", "reload", "wat", "--broker", broker, "--executor", "fleet-b,fleet-c", "--token-file", tokFile)
	if code != 0 || strings.Count(out, "wat: reload done") != 2 {
		t.Errorf("reload on two hosts: %q %q %d", out, errOut, code)
	}
	out, errOut, code = clitest.Run(t, "plugin", "install", filepath.Join(clitest.Plugins, "wat-echo.wasm"), "--name", "wat", "--broker", broker, "--executor", "fleet-a")
	if code != 1 || !strings.Contains(out, "missing admin token") {
		t.Errorf("install without a token: %q %q %d", out, errOut, code)
	}
	out, errOut, code = install(filepath.Join(clitest.Plugins, "wat-echo.wasm"), "--name", "wat", "--executor", "nomatch-*")
	if code != base.ExitNoExecutor || !strings.Contains(errOut, "no host") {
		t.Errorf("install on a pattern no host matches: %q %q %d", out, errOut, code)
	}
}

// TestFleetShareGroup: the replicas of a share group are hosts of their
// own: hosts lists each, and plugin install --executor of the group's
// id reaches every replica, each verdict printed with the replica named.
func TestFleetShareGroup(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	broker := brokertest.StartMosquitto(t).String()
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, []byte("group-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{}
	for _, id := range []string{"rep-1", "rep-2"} {
		dirs[id] = t.TempDir()
		clitest.StartServeIn(t, dirs[id], nil, "--broker", broker, "--id", "grp", "--client-id", id, "--share", "g", "--admin-token-file", tokFile)
	}
	out, errOut, code := clitest.Run(t, "hosts", "--broker", broker, "--json")
	var hosts []clientcmd.HostRow
	if code != 0 || json.Unmarshal([]byte(out), &hosts) != nil || len(hosts) != 2 ||
		hosts[0].ClientID != "rep-1" || hosts[1].ClientID != "rep-2" || hosts[0].Share != "g" || hosts[0].Executor != "grp" {
		t.Fatalf("hosts: %q %q %d", out, errOut, code)
	}
	out, errOut, code = clitest.Run(t, "plugin", "install", filepath.Join(clitest.Plugins, "wat-echo.wasm"), "--name", "wat", "--broker", broker, "--executor", "grp", "--token-file", tokFile)
	if code != 0 {
		t.Fatalf("install on the group: %q %q %d", out, errOut, code)
	}
	for _, id := range []string{"rep-1", "rep-2"} {
		if !strings.Contains(out, "host grp, replica "+id+" (share group g): served wat") {
			t.Errorf("no verdict of replica %s:\n%s", id, out)
		}
		if _, err := os.Stat(filepath.Join(dirs[id], "wat.wasm")); err != nil {
			t.Errorf("replica %s's folder: %v", id, err)
		}
	}
}
