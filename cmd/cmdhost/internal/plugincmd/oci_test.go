package plugincmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/oci/ocitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// TestPushInstallOCI: plugin push puts a module into a real registry with
// basic auth and prints its pinned reference; plugin install oci://… by
// tag sends it to a running host (served, its verdict printed), and by
// digest into a plugins folder; without credentials the registry's
// refusal is the error; a module the host would refuse is not pushed.
func TestPushInstallOCI(t *testing.T) {
	reg := ocitest.Start(t)
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, []byte("oci-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	addr, _ := clitest.StartServeIn(t, dir, nil, "--admin-token-file", tokFile)
	broker := "mqtt://" + addr
	creds := []string{"--registry-user", reg.User, "--registry-password-file", reg.PasswordFile, "--plain-http"}
	ref := reg.Host + "/plugins/greet:1.0"

	out, errOut, code := clitest.Run(t, append([]string{"plugin", "push", filepath.Join(clitest.Plugins, "wat-echo.wasm"), ref}, creds...)...)
	pinned := regexp.MustCompile(`pinned +(oci://\S+@sha256:[0-9a-f]{64})`).FindStringSubmatch(out)
	if code != 0 || pinned == nil {
		t.Fatalf("push: %q %q %d", out, errOut, code)
	}
	out, errOut, code = clitest.Run(t, append([]string{"plugin", "install", "oci://" + ref, "--broker", broker, "--executor", "cli-host", "--token-file", tokFile}, creds...)...)
	if code != 0 || !strings.Contains(out, "host cli-host: served greet (sha256 ") || !strings.Contains(errOut, "pulled oci://"+ref) {
		t.Fatalf("install oci:// on a host: %q %q %d", out, errOut, code)
	}
	if _, err := os.Stat(filepath.Join(dir, "greet.wasm")); err != nil {
		t.Fatalf("the host's folder: %v", err)
	}
	local := t.TempDir()
	out, errOut, code = clitest.Run(t, append([]string{"plugin", "install", pinned[1], "--plugins", local, "--name", "hello", "--wait", "0"}, creds...)...)
	if code != 0 || !strings.Contains(out, "installed ") {
		t.Fatalf("install of the pinned reference into a folder: %q %q %d", out, errOut, code)
	}
	if b, err := os.ReadFile(filepath.Join(local, "hello.wasm")); err != nil || len(b) == 0 {
		t.Fatalf("hello.wasm: %v", err)
	}
	// The host pulls only from a registry it is told to (--pull-from);
	// this one is not.
	out, errOut, code = clitest.Run(t, "plugin", "install", "oci://"+ref, "--host-pulls", "--name", "pulled", "--broker", broker, "--executor", "cli-host", "--token-file", tokFile)
	if code != 1 || !strings.Contains(out, "does not pull from registries") {
		t.Errorf("--host-pulls to a host that pulls nothing: %q %q %d", out, errOut, code)
	}
	out, errOut, code = clitest.Run(t, "plugin", "install", "oci://"+ref, "--plugins", local, "--plain-http", "--wait", "0")
	if code != 1 || !strings.Contains(errOut, "the registry asks for credentials") {
		t.Errorf("install without credentials: %q %q %d", out, errOut, code)
	}
	out, errOut, code = clitest.Run(t, append([]string{"plugin", "push", filepath.Join("..", "..", "..", "..", "testdata", "plugins-bad", "bad-nocmds.wasm"), reg.Host + "/plugins/bad:1"}, creds...)...)
	if code != 1 || !strings.Contains(errOut, "not pushed") {
		t.Errorf("push of a module the host refuses: %q %q %d", out, errOut, code)
	}
}

// TestHostPulls: with --pull-from and its registry credentials, a host
// pulls the module an install names by reference itself (the client has
// no credentials) with the signature the artifact carries: a host with
// --trust serves the signed module, refuses one pushed unsigned, and
// refuses a reference to a registry it does not pull from.
func TestHostPulls(t *testing.T) {
	reg := ocitest.Start(t)
	tmp := t.TempDir()
	creds := []string{"--registry-user", reg.User, "--registry-password-file", reg.PasswordFile, "--plain-http"}
	key := filepath.Join(tmp, "k.pem")
	if out, errOut, code := clitest.Run(t, "plugin", "keygen", "--out", key); code != 0 {
		t.Fatalf("keygen: %q %q %d", out, errOut, code)
	}
	signed := filepath.Join(tmp, "greet.wasm")
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "wat-echo.wasm"), tmp, "greet.wasm")
	if out, errOut, code := clitest.Run(t, "plugin", "sign", signed, "--key", key); code != 0 {
		t.Fatalf("sign: %q %q %d", out, errOut, code)
	}
	ref, unsigned := reg.Host+"/plugins/greet:2.0", reg.Host+"/plugins/greet:unsigned"
	if out, errOut, code := clitest.Run(t, append([]string{"plugin", "push", signed, ref}, creds...)...); code != 0 || !strings.Contains(out, "with its signature") {
		t.Fatalf("push signed: %q %q %d", out, errOut, code)
	}
	if out, errOut, code := clitest.Run(t, append([]string{"plugin", "push", filepath.Join(clitest.Plugins, "wat-echo.wasm"), unsigned}, creds...)...); code != 0 {
		t.Fatalf("push unsigned: %q %q %d", out, errOut, code)
	}
	tokFile := filepath.Join(tmp, "token")
	if err := os.WriteFile(tokFile, []byte("pull-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	addr, _ := clitest.StartServeIn(t, dir, nil, append([]string{"--admin-token-file", tokFile, "--pull-from", reg.Host, "--trust", key + ".pub"}, creds...)...)
	host := []string{"--broker", "mqtt://" + addr, "--executor", "cli-host", "--token-file", tokFile, "--host-pulls"}
	out, errOut, code := clitest.Run(t, append([]string{"plugin", "install", "oci://" + unsigned, "--name", "greet"}, host...)...)
	if code != 1 || !strings.Contains(out, "not signed") {
		t.Errorf("install of an unsigned artifact on a host with --trust: %q %q %d", out, errOut, code)
	}
	out, errOut, code = clitest.Run(t, append([]string{"plugin", "install", "oci://" + ref}, host...)...)
	if code != 0 || !strings.Contains(out, "host cli-host: served greet") {
		t.Fatalf("install the host pulls: %q %q %d", out, errOut, code)
	}
	for _, f := range []string{"greet.wasm", "greet.wasm.sig"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	out, errOut, code = clitest.Run(t, append([]string{"plugin", "install", "oci://127.0.0.1:1/plugins/greet:1"}, host...)...)
	if code != 1 || !strings.Contains(out, "not one this host pulls from") {
		t.Errorf("a registry the host does not pull from: %q %q %d", out, errOut, code)
	}
}
