package plugincmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/testkit"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// TestTrustAndPin (issue 28's acceptance, through the binary): a host
// with --trust refuses an unsigned module at load (the reason in plugin
// list) and at install (the verdict, exit 1), serves one signed by the
// key trusted (keygen, sign, install); an operator file pinning another
// digest refuses the module at its reload, the old version serving on.
func TestTrustAndPin(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	tmp := t.TempDir()
	key := filepath.Join(tmp, "signing.pem")
	if out, errOut, code := clitest.Run(t, "plugin", "keygen", "--out", key); code != 0 {
		t.Fatalf("keygen: %q %q %d", out, errOut, code)
	}
	if st, err := os.Stat(key); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the private key: %v %v", st, err)
	}
	tokFile := filepath.Join(tmp, "token")
	if err := os.WriteFile(tokFile, []byte("trust-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "echo.wasm"), dir, "echo.wasm")
	addr, _ := clitest.StartServeIn(t, dir, nil, "--trust", key+".pub", "--admin-token-file", tokFile)
	host := []string{"--broker", "mqtt://" + addr, "--executor", "cli-host"}
	list := func() map[string]admin.PluginView {
		t.Helper()
		out, errOut, code := clitest.Run(t, append([]string{"plugin", "list", "--json"}, host...)...)
		var views []admin.PluginView
		if code != 0 || json.Unmarshal([]byte(out), &views) != nil {
			t.Fatalf("plugin list: %q %q %d", out, errOut, code)
		}
		byName := map[string]admin.PluginView{}
		for _, v := range views {
			byName[v.Name] = v
		}
		return byName
	}
	if v := list()["echo"]; v.State != pluginmgr.StateFailed || !strings.Contains(v.LastError, "not signed") {
		t.Errorf("unsigned echo at load: %+v", v)
	}

	greet := filepath.Join(tmp, "greet.wasm")
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "wat-echo.wasm"), tmp, "greet.wasm")
	install := func(file string) (string, string, int) {
		return clitest.Run(t, append([]string{"plugin", "install", file, "--token-file", tokFile}, host...)...)
	}
	if out, errOut, code := install(greet); code != 1 || !strings.Contains(out, "not signed") {
		t.Errorf("install of an unsigned module: %q %q %d", out, errOut, code)
	}
	if out, errOut, code := clitest.Run(t, "plugin", "sign", greet, "--key", key); code != 0 || !strings.Contains(out, greet+".sig") {
		t.Fatalf("sign: %q %q %d", out, errOut, code)
	}
	if out, errOut, code := install(greet); code != 0 || !strings.Contains(out, "served greet") || !strings.Contains(errOut, "with its signature") {
		t.Fatalf("install of a signed module: %q %q %d", out, errOut, code)
	}
	if _, err := os.Stat(filepath.Join(dir, "greet.wasm.sig")); err != nil {
		t.Fatalf("the signature beside the module in the host's folder: %v", err)
	}
	served := list()["greet"]
	if out, errOut, code := clitest.Run(t, append([]string{"plugin", "reload", "greet", "--token-file", tokFile}, host...)...); code != 0 {
		t.Errorf("reload of the signed module: %q %q %d", out, errOut, code)
	}

	// Another digest pinned: the operator file's change reloads greet,
	// which is refused; the version serving goes on; a reload asked for
	// is refused too.
	pin := `{"digest": "sha256:` + strings.Repeat("ab", 32) + `"}`
	if err := os.WriteFile(filepath.Join(dir, "greet.json"), []byte(pin), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "greet refused for its pin", func() bool {
		v := list()["greet"]
		return strings.Contains(v.LastError, "pins")
	})
	if v := list()["greet"]; v.State != pluginmgr.StateServing || v.Digest != served.Digest {
		t.Errorf("greet after the pin: %+v, want the old version serving", v)
	}
	if out, errOut, code := clitest.Run(t, append([]string{"plugin", "reload", "greet", "--token-file", tokFile}, host...)...); code != 1 || !strings.Contains(out+errOut, "pins") {
		t.Errorf("reload against the pin: %q %q %d", out, errOut, code)
	}
	if out, errOut, code := clitest.Run(t, append([]string{"plugin", "remove", "greet", "--token-file", tokFile}, host...)...); code != 0 {
		t.Errorf("remove: %q %q %d", out, errOut, code)
	}
	for _, f := range []string{"greet.wasm", "greet.wasm.sig"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s after the remove: %v", f, err)
		}
	}
	if out, errOut, code := clitest.Run(t, "serve", "--plugins", dir, "--trust", greet); code != base.ExitUsage || !strings.Contains(errOut, "--trust") {
		t.Errorf("serve --trust of a file that is no key: %q %q %d", out, errOut, code)
	}
}
